import path from 'node:path';
import { loadLogsConfig, loadMetricsConfig, loadOtelConfig, type LogsConfig, type MetricsConfig, type OtelConfig } from '../otel/index.js';
import { loadConfig, type DaemonConfig } from '../config/config.js';
import { checkDirectories } from '../config/paths.js';
import { ConfigError, type ConfigProblem } from '../config/read-env.js';
import { readPriceFile, type PriceOverrides } from '../usage/price-file.js';

/**
 * Every setting the daemon reads, composed here in the composition root: the
 * daemon's own (src/config/), the three OpenTelemetry signals' (src/otel/,
 * each read through config's env reader, read-env.ts) and the price file.
 * config/ sits below otel/ and never imports it; what joins them is this file.
 */
export interface Settings {
  readonly config: DaemonConfig;
  readonly otel: OtelConfig;
  /** the AEP log bridge (OTEL_LOGS_EXPORTER and friends); absent: off */
  readonly logs?: LogsConfig;
  /** the metrics signal (OTEL_METRICS_EXPORTER and friends); absent: off */
  readonly metrics?: MetricsConfig;
  /** AEP_PRICES_FILE read and checked (absent when unset): the pricer's overrides */
  readonly prices?: PriceOverrides;
}

/** The directories a daemon with these settings creates or writes in, by the variable that decides each. */
export function daemonDirectories({ config, otel }: Settings): [variable: string, dir: string][] {
  const dirs: [string, string | undefined][] = [
    ['AEP_STATE_DIR', config.stateDir],
    ['AEP_LOG_DIR', config.historyDir],
    ['AEP_SOCKET', config.socket && path.dirname(config.socket)],
    ['AEP_TOKEN_FILE', config.port !== undefined ? path.dirname(config.tokenFile) : undefined],
    ['AEP_RECORD_DIR', config.recordDir],
    ['AEP_OTEL_FILE', otel.exporter === 'file' ? path.dirname(otel.file) : undefined],
  ];
  return dirs.filter((d): d is [string, string] => d[1] !== undefined);
}

/** Every setting the daemon reads, checked at once: one ConfigError names every bad variable, the daemon's and the mirror's. */
export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const problems: ConfigProblem[] = [];
  const named = (variable: string) => problems.some((q) => q.variable === variable);
  /**
   * One loader, reporting every bad variable it reads: a schema stops at a bad field before its cross-checks
   * run, so the loader is asked again without the variables already named (at most once per variable), and
   * a variable several signals read (the generic OTLP ones) is named once.
   */
  const attempt = <T>(load: (e: NodeJS.ProcessEnv) => T): T | undefined => {
    let e = env;
    for (;;) {
      try {
        const value = load(e);
        return e === env ? value : undefined;
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        const fresh = err.problems.filter((p) => !named(p.variable));
        problems.push(...fresh);
        const again = Object.fromEntries(Object.entries(e).filter(([k]) => !err.problems.some((p) => p.variable === k)));
        if (Object.keys(again).length === Object.keys(e).length) return undefined;
        e = again;
      }
    }
  };
  const config = attempt((e) => loadConfig(e));
  // the span file's default lives under the log dir; with a bad AEP_LOG_DIR the mirror's own settings are still checked
  const otel = attempt((e) => loadOtelConfig(config?.historyDir ?? path.resolve('.'), e));
  const logs = attempt((e) => loadLogsConfig(e));
  const metrics = attempt((e) => loadMetricsConfig(e));
  // the price file is read here, once, so a bad one stops the start with the other bad settings
  const file = config?.pricesFile;
  const prices = file !== undefined ? attempt(() => readPriceFile(file)) : undefined;
  if (!config || !otel || !logs || !metrics || (file !== undefined && !prices)) throw new ConfigError(problems);
  return { config, otel, logs, metrics, ...(prices ? { prices } : {}) };
}

/** The settings, then the directories they name (bounded in time), before anything is created there. */
export async function loadSettings(env: NodeJS.ProcessEnv = process.env): Promise<Settings> {
  const settings = readSettings(env);
  await checkDirectories(daemonDirectories(settings));
  return settings;
}
