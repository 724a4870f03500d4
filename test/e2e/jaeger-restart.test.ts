import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runShim, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';
import { scriptedSession } from '../support/scripted-session.js';
import {
  JAEGER_COMPOSE_CONFIG,
  startJaeger,
  stopAllServices,
  waitForTraces,
  type FoundSpan,
  type JaegerService,
  type LegacyTrace,
} from './support/services.js';

/**
 * Traces survive a Jaeger restart: the real Jaeger binary runs the compose
 * config deploy/jaeger/jaeger.yaml unchanged (Badger on a temp directory,
 * free ports), the compiled daemon exports a session driven through the real
 * shim straight to Jaeger's OTLP/HTTP port, and after Jaeger is stopped
 * (SIGTERM: Badger closes cleanly) or killed (SIGKILL: a crash, nothing
 * flushed or closed) and started again on the same directory, the query API
 * must serve the very same traces: every span, ids, times, tags, logs.
 */

const uniqueSession = () => `20261201_090000_${randomBytes(3).toString('hex')}`;
const uniqueService = (what: string) => `hermes-aep-e2e-restart-${what}-${randomBytes(4).toString('hex')}`;
const sinceMs = Date.now() - 60_000;

const daemons: DaemonProcess[] = [];
afterAll(async () => {
  const stopped = await Promise.allSettled(daemons.map((d) => d.stop()));
  await stopAllServices();
  for (const s of stopped) if (s.status === 'rejected') throw s.reason;
});

/** The OTEL_* knobs a test run must not inherit from the shell it runs in. */
const NO_INHERITED_OTEL = Object.fromEntries(
  ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_TRACES_SAMPLER', 'OTEL_RESOURCE_ATTRIBUTES'].map((k) => [k, '']),
);

/** A daemon exporting OTLP/HTTP protobuf straight to `jaeger` as `service`. */
async function daemonFor(jaeger: JaegerService, service: string): Promise<DaemonProcess> {
  const d = await startDaemonProcess({
    ...NO_INHERITED_OTEL,
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${jaeger.ports.otlpHttp}`,
    OTEL_SERVICE_NAME: service,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  daemons.push(d);
  return d;
}

/** Drive a scripted session through the real shim; resolve once Jaeger has acknowledged every span the daemon finished. */
async function driveAndAck(d: DaemonProcess): Promise<number> {
  for (const env of scriptedSession(uniqueSession()).envelopes) {
    const r = await runShim(JSON.stringify(env), d.shimEnv);
    expect([r.code, r.stdout.trim()]).toEqual([0, '{}']);
  }
  const otel = await waitFor(
    'daemon to have every finished span acknowledged by Jaeger',
    async () => {
      const o = (await d.health()).sinks.otel;
      return o.open_units === 0 && o.spans_queued === 0 && o.spans_exported > 0 && o.spans_exported === o.spans_finished ? o : undefined;
    },
    30_000,
    5,
  );
  expect(otel).toMatchObject({ exporter: 'otlp', spans_failed: 0, spans_dropped: 0 });
  return otel.spans_exported as number;
}

/** A trace as the legacy API returns it, in an order-independent form (processes inlined, spans by id, tags by key). */
function canonical(t: LegacyTrace): unknown {
  const byKey = <T extends { key: string }>(tags: T[]) => [...tags].sort((a, b) => a.key.localeCompare(b.key));
  return {
    traceID: t.traceID,
    spans: [...t.spans]
      .sort((a, b) => a.spanID.localeCompare(b.spanID))
      .map((s) => {
        const p = t.processes[s.processID]!;
        return {
          ...s,
          processID: undefined,
          process: { serviceName: p.serviceName, tags: byKey(p.tags) },
          tags: byKey(s.tags),
          references: [...s.references].sort((a, b) => `${a.refType}${a.spanID}`.localeCompare(`${b.refType}${b.spanID}`)),
        };
      }),
  };
}

const bySpanId = (spans: FoundSpan[]) => [...spans].sort((a, b) => a.spanId.localeCompare(b.spanId));

/** What Jaeger serves for `service`: the api_v3 search (OTLP) and every trace through the legacy API. */
interface Served {
  search: Map<string, FoundSpan[]>;
  legacy: Map<string, unknown>;
}
async function served(jaeger: JaegerService, service: string, spans: number): Promise<Served> {
  const found = await waitForTraces(jaeger.query, service, sinceMs, (ts) => (ts.reduce((n, t) => n + t.spans.length, 0) >= spans ? ts : undefined), {
    timeoutMs: 30_000,
  });
  const legacy = new Map<string, unknown>();
  for (const t of found) {
    const full = await jaeger.query.getTrace(t.traceId);
    expect(full, `legacy trace ${t.traceId}`).toBeDefined();
    expect(full!.spans).toHaveLength(t.spans.length);
    legacy.set(t.traceId, canonical(full!));
  }
  return { search: new Map(found.map((t) => [t.traceId, bySpanId(t.spans)])), legacy };
}

/** Start Jaeger on the compose config with its Badger data in `dir` (and the given ports, to come back as "the same" Jaeger). */
async function jaegerOn(dir: string, ports?: JaegerService['ports'], env: Record<string, string> = {}): Promise<{ jaeger: JaegerService; readyMs: number }> {
  const t0 = performance.now();
  const jaeger = await startJaeger({ JAEGER_BADGER_DIR: dir, ...env }, { config: JAEGER_COMPOSE_CONFIG, ports });
  return { jaeger, readyMs: Math.round(performance.now() - t0) };
}

describe('Jaeger on Badger (deploy/jaeger/jaeger.yaml) keeps traces across restarts', () => {
  const dir = tempDir('hermes-aep-badger-');
  const first = { service: uniqueService('term'), spans: 0, before: undefined as unknown as Served };
  const second = { service: uniqueService('kill'), spans: 0, before: undefined as unknown as Served };
  let jaeger: JaegerService;

  beforeAll(async () => {
    ({ jaeger } = await jaegerOn(dir));
    first.spans = await driveAndAck(await daemonFor(jaeger, first.service));
    first.before = await served(jaeger, first.service, first.spans);
  });

  it('stores Badger files under the configured directory (keys/ and values/), not in memory', () => {
    expect(readdirSync(path.join(dir, 'keys'))).toContain('MANIFEST');
    expect(readdirSync(path.join(dir, 'values')).some((f) => f.endsWith('.vlog'))).toBe(true);
    expect(first.before.search.size).toBe(2); // the scripted session's two turns
    expect([...first.before.search.values()].reduce((n, s) => n + s.length, 0)).toBe(first.spans);
  });

  it('after SIGTERM (a clean exit, Badger closed) and a start on the same directory, serves the same traces', async () => {
    const t0 = performance.now();
    const how = await jaeger.stop();
    const stopMs = Math.round(performance.now() - t0);
    expect(how).toBe('exit code 0, signal null'); // exited by itself, not SIGKILLed at the stop deadline
    expect(jaeger.output()).not.toMatch(/"level":"error"|\terror\t/);

    const again = await jaegerOn(dir, jaeger.ports);
    jaeger = again.jaeger;
    const after = await served(jaeger, first.service, first.spans);
    expect(after.legacy).toEqual(first.before.legacy);
    expect(after.search).toEqual(first.before.search);
    console.log(
      `[e2e] jaeger SIGTERM: exited in ${stopMs} ms; restarted on the same Badger dir, healthy in ${again.readyMs} ms; ${first.spans} spans served unchanged`,
    );
  });

  it('after SIGKILL right after Jaeger acknowledged the spans (a crash), serves every one of them and the older traces', async () => {
    // the OTLP answer is Jaeger's acknowledgement: its storage exporter writes
    // synchronously (no queue), so the spans are in Badger's memtable/WAL by then
    const d = await daemonFor(jaeger, second.service);
    second.spans = await driveAndAck(d);
    const t0 = performance.now();
    const how = await jaeger.kill();
    const ackToKillMs = Math.round(performance.now() - t0);
    expect(how).toBe('exit code null, signal SIGKILL');

    const again = await jaegerOn(dir, jaeger.ports);
    jaeger = again.jaeger;
    const after = await served(jaeger, second.service, second.spans);
    expect([...after.search.values()].reduce((n, s) => n + s.length, 0)).toBe(second.spans);
    const older = await served(jaeger, first.service, first.spans);
    expect(older.legacy).toEqual(first.before.legacy);
    second.before = after;
    console.log(
      `[e2e] jaeger SIGKILL ${ackToKillMs} ms after the last span was acknowledged (never queried first): ` +
        `restarted in ${again.readyMs} ms, all ${second.spans} spans served`,
    );
  });

  it('a clean stop after the crash recovery still keeps both sessions', async () => {
    expect(await jaeger.stop()).toBe('exit code 0, signal null');
    ({ jaeger } = await jaegerOn(dir, jaeger.ports));
    expect((await served(jaeger, first.service, first.spans)).legacy).toEqual(first.before.legacy);
    expect((await served(jaeger, second.service, second.spans)).legacy).toEqual(second.before.legacy);
  });
});

describe('JAEGER_BADGER_TTL expires stored spans', () => {
  it('a trace is served until its TTL, then gone, also after a restart', async () => {
    const dir = tempDir('hermes-aep-badger-ttl-');
    const ttlMs = 4_000;
    let { jaeger } = await jaegerOn(dir, undefined, { JAEGER_BADGER_TTL: `${ttlMs / 1000}s` });
    const service = uniqueService('ttl');
    const spans = await driveAndAck(await daemonFor(jaeger, service));
    const ackedAt = Date.now();
    const seen = await served(jaeger, service, spans);
    // only meaningful when the trace was seen before the TTL could have run out
    expect(Date.now() - ackedAt).toBeLessThan(ttlMs);
    const [traceId] = [...seen.legacy.keys()];
    await waitFor('the spans to expire', async () => ((await jaeger.query.findTraces(service, sinceMs)).length === 0 ? true : undefined), 30_000, 200);
    expect(await jaeger.query.getTrace(traceId!)).toBeUndefined();
    const goneAfterMs = Date.now() - ackedAt;
    // Badger keeps expiry in whole Unix seconds, so a span may go up to 1 s early
    expect(goneAfterMs).toBeGreaterThanOrEqual(ttlMs - 1_500);

    expect(await jaeger.stop()).toBe('exit code 0, signal null');
    ({ jaeger } = await jaegerOn(dir, jaeger.ports, { JAEGER_BADGER_TTL: `${ttlMs / 1000}s` }));
    expect(await jaeger.query.findTraces(service, sinceMs)).toEqual([]);
    expect(await jaeger.query.getTrace(traceId!)).toBeUndefined();
    console.log(`[e2e] jaeger TTL ${ttlMs} ms: spans gone ${goneAfterMs} ms after they were written, and after a restart`);
  });
});
