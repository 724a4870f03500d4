/**
 * The daemon's own diagnostics: one JSON line per message on stderr. Callers
 * pass structural facts only (codes, counts, hook names); nothing here ever
 * receives payload content, so nothing above the capture ceiling can leak.
 */
export type LogFields = Record<string, string | number | boolean | undefined>;

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
}

export function stderrLogger(debug = false, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const emit =
    (level: string) =>
    (msg: string, fields: LogFields = {}) => {
      write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
    };
  return { info: emit('info'), warn: emit('warn'), error: emit('error'), debug: debug ? emit('debug') : () => undefined };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };
