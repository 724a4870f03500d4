import { pino, type DestinationStream, type Logger as Pino } from 'pino';

/**
 * The daemon's diagnostics (never the AEP history): one JSON line per message
 * on stderr, `{"level":"info","time":"…","msg":"…", …fields}`, written by
 * pino, the same instance fastify logs through. Callers pass structural facts
 * only (codes, counts, hook names); pino's redaction is the second line of
 * defence: a field shaped like content is replaced before the line is built.
 */
export type LogFields = Record<string, string | number | boolean | undefined>;

/** The call-site interface every module logs through (`log.info(msg, fields)`). */
export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  /** false when debug lines are dropped anyway: callers skip building their fields (absent = unknown, build them) */
  readonly debugEnabled?: boolean;
}

/** Field names that would carry content (hook payloads, tokens, file paths from a tool call), at the top level and one level down. */
const CONTENT_KEYS = [
  'prompt',
  'prompts',
  'messages',
  'content',
  'command',
  'cmd',
  'args',
  'arguments',
  'tool_input',
  'result',
  'results',
  'output',
  'answer',
  'response',
  'body',
  'path',
  'file_path',
  'cwd',
  'token',
  'authorization',
  'cookie',
];
export const REDACT_PATHS = [
  ...CONTENT_KEYS,
  ...CONTENT_KEYS.map((k) => `*.${k}`),
  // fastify's request objects: headers are where a hook token travels
  'req.headers.authorization',
  'req.headers.cookie',
];
export const REDACTED = '[redacted]';

const PINO = Symbol('hermes-aep.pino');
type PinoBacked = Logger & { readonly [PINO]: Pino };

/** The pino instance behind a diagnostics logger (fastify's `loggerInstance`), when it has one. */
export function pinoOf(log: Logger): Pino | undefined {
  return (log as Partial<PinoBacked>)[PINO];
}

/** Diagnostics on `dest` (stderr, written synchronously so the last line before an exit is never lost); debug lines with AEP_DEBUG only. */
export function createDiagnostics(debug = false, dest: DestinationStream = pino.destination({ fd: 2, sync: true })): Logger {
  const p = pino(
    {
      level: debug ? 'debug' : 'info',
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
    },
    dest,
  );
  const at =
    (level: 'info' | 'warn' | 'error' | 'debug') =>
    (msg: string, fields: LogFields = {}) =>
      p[level](fields, msg);
  const log: PinoBacked = { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), debugEnabled: debug, [PINO]: p };
  return log;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {}, debugEnabled: false };
