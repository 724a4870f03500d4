// tail's options → plan: the default socket from AEP_STATE_DIR, TCP with AEP_TOKEN, the
// combined filter, --from, --capture, and errors that name the option, never the value.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFromOption, planTail } from '../../../src/tail/options.js';

const STATE = '/tmp/hermes-aep-tail-state';
const env = { AEP_STATE_DIR: STATE, AEP_LOG_DIR: '/tmp/hermes-aep-tail-logs', HOME: '/tmp' };

describe('tail options', () => {
  it('defaults: the socket in the state dir, the log dir, the last 10 events then following (tail(1)), all with --no-follow', () => {
    const p = planTail({}, env);
    expect(p.target).toEqual({ kind: 'socket', path: path.join(STATE, 'hook.sock') });
    expect(p.historyRoot).toBe('/tmp/hermes-aep-tail-logs');
    expect(p.follow).toBe(true);
    expect([p.from, p.recent]).toEqual(['all', 10]);
    expect(p.filter).toBeUndefined();
    const all = planTail({ follow: false }, env);
    expect([all.from, all.recent]).toEqual(['all', undefined]);
  });

  it('-n/--lines: that many recent events (with or without following); 0 while following is live only; never with --from', () => {
    expect(planTail({ lines: '3' }, env)).toMatchObject({ from: 'all', recent: 3, follow: true });
    expect(planTail({ lines: '3', follow: false }, env)).toMatchObject({ from: 'all', recent: 3, follow: false });
    const live = planTail({ lines: '0' }, env);
    expect([live.from, live.recent]).toEqual([undefined, undefined]);
    expect(planTail({ lines: '0', follow: false }, env)).toMatchObject({ from: 'all', recent: 0 });
    for (const bad of ['-1', '1.5', 'ten', ''])
      expect(() => planTail({ lines: bad }, env), bad).toThrow('--lines takes a whole number of events >= 0 (0: only new events)');
    expect(() => planTail({ lines: '5', from: 'all' }, env)).toThrow('--lines and --from: use one');
    const exact = planTail({ from: 'all' }, env);
    expect([exact.from, exact.recent]).toEqual(['all', undefined]);
  });

  it('AEP_SOCKET=off with AEP_PORT: TCP on AEP_HOST with AEP_TOKEN', () => {
    const p = planTail({}, { ...env, AEP_SOCKET: 'off', AEP_PORT: '8393', AEP_TOKEN: 'a-token-of-16-chars-or-more' });
    expect(p.target.kind).toBe('url');
    if (p.target.kind !== 'url') return;
    expect(p.target.url.href).toBe('http://127.0.0.1:8393/stream');
    expect(p.target.token).toBe('a-token-of-16-chars-or-more');
  });

  it('--url: /stream appended to a base, kept when given; --token wins over AEP_TOKEN', () => {
    const a = planTail({ url: 'http://127.0.0.1:8393', token: 'T' }, { ...env, AEP_TOKEN: 'a-token-of-16-chars-or-more' });
    expect(a.target).toMatchObject({ kind: 'url', token: 'T' });
    expect(a.target.kind === 'url' && a.target.url.href).toBe('http://127.0.0.1:8393/stream');
    const b = planTail({ url: 'https://relay.example/aep/stream/' }, env);
    expect(b.target.kind === 'url' && b.target.url.href).toBe('https://relay.example/aep/stream');
  });

  it('a --url with a query or credentials is refused without echoing it', () => {
    for (const url of ['http://127.0.0.1:1/?access_token=SECRET-MARKER', 'http://user:SECRET-MARKER@127.0.0.1:1/']) {
      expect(() => planTail({ url }, env)).toThrow(/--url takes no query and no credentials/);
      try {
        planTail({ url }, env);
      } catch (err) {
        expect((err as Error).message).not.toContain('SECRET-MARKER');
      }
    }
    expect(() => planTail({ url: 'ftp://x' }, env)).toThrow(/http/);
  });

  it('--session, --type and --filter combine into one attr-match filter, checked fail-closed', () => {
    const p = planTail({ session: 's1', type: ['tool.*', 'run.started,attention.*'], filter: '{"severity":{"gte":"notice"}}' }, env);
    expect(JSON.parse(p.filter!)).toEqual({ severity: { gte: 'notice' }, session: 's1', type: ['tool.*', 'run.started', 'attention.*'] });
    expect(p.localFilter({ session: 's1', type: 'tool.failed', severity: 'error' })).toBe(true);
    expect(p.localFilter({ session: 's1', type: 'tool.failed' })).toBe(false);
    expect(() => planTail({ filter: '{"seq":1}' }, env)).toThrow(/--filter: seq: not filterable/);
    expect(() => planTail({ filter: 'nope' }, env)).toThrow(/--filter takes JSON/);
    expect(() => planTail({ session: 'a', filter: '{"session":"b"}' }, env)).toThrow(/use one/);
  });

  it('--from and --capture', () => {
    expect(parseFromOption('all')).toBe('all');
    expect(parseFromOption('[{"session":"s","epoch":2,"seq":7},{"session":"t","seq":0}]')).toEqual([
      { session: 's', epoch: 2, seq: 7 },
      { session: 't', epoch: 0, seq: 0 },
    ]);
    for (const bad of ['[]', '{}', '[{"session":"s"}]', '[{"session":"s","seq":-1}]', 'x']) expect(() => parseFromOption(bad)).toThrow(/--from/);
    expect(planTail({ capture: 'redacted' }, env).capture).toBe('redacted');
    expect(() => planTail({ capture: 'secret' }, env)).toThrow(/--capture takes none, metadata, redacted, full/);
  });
});
