/**
 * From Hermes 0.20 on, a shell hook entry may say `fail_closed: true` (or `failClosed`): a `pre_tool_call` hook that
 * times out, fails to spawn or prints something unreadable then BLOCKS the tool (agent/shell_hooks.py at
 * NousResearch/hermes-agent 00067189dfecf833d4d009c2dd977ae85cf800e0). The adapter fails open, so `install` must never
 * write it: checked over every combination of the install options, through the real CLI, in config.yaml (parsed and as
 * text), in the plugin's recorded arguments, and in what a dry run prints.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { hermesTree, PLUGINS_PY_0_21_3_LAYOUT } from '../../support/hermes-tree.js';
import { CLI } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';

const run = promisify(execFile);
const FAIL_CLOSED = /fail_?closed/i;
const USER_CONFIG = 'model:\n  default: some-model\nhooks:\n  pre_tool_call:\n    - command: /usr/local/bin/my-own-check\n      timeout: 30\n';

const combos: string[][] = [];
for (const transport of ['shell', 'plugin', 'webhook'])
  for (const control of [[], ['--control']])
    for (const instruct of [[], ['--instruct']])
      for (const modelCalls of [[], ['--no-model-calls']]) combos.push(['--transport', transport, ...control, ...instruct, ...modelCalls]);

/** a Hermes with outbound webhooks, for --transport webhook (which needs one, and TCP) */
const TREE = hermesTree({ plugins: PLUGINS_PY_0_21_3_LAYOUT, outbound: true });

/** the target and --timeout rotate over the combinations: every value is met with each transport (the webhook: TCP only) */
const targets = (i: number, state: string, combo: readonly string[]): string[] =>
  (combo.includes('webhook')
    ? [['--hermes', TREE, '--url', 'http://127.0.0.1:8393/hook']]
    : [[], ['--socket', path.join(state, 'other.sock')], ['--url', 'http://127.0.0.1:8393/hook']])[combo.includes('webhook') ? 0 : i % 3]!.concat(
    i % 2 ? ['--timeout', '60'] : [],
  );

describe('install never writes fail_closed (nor failClosed)', () => {
  it.each(combos.map((c, i) => [c.join(' '), c, i] as const))('%s', async (_name, combo, i) => {
    const home = tempDir();
    const state = tempDir();
    const config = path.join(home, 'config.yaml');
    writeFileSync(config, USER_CONFIG);
    const env = { ...process.env, HERMES_HOME: home, AEP_STATE_DIR: state, AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', AEP_ATTENTION_TIMEOUT_MS: '' };
    const args = ['install', ...combo, ...targets(i, state, combo)];
    const dry = await run(process.execPath, [CLI, ...args, '--dry-run'], { env });
    expect(dry.stdout).not.toMatch(FAIL_CLOSED);
    const r = await run(process.execPath, [CLI, ...args], { env });
    expect(r.stdout).not.toMatch(FAIL_CLOSED);
    const text = readFileSync(config, 'utf8');
    expect(text).not.toBe(USER_CONFIG); // install did write
    expect(text).not.toMatch(FAIL_CLOSED);
    // parsed: every hook entry has only the keys Hermes reads for a fail-open hook
    const hooks = (parse(text) as { hooks?: Record<string, Record<string, unknown>[]> }).hooks ?? {};
    // (a webhook entry of hooks.outbound has its own keys; fail_closed is not one of them either)
    const keys = (event: string) => (event === 'outbound' ? ['name', 'url', 'events', 'secret'] : ['command', 'timeout', 'matcher']);
    for (const [event, entries] of Object.entries(hooks))
      for (const entry of entries)
        expect(
          Object.keys(entry).filter((k) => !keys(event).includes(k)),
          event,
        ).toEqual([]);
    const recorded = path.join(home, 'plugins', 'hermes-aep', 'hermes-aep.json');
    if (existsSync(recorded)) expect(readFileSync(recorded, 'utf8')).not.toMatch(FAIL_CLOSED);
  });
});
