// Attention events as the daemon's control gate raises them, for tail's card tests.
export const CARD = '01JZ5R7Q1B8N6T3X0V9W2Y4K3M';
let n = 0;
/** An answerable card (a held permission request): respond_via control, expiring 10:05:00Z. */
export const cardEvent = (id = CARD, over: Record<string, unknown> = {}, data: Record<string, unknown> = {}) => ({
  aep: '0.1',
  id,
  type: 'attention.requested',
  time: '2026-07-03T10:00:00.000Z',
  source: 'aep://h/agent/hermes/session/s1',
  agent: 'hermes',
  session: 's1',
  run: 's1:t:1',
  seq: ++n,
  cause: 'tool-req-1',
  subject: 'terminal',
  severity: 'notice',
  capture: 'metadata',
  data: {
    kind: 'permission',
    prompt: 'hermes requests permission: terminal',
    options: [
      { id: 'allow', label: 'allow' },
      { id: 'deny', label: 'deny' },
    ],
    respond_via: ['control'],
    expires_at: '2026-07-03T10:05:00.000Z',
    ...data,
  },
  ...over,
});
/** An attention outcome event naming `subject`. */
export const outcome = (type: string, subject = CARD, data: Record<string, unknown> = {}) => ({
  aep: '0.1',
  id: `out-${++n}`,
  type,
  time: '2026-07-03T10:00:10.000Z',
  source: 'aep://h/agent/hermes/session/s1',
  agent: 'hermes',
  session: 's1',
  run: 's1:t:1',
  seq: ++n,
  subject,
  data,
});
