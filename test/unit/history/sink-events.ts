import type { AepEvent } from '../../../src/aep/event.js';

/** Events for a sink test: one session each, ids `{prefix}{n}` and seqs counting up, no content. */
export function eventMaker(prefix: string): (session: string) => AepEvent {
  let n = 0;
  return (session) => {
    n++;
    return {
      aep: '0.1',
      id: `${prefix}${n - 1}`,
      type: 'x.hermes.test',
      time: '2026-01-01T00:00:00.000Z',
      source: 's',
      agent: 'hermes',
      session,
      seq: n,
      epoch: 0,
      severity: 'info',
      capture: 'metadata',
      data: {},
    };
  };
}
