// Benchmark: the cost of one §9.4 redaction call on the daemon's hook path,
// against the SHA-256 content digest the same path already computes for the
// same content (`*_digest`). Prints µs per call and the ratio; asserts nothing.
//
//   npm run build && node dist/test/bench/redact-cost.js
//
// Run it on two commits to compare a change (the inputs are fixed and
// deterministic, so the figures are comparable).
import { contentDigest } from '../../src/capture/canonical-json.js';
import { redactText, redactValue } from '../../src/capture/redact.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);

/** Deterministic pseudo-random text (xorshift), so every run sees the same bytes. */
function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
}

const WORDS =
  'the build failed at step npm run test because src/index.ts line 42 expected string got undefined retry with --verbose and check logs for ERROR WARN info debug docker compose up -d service api port 8080 ready'.split(
    ' ',
  );

function prose(bytes: number, seed: number): string {
  const r = prng(seed);
  let out = '';
  while (out.length < bytes) {
    out += WORDS[Math.floor(r() * WORDS.length)]!;
    out += r() < 0.08 ? '\n' : ' ';
  }
  return out.slice(0, bytes);
}

const approval = 'mysql -u root -h db.internal -e "select 1" && curl -s http://localhost:8080/health';
const withSecrets =
  prose(1800, 7) +
  '\nexport GITHUB_TOKEN=ghp_' +
  'A1b2C3d4E5f6G7h8I9j0'.repeat(2).slice(0, 36) +
  '\ncurl -H "Authorization: Bearer abc.def.ghi" https://api.test/x' +
  '\npostgres://app:pw-' +
  'x9'.repeat(8) +
  '@db.internal:5432/app\n' +
  prose(1800, 8);

const inputs: ReadonlyArray<{ name: string; value: unknown }> = [
  { name: 'approval command (84 B)', value: approval },
  { name: 'tool result, clean (4 KB)', value: prose(4096, 1) },
  { name: 'tool result with 3 secrets (3.8 KB)', value: withSecrets },
  { name: 'tool result, clean (256 KB)', value: prose(256 * 1024, 2) },
  {
    name: 'tool args object, 200 short strings',
    value: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, prose(40, 100 + i)])),
  },
];

function timePerCall(fn: () => unknown, minMs = 40): number {
  // calibrate the batch so one round takes at least minMs
  let n = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    const dt = performance.now() - t0;
    if (dt >= minMs) return (dt / n) * 1000;
    n *= 2;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const fmt = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);

function main(): void {
  console.log(`redaction cost per call (median of ${ROUNDS} interleaved rounds), node ${process.version}`);
  console.log('| input | redact | digest (baseline) | ratio |');
  console.log('| --- | --- | --- | --- |');
  for (const { name, value } of inputs) {
    const redact = typeof value === 'string' ? () => redactText(value, { home: '/home/dev' }) : () => redactValue(value, { home: '/home/dev' });
    const digest = () => contentDigest(value);
    redact();
    digest();
    const r: number[] = [];
    const d: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      r.push(timePerCall(redact));
      d.push(timePerCall(digest));
    }
    const rm = median(r);
    const dm = median(d);
    console.log(`| ${name} | ${fmt(rm)} | ${fmt(dm)} | ${(rm / dm).toFixed(2)}x |`);
  }
}

main();
