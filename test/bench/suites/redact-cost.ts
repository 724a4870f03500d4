// The cost of one §9.4 redaction call on the daemon's hook path, against the SHA-256 content digest the same path
// already computes for the same content (`*_digest`), rounds interleaved. Not budgeted: the figure to watch when the
// redaction rules change (the inputs are fixed and deterministic, so runs on two commits compare).
import { contentDigest } from '../../../src/capture/canonical-json.js';
import { redactText, redactValue } from '../../../src/capture/redact.js';
import type { Figure, Suite } from '../bench-types.js';
import { median, round } from '../support/stats.js';

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

const inputs: ReadonlyArray<{ id: string; name: string; value: unknown }> = [
  { id: 'approval_command', name: 'approval command (84 B)', value: approval },
  { id: 'tool_result_4k', name: 'tool result, clean (4 KB)', value: prose(4096, 1) },
  { id: 'tool_result_secrets', name: 'tool result with 3 secrets (3.8 KB)', value: withSecrets },
  { id: 'tool_result_256k', name: 'tool result, clean (256 KB)', value: prose(256 * 1024, 2) },
  {
    id: 'tool_args_200',
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

export const suite: Suite = {
  name: 'redact-cost',
  about: 'one redaction call vs the SHA-256 content digest of the same input, µs per call, rounds interleaved',
  async run(ctx) {
    const rounds = ctx.short ? 5 : 15;
    const figures: Figure[] = [];
    for (const { id, name, value } of inputs) {
      const redact = typeof value === 'string' ? () => redactText(value, { home: '/home/dev' }) : () => redactValue(value, { home: '/home/dev' });
      const digest = () => contentDigest(value);
      redact();
      digest();
      const r: number[] = [];
      const d: number[] = [];
      for (let i = 0; i < rounds; i++) {
        r.push(timePerCall(redact));
        d.push(timePerCall(digest));
      }
      const rm = median(r);
      const dm = median(d);
      figures.push({
        id: `redact.${id}`,
        label: `redaction, ${name}`,
        measure: { value: round(rm, 1), unit: 'µs', n: rounds },
        yardstick: { label: 'SHA-256 content digest of the same input', measure: { value: round(dm, 1), unit: 'µs', n: rounds } },
        ratio: round(rm / dm, 2),
      });
      await new Promise((res) => setImmediate(res));
    }
    ctx.log(`redact-cost: ${inputs.length} inputs × ${rounds} rounds`);
    return figures;
  },
};
