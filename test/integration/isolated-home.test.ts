import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runShim } from '../support/processes.js';

/**
 * A shim that cannot reach a daemon spools into ~/.aep/state/hermes-aep; a test
 * that clears the shim's target variables must not put hooks into the real
 * user's spool (a running daemon would ingest them into the real history).
 */
describe('the test tiers never touch the real home', () => {
  it('HOME is a throwaway directory, not the account home', () => {
    expect(os.homedir()).not.toBe(os.userInfo().homedir);
    expect(path.basename(os.homedir())).toMatch(/^hermes-aep-test-home-/);
  });

  it('a shim with no target settings spools under the throwaway home', async () => {
    const env = { AEP_HOOK_URL: '', AEP_SOCKET: '', AEP_STATE_DIR: '', AEP_TOKEN_FILE: '', AEP_HOST: '', AEP_PORT: '' };
    const r = await runShim('{"hook_event_name":"x","session_id":"isolation"}', env);
    expect(r.stdout).toBe('{}');
    const spool = path.join(os.homedir(), '.aep', 'state', 'hermes-aep', 'spool');
    expect(existsSync(spool) && readdirSync(spool).some((f) => f.endsWith('.hook'))).toBe(true);
  });
});
