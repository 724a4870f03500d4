import { createRequire } from 'node:module';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type * as Ws from 'ws';

/**
 * Libraries the hook path never needs, loaded on first use rather than at
 * start: together they cost some 100 ms of module loading, and a restart is
 * budgeted at 1 s (ajv: the first event ingested; ws: the first WebSocket,
 * or the relay link). Both are CommonJS, so a synchronous require keeps the
 * callers synchronous.
 */
const require = createRequire(import.meta.url);

let ajv: { Ajv2020: typeof Ajv2020; addFormats: (a: Ajv2020) => void } | undefined;
export function loadAjv(): NonNullable<typeof ajv> {
  if (!ajv) {
    const core = require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 };
    const formats = require('ajv-formats') as { default: (a: Ajv2020) => void };
    ajv = { Ajv2020: core.Ajv2020, addFormats: formats.default };
  }
  return ajv;
}

let ws: typeof Ws | undefined;
export function loadWs(): typeof Ws {
  return (ws ??= require('ws') as typeof Ws);
}
