// Placeholder of the ui-server branch: the real page replaces it at merge.
export {};
