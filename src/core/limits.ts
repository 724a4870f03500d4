/**
 * Bounds every input path shares (the hook route, the spool, the stream's ingest): one place, imported by each,
 * so no route reaches into another's module for them.
 */

/** JSON nesting levels a body may have (objects and arrays); deeper is refused before anything walks it. */
export const MAX_DEPTH = 64;
