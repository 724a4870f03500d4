import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../../../src/daemon/server.js';
import type { HookPipeline } from '../../../../src/daemon/pipeline.js';
import { silentLogger, type Logger } from '../../../../src/core/logger.js';
import { StreamAuth } from '../../../../src/stream/stream-auth.js';
import { RequestGuard } from '../../../../src/transport/request-guard.js';
import type { StreamHttpDeps } from '../../../../src/stream/http/deps.js';
import { TestHub, TestIngress, testParsers } from './test-hub.js';
import { JSON_WORKER } from '../../../support/paths.js';

export const TOKEN = 'ab'.repeat(32);
export const OWN_PREFIX = 'aep://test-host/agent/hermes/';

export interface StreamOptions {
  token?: string;
  allowedOrigins?: string[];
  buffer?: number;
  subscriptions?: number;
  heartbeatMs?: number;
  ingestMaxEvents?: number;
  maxBodyBytes?: number;
  log?: Logger;
  hookToken?: string;
  /** AEP_STREAM_READ=open */
  openRead?: boolean;
  /** without `token`: the read token (the daemon passes its hook token) */
  readToken?: string;
}

/** The daemon's HTTP server with the stream routes on a test hub (only this construction changes when the core hub lands). */
export function testStream(o: StreamOptions = {}): { app: FastifyInstance; hub: TestHub; ingress: TestIngress; deps: StreamHttpDeps } {
  const hub = new TestHub({ buffer: o.buffer ?? 100, subscriptions: o.subscriptions ?? 16 });
  const ingress = new TestIngress(hub);
  const log = o.log ?? silentLogger;
  const deps: StreamHttpDeps = {
    hub,
    ingress,
    auth: new StreamAuth({
      ...(o.token !== undefined ? { token: o.token } : {}),
      ...(o.readToken !== undefined ? { readToken: o.readToken } : {}),
      ...(o.openRead !== undefined ? { openRead: o.openRead } : {}),
      allowedOrigins: o.allowedOrigins ?? [],
    }),
    parsers: testParsers,
    heartbeatMs: o.heartbeatMs ?? 30_000,
    ingestMaxEvents: o.ingestMaxEvents ?? 1000,
    maxBodyBytes: o.maxBodyBytes ?? 1024 * 1024,
    ownSourcePrefix: OWN_PREFIX,
    log,
  };
  const app = buildServer({
    pipeline: {} as HookPipeline,
    health: () => ({}),
    maxBodyBytes: deps.maxBodyBytes,
    log,
    jsonWorkerUrl: JSON_WORKER,
    guard: new RequestGuard({ boundHost: '127.0.0.1', ...(o.hookToken !== undefined ? { token: o.hookToken } : {}) }),
    stream: deps,
  });
  return { app, hub, ingress, deps };
}

/** An event of session `session` at `seq` (valid per the envelope schema), as one line. */
export function event(session: string, seq: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    aep: '0.1',
    id: `ev-${session}-${seq}`,
    type: 'x.test.ping.sent',
    time: '2026-07-03T10:14:00.000Z',
    source: `aep://host-b/agent/other/session/${session}`,
    agent: 'other',
    session,
    seq,
    epoch: 0,
    ...extra,
  };
}

export const ndjson = (events: readonly Record<string, unknown>[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';
