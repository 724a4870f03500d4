import { describe, expect, it } from 'vitest';
import { errorCode, HealthLatch } from '../../../src/core/health-latch.js';
import { waitFor } from '../../support/processes.js';
import { recordingLog } from '../history/recording-log.js';

function setup(windowMs: number) {
  const { log, lines } = recordingLog();
  let t = 1_000_000;
  const latch = new HealthLatch('log', log, { failing: 'down', recovered: 'up' }, windowMs, () => t);
  return { latch, lines, advance: (ms: number) => (t += ms) };
}

describe('health latch', () => {
  it('one line at the first failure, one at recovery, nothing per failure in between', () => {
    const { latch, lines, advance } = setup(60_000);
    expect(latch.current()).toBeUndefined();
    latch.fail('write', 'write failed: ENOSPC');
    for (let i = 0; i < 100; i++) latch.fail('write', 'write failed: ENOSPC');
    expect(latch.current()).toEqual({ sink: 'log', reason: 'write failed: ENOSPC', since: new Date(1_000_000).toISOString() });
    advance(1500);
    latch.recover('write');
    expect(latch.current()).toBeUndefined();
    expect(lines).toEqual([
      { level: 'error', msg: 'down', sink: 'log', reason: 'write failed: ENOSPC' },
      { level: 'info', msg: 'up', sink: 'log', after_ms: 1500 },
    ]);
  });

  it('a success recovers only the kind it proves', () => {
    const { latch } = setup(60_000);
    latch.fail('write', 'write failed: EIO');
    latch.fail('fsync', 'fsync failed: EIO');
    latch.recover('write');
    expect(latch.current()?.reason).toBe('fsync failed: EIO');
    expect(latch.has('write')).toBe(false);
    latch.recover('fsync');
    expect(latch.failing).toBe(false);
  });

  it('flapping is rate-limited; an episode still failing at the end of the window is logged then', async () => {
    const { latch, lines } = setup(50);
    latch.fail('x', 'a');
    latch.recover('x');
    for (let i = 0; i < 10; i++) {
      latch.fail('x', 'b');
      latch.recover('x');
    }
    latch.fail('x', 'c');
    expect(lines).toHaveLength(2);
    await waitFor('late failure line', () => (lines.length === 3 ? true : undefined), 2_000);
    expect(lines[2]).toMatchObject({ level: 'error', reason: 'c', episodes_not_logged: 11 });
    latch.recover('x');
    expect(lines[3]).toMatchObject({ level: 'info', msg: 'up' });
  });

  it('error codes only, never messages', () => {
    expect(errorCode(Object.assign(new Error('/secret/path is full'), { code: 'ENOSPC' }))).toBe('ENOSPC');
    expect(errorCode(new TypeError('http://user:pw@host'))).toBe('TypeError');
    expect(errorCode(undefined)).toBe('unknown');
  });
});
