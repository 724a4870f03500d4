/** AEP-0001 event severities, lowest first. */
export type Severity = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical';
