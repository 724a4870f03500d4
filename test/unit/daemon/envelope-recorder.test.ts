import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EnvelopeRecorder } from '../../../src/daemon/envelope-recorder.js';
import { tempDir } from '../../support/processes.js';

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as unknown);

describe('envelope recorder (AEP_RECORD_DIR)', () => {
  it('appends each envelope verbatim, one line each, in order, to a private file per session', async () => {
    const dir = path.join(tempDir(), 'rec');
    const r = new EnvelopeRecorder(dir);
    const sent = Array.from({ length: 30 }, (_, i) => ({ hook_event_name: 'pre_tool_call', session_id: i % 2 ? 'odd' : 'even', n: i, text: 'ü\n"' }));
    for (const env of sent) r.record(env, env.session_id);
    r.record({ hook_event_name: 'x' }, '');
    r.record({ hook_event_name: 'y' }, null);
    r.record({ hook_event_name: 'z' }, '../up');
    await r.flush();
    expect(r).toMatchObject({ recorded: 33, dropped: 0 });
    expect(readdirSync(dir).sort()).toEqual(['%2E%2E%2Fup.jsonl', 'even.jsonl', 'no-session.jsonl', 'odd.jsonl']);
    expect(lines(path.join(dir, 'even.jsonl'))).toEqual(sent.filter((e) => e.n % 2 === 0));
    expect(lines(path.join(dir, 'odd.jsonl'))).toEqual(sent.filter((e) => e.n % 2 === 1));
    expect(lines(path.join(dir, 'no-session.jsonl'))).toEqual([{ hook_event_name: 'x' }, { hook_event_name: 'y' }]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(dir, 'even.jsonl')).mode & 0o777).toBe(0o600);
  });

  it('bounded: past 1,000 envelopes waiting, more are dropped and counted, never queued', async () => {
    const dir = path.join(tempDir(), 'rec');
    const r = new EnvelopeRecorder(dir);
    for (let i = 0; i < 1_100; i++) r.record({ n: i }, 's');
    expect(r.dropped).toBe(100);
    await r.flush();
    expect(r).toMatchObject({ recorded: 1_000, dropped: 100 });
    expect(lines(path.join(dir, 's.jsonl'))).toEqual(Array.from({ length: 1_000 }, (_, n) => ({ n })));
  });

  it('a directory it cannot create (a file is in the way): every envelope is counted as dropped, nothing throws, flush still settles', async () => {
    const dir = path.join(tempDir(), 'rec');
    writeFileSync(dir, '');
    const r = new EnvelopeRecorder(dir);
    r.record({ a: 1 }, 's');
    r.record({ b: 2 }, 's');
    await r.flush();
    expect(r).toMatchObject({ recorded: 0, dropped: 2 });
    expect(readFileSync(dir, 'utf8')).toBe('');
  });
});
