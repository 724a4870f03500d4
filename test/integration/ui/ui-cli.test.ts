/** `hermes-aep ui --url` (src/ui-server/ui-cli.ts), run as the built CLI: the page's address from AEP_HOST/AEP_PORT, the token in its fragment. */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';

const HOOK_TOKEN = 'a'.repeat(64);
const run = (env: Record<string, string>) => {
  const state = tempDir();
  const clean = { ...process.env, AEP_TOKEN: '', AEP_PORT: '', AEP_HOST: '', AEP_SOCKET: '', AEP_TOKEN_FILE: '', AEP_STATE_DIR: state };
  const r = spawnSync(process.execPath, [CLI, 'ui', '--url'], { env: { ...clean, ...env }, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr, state };
};

describe('hermes-aep ui --url', () => {
  it('prints http://<AEP_HOST>:<AEP_PORT>/ui#token=<AEP_TOKEN> and exits 0', () => {
    const r = run({ AEP_PORT: '8393', AEP_TOKEN: 'ui-cli-token-0123456789' });
    expect([r.code, r.out, r.err]).toEqual([0, 'http://127.0.0.1:8393/ui#token=ui-cli-token-0123456789\n', '']);
    const h = run({ AEP_PORT: '9000', AEP_HOST: 'localhost', AEP_TOKEN: 'ui-cli-token-0123456789' });
    expect(h.out).toBe('http://localhost:9000/ui#token=ui-cli-token-0123456789\n');
    // a wildcard bind is reached on the loopback (a Host the daemon accepts)
    expect(run({ AEP_PORT: '8393', AEP_HOST: '0.0.0.0' }).out).toBe('http://127.0.0.1:8393/ui\n');
  });

  it('without AEP_TOKEN: the hook token file (read only), else no fragment', () => {
    const dir = tempDir();
    const file = path.join(dir, 'hook-token');
    writeFileSync(file, `${HOOK_TOKEN}\n`, { mode: 0o600 });
    const r = run({ AEP_PORT: '8393', AEP_TOKEN_FILE: file });
    expect([r.code, r.out]).toEqual([0, `http://127.0.0.1:8393/ui#token=${HOOK_TOKEN}\n`]);
    const none = run({ AEP_PORT: '8393' });
    expect([none.code, none.out]).toEqual([0, 'http://127.0.0.1:8393/ui\n']);
  });

  it('without AEP_PORT: exit 2 with one line (a browser cannot open a Unix socket), nothing on stdout', () => {
    const r = run({ AEP_TOKEN: 'ui-cli-token-0123456789' });
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.err).toContain('AEP_PORT=8393');
    expect(r.err).toContain('Unix socket');
    expect(r.err).not.toContain('ui-cli-token');
  });
});
