// `npm run bench`: every suite in test/bench/suites/, one after another, each figure a ratio to a yardstick
// measured in the same run, each ratio checked against its budget.
//
//   node dist/test/bench/run.js                 full run: docs/bench/latest.json + the table in docs/performance.md
//   node dist/test/bench/run.js --short         CI's run: smaller, shorter; JSON to a temp file (or --out);
//                                               exits 1 only when a ratio breaks its budget WIDELY (below) or a suite fails
//   node dist/test/bench/run.js --only restart  one suite (repeat or comma-separate for more); writes no tracked file
//   --out FILE                                  the JSON there instead
//
// Suites are found by listing the compiled directory (dist/test/bench/suites/*.js): a module whose export is a
// Suite (test/bench/bench-types.ts) is one. Order: SUITE_ORDER first, then any other by name.
import { execFileSync, execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { BenchContext, Budget, Figure, Suite } from './bench-types.js';
import { ROOT } from '../support/paths.js';
import { renderReadmeBlock, replaceBetweenMarkers, verdictOf, type SuiteResult, type Verdict } from './support/report.js';

const SUITE_ORDER = [
  'shim-start',
  'daemon-throughput',
  'memory',
  'restart',
  'export-load',
  'hook-profile',
  'redact-cost',
  'bounded-work',
  'hermes-turn',
  'model-call-hook',
  'plugin-callback',
  'stalled-subscriber',
  'stalled-daemon',
  'ui-latency',
];
const SUITES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'suites');

interface Args {
  short: boolean;
  only: string[];
  out?: string;
}

function parseArgs(argv: readonly string[]): Args {
  const a: Args = { short: false, only: [] };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (x === '--short') a.short = true;
    else if (x === '--only') a.only.push(...(argv[++i] ?? '').split(',').filter(Boolean));
    else if (x === '--out') a.out = argv[++i];
    else if (x === '--help' || x === '-h') {
      console.log('usage: node dist/test/bench/run.js [--short] [--only SUITE[,SUITE]] [--out FILE]');
      process.exit(0);
    } else throw new Error(`unknown argument ${x}`);
  }
  return a;
}

function isSuite(v: unknown): v is Suite {
  return typeof v === 'object' && v !== null && typeof (v as Suite).name === 'string' && typeof (v as Suite).run === 'function';
}

/** Every Suite exported by the compiled modules of the suites directory. */
async function discover(): Promise<Suite[]> {
  const files = readdirSync(SUITES_DIR).filter((f) => f.endsWith('.js'));
  const found: Suite[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(path.join(SUITES_DIR, f)).href)) as Record<string, unknown>;
    for (const v of Object.values(mod)) if (isSuite(v) && !found.some((s) => s.name === v.name)) found.push(v);
  }
  const rank = (s: Suite) => (SUITE_ORDER.includes(s.name) ? SUITE_ORDER.indexOf(s.name) : SUITE_ORDER.length);
  return found.sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}

const run = promisify(execFile);

function makeContext(short: boolean, tmpDirs: string[]): BenchContext {
  const provisioned = new Map<string, Promise<ReadonlyMap<string, string>>>();
  const t0 = Date.now();
  return {
    short,
    log: (msg) => process.stderr.write(`[bench +${Math.round((Date.now() - t0) / 1000)}s] ${msg}\n`),
    tmp: (prefix) => {
      const d = mkdtempSync(path.join(os.tmpdir(), `hermes-aep-bench-${prefix}`));
      tmpDirs.push(d);
      return d;
    },
    provision: (script, env = {}) => {
      const key = `${script} ${JSON.stringify(env)}`;
      let p = provisioned.get(key);
      if (!p) {
        p = run('bash', [path.join(ROOT, 'scripts', script)], { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 45 * 60_000 }).then(
          ({ stdout }) =>
            new Map(
              stdout.split('\n').flatMap((l) => {
                const m = /^([A-Z][A-Z0-9_]*)=(.+)$/.exec(l.trim());
                return m ? [[m[1]!, m[2]!] as const] : [];
              }),
            ),
        );
        provisioned.set(key, p);
      }
      return p;
    },
  };
}

function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  let commit = '';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    /* not a checkout */
  }
  return {
    host: os.hostname(),
    cpus: `${cpus.length} × ${cpus[0]?.model ?? 'unknown'}`,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.platform()} ${os.release()}`,
    node: process.version,
    node_extra_ca_certs: Boolean(process.env.NODE_EXTRA_CA_CERTS),
    commit,
  };
}

const fmtBudget = (b?: Budget) => (!b ? '' : 'max' in b ? `≤ ${b.max}` : `≥ ${b.min}`);
const fmtMeasure = (m?: { value: number; unit: string }) => (m ? `${m.value} ${m.unit}` : '');

function printTable(results: readonly SuiteResult[], short: boolean): void {
  const rows = [['figure', 'value', 'yardstick', 'ratio', 'budget', 'verdict']];
  for (const r of results) {
    if (r.error) rows.push([`${r.name}: FAILED`, r.error.slice(0, 80), '', '', '', 'error']);
    for (const f of r.figures) {
      rows.push([f.id, fmtMeasure(f.measure), fmtMeasure(f.yardstick?.measure), String(f.ratio), fmtBudget(f.budget), verdictOf(f, short)]);
    }
  }
  const w = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((x, c) => x.padEnd(w[c]!)).join('  '));
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const all = await discover();
  const unknown = args.only.filter((n) => !all.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`no such suite: ${unknown.join(', ')} (have: ${all.map((s) => s.name).join(', ')})`);
  const suites = args.only.length > 0 ? all.filter((s) => args.only.includes(s.name)) : all;
  const tmpDirs: string[] = [];
  const ctx = makeContext(args.short, tmpDirs);
  const startedAt = new Date();
  const loadBefore = os.loadavg().map((x) => Number(x.toFixed(2)));
  const results: SuiteResult[] = [];
  try {
    for (const s of suites) {
      ctx.log(`suite ${s.name}: start (load ${os.loadavg()[0]!.toFixed(2)})`);
      const t0 = performance.now();
      try {
        const figures = await s.run(ctx);
        results.push({ name: s.name, ...(s.about ? { about: s.about } : {}), seconds: Math.round((performance.now() - t0) / 1000), figures: [...figures] });
      } catch (err) {
        const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
        ctx.log(`suite ${s.name}: FAILED ${msg}`);
        results.push({ name: s.name, seconds: Math.round((performance.now() - t0) / 1000), figures: [], error: msg.split('\n')[0]! });
      }
    }
  } finally {
    for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
  }
  const verdicts: Verdict[] = results.flatMap((r) => (r.error ? ['error' as const] : r.figures.map((f: Figure) => verdictOf(f, args.short))));
  const full = !args.short && args.only.length === 0;
  const doc = {
    run: args.short ? 'short' : 'full',
    ...(args.only.length > 0 ? { only: args.only } : {}),
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    machine: machine(),
    load_average: { before: loadBefore, after: os.loadavg().map((x) => Number(x.toFixed(2))) },
    wide_margin:
      'a ratio breaks its budget widely when it is over twice a max budget (any excess for max 0) or under half a min budget; the short run fails only then',
    suites: results,
  };
  const out = args.out ?? (full ? path.join(ROOT, 'docs', 'bench', 'latest.json') : path.join(os.tmpdir(), `hermes-aep-bench-${process.pid}.json`));
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
  printTable(results, args.short);
  console.log(`\nJSON: ${out}`);
  if (full) {
    const page = path.join(ROOT, 'docs', 'performance.md');
    writeFileSync(page, replaceBetweenMarkers(readFileSync(page, 'utf8'), renderReadmeBlock(doc)));
    console.log(`docs/performance.md: Performance table rewritten`);
  }
  const broken = verdicts.filter((v) => v === 'error' || (args.short && v === 'FAIL (wide)'));
  if (broken.length > 0) {
    console.error(`bench: ${broken.length} figure(s) failed${args.short ? ' widely' : ''} or a suite errored`);
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
