// A separate process that asks a daemon for GET /healthz every 10 ms and keeps
// the slowest answer: the longest time another hook would have waited. Run as
// `node dist/test/support/stall-probe.js` with PROBE_SOCKET or PROBE_URL; each
// line on stdin ("report") is answered with one JSON line {max_ms, n, failed}
// covering the time since the previous report. Its own process, so the test's
// work (building and sending 60 MB bodies) never shows up as a daemon stall.
import { request } from 'node:http';
import { createInterface } from 'node:readline';

const socketPath = process.env.PROBE_SOCKET;
const url = process.env.PROBE_URL;
let max = 0;
let n = 0;
let failed = 0;

function once(): void {
  const t0 = performance.now();
  const done = (ok: boolean) => {
    const ms = performance.now() - t0;
    if (ok) {
      max = Math.max(max, ms);
      n++;
    } else failed++;
    setTimeout(once, 10);
  };
  const opts = socketPath ? { socketPath, path: '/healthz', headers: { host: 'localhost' } } : new URL('/healthz', url);
  const req = request(opts, (res) => {
    res.resume();
    res.on('end', () => done(true));
    res.on('error', () => done(false));
  });
  req.on('error', () => done(false));
  req.end();
}

once();
createInterface({ input: process.stdin }).on('line', () => {
  process.stdout.write(`${JSON.stringify({ max_ms: Math.round(max), n, failed })}\n`);
  max = 0;
  n = 0;
  failed = 0;
});
process.stdin.on('end', () => process.exit(0));
