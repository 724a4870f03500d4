import type { LogFields, Logger } from '../../../src/core/logger.js';

/** A diagnostics logger that keeps its lines, for tests of what a sink says and how often. */
export function recordingLog() {
  const lines: ({ level: string; msg: string } & LogFields)[] = [];
  const at =
    (level: string) =>
    (msg: string, f: LogFields = {}) =>
      void lines.push({ level, msg, ...f });
  const log: Logger = { info: at('info'), warn: at('warn'), error: at('error'), debug() {} };
  return { log, lines };
}
