import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { daemonUntilExit, type DaemonExit } from '../../support/daemon-exit.js';
import { tempDir } from '../../support/processes.js';

/** `hermes-aep daemon` (compiled) with these settings; killed (its own pid) if still running at the deadline. */
function daemon(env: Record<string, string>, deadlineMs = 15_000): Promise<DaemonExit> {
  const state = tempDir();
  const dirs = { AEP_STATE_DIR: path.join(state, 'state'), AEP_LOG_DIR: path.join(state, 'log') };
  return daemonUntilExit({ ...dirs, AEP_PORT: '', OTEL_TRACES_EXPORTER: 'none', ...env }, deadlineMs);
}

describe('the real daemon with bad settings: exit 2, one stderr line naming every bad variable and what it accepts', () => {
  it('bad values of the daemon and the mirror together; the values themselves never shown', async () => {
    const r = await daemon({ AEP_PORT: 'port-8393', OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON', OTEL_EXPORTER_OTLP_HEADERS: 'Bearer sk-live-0123456789' });
    expect([r.code, r.killed]).toEqual([2, false]);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { level: string; msg: string; variables: string };
    expect(line).toMatchObject({ level: 'error', variables: 'AEP_PORT,OTEL_EXPORTER_OTLP_PROTOCOL,OTEL_EXPORTER_OTLP_HEADERS' });
    expect(line.msg).toContain('OTEL_EXPORTER_OTLP_PROTOCOL: one of http/protobuf, http/json, grpc');
    expect(r.stderr).not.toMatch(/port-8393|sk-live/);
  });

  it.runIf(process.platform === 'linux')('AEP_LOG_DIR under /proc: refused at once, nothing created, no hang', async () => {
    const r = await daemon({ AEP_LOG_DIR: '/proc/hermes-aep-test/logs' });
    // refused by the /proc rule, not by the path check's deadline (that one reads "a path the file system answers
    // for within … ms"): the reason the daemon reports, with exit 2 before the harness's kill, says it did not hang
    expect([r.code, r.killed]).toEqual([2, false]);
    expect(JSON.parse(r.stderr.trim())).toMatchObject({
      variables: 'AEP_LOG_DIR',
      msg: "invalid configuration: AEP_LOG_DIR: a directory on a disk, not on the kernel's proc pseudo-filesystem",
    });
    expect(existsSync('/proc/hermes-aep-test')).toBe(false);
  });
});
