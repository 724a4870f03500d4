import { describe, expect, it } from 'vitest';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import { UNKNOWN_SESSION, type AepEvent } from '../../../src/aep/event.js';
import { safeFileName } from '../../../src/history/safe-file-name.js';

function stage() {
  let n = 0;
  const s = new IdentityStage({ epoch: 0, host: 'h', policy: defaultPolicy(), newId: () => `id${++n}` });
  let tick = 0;
  const feed = (hook: string, session: string, extra: Record<string, unknown> = {}): AepEvent[] => {
    const env = hookEnvelopeSchema.parse({ hook_event_name: hook, session_id: session, tool_name: null, tool_input: null, cwd: '/', extra });
    return s.process(readHook(env, defaultPolicy()), new Date(Date.UTC(2026, 10, 29) + 1000 * tick++));
  };
  return { s, feed };
}

/**
 * Hooks without a session (approvals carry `session_id: ""`) ride the
 * `unknown` lane. A real Hermes session that happens to be named `unknown`
 * must not share that lane, its seqs or its history file.
 */
describe('the unknown lane and a real session named like it', () => {
  it('a session id of "" and a real session named "unknown" get different sessions and different history files', () => {
    const { s, feed } = stage();
    const [lane] = feed('pre_approval_request', '', { session_key: 'agent:main:telegram:dm:9', pattern_key: 'rm' });
    const [real] = feed('on_session_start', 'unknown');
    expect(lane).toMatchObject({ session: UNKNOWN_SESSION, seq: 0 });
    expect(real!.session).not.toBe(UNKNOWN_SESSION);
    // its own lane: its own seq from 0, and it counts as an active session
    expect(real!.seq).toBe(0);
    expect(s.activeSessions).toBe(1);
    expect(safeFileName(real!.session)).not.toBe(safeFileName(lane!.session));
  });

  it('ids that look like the escaped name stay apart from it and from each other', () => {
    const { feed } = stage();
    const ids = ['unknown', 'unknown~', 'unknown~~', 'Unknown', 'unknownx'];
    const sessions = ids.map((id) => feed('on_session_start', id)[0]!.session);
    expect(new Set([...sessions, UNKNOWN_SESSION]).size).toBe(ids.length + 1);
    expect(new Set([...sessions, UNKNOWN_SESSION].map(safeFileName)).size).toBe(ids.length + 1);
    // any other id is the session as Hermes names it
    expect(sessions.slice(3)).toEqual(['Unknown', 'unknownx']);
  });

  it('an approval joining a real session named "unknown" by its session key joins that session, not the unknown lane', () => {
    const { feed } = stage();
    const [real] = feed('on_session_start', 'unknown');
    const [card] = feed('pre_approval_request', '', { session_key: 'unknown', pattern_key: 'rm' });
    expect(card!.session).toBe(real!.session);
    expect(card!.seq).toBe(1);
  });
});
