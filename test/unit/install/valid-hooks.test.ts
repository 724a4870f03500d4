/**
 * doctor's static reader of Hermes's hook list (src/install/valid-hooks.ts) and its report (src/install/doctor.ts), in process, on
 * a stand-in Hermes tree laid out as 0.21.3 lays its VALID_HOOKS out (several names a line, comments between them). The real
 * 0.18.2 and 0.19.0 installs are read by test/integration/install/doctor.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { readSetLiteral, readVersion } from '../../../src/install/valid-hooks.js';
import { doctor } from '../../../src/install/doctor.js';
import { BASELINE_HOOKS } from '../../../src/hermes/known-hooks.js';
import { hermesTree, HOOKS_0_21_3_NEW, PLUGINS_PY_0_21_3_LAYOUT } from '../../support/hermes-tree.js';

const names = (source: string, name = 'VALID_HOOKS') => {
  const r = readSetLiteral(source, name);
  if (!r.ok) throw new Error(r.problem);
  return r.value;
};

describe('readSetLiteral', () => {
  it("0.21's packed layout: all 39 names, none from the comments (which quote JSON) or the commented-out decoy", () => {
    const v = names(PLUGINS_PY_0_21_3_LAYOUT);
    expect(v.other).toBe(0);
    expect(v.names).toHaveLength(39);
    expect([...v.names].sort()).toEqual([...BASELINE_HOOKS, ...HOOKS_0_21_3_NEW].sort());
    expect(names(PLUGINS_PY_0_21_3_LAYOUT, 'SHELL_UNSUPPORTED_HOOKS').names).toEqual(['transform_api_error_classification']);
  });

  it('one name a line, a trailing comma, single quotes, frozenset(...) and list forms, adjacent literals joined as Python joins them', () => {
    expect(names('VALID_HOOKS = {\n    "a",\n    # c "x"\n    \'b\',\n}\n').names).toEqual(['a', 'b']);
    expect(names('VALID_HOOKS = frozenset({"a", "b"})').names).toEqual(['a', 'b']);
    expect(names('VALID_HOOKS: list = ["a", "b"]').names).toEqual(['a', 'b']);
    expect(names('VALID_HOOKS = {"pre_" "tool_call"}').names).toEqual(['pre_tool_call']);
  });

  it('an element that is no plain string is counted, not taken: the list is said to be incomplete', () => {
    expect(names('VALID_HOOKS = {"a", *EXTRA, make("b", "c"), "d"}')).toEqual({ names: ['a', 'd'], other: 2 });
  });

  it('no assignment, no literal, a literal or a string that never closes: a problem in words, never a throw', () => {
    for (const [source, problem] of [
      ['', /no `VALID_HOOKS = \{…\}` assignment/],
      ['x = 1\n  VALID_HOOKS = {"a"}\n', /no `VALID_HOOKS/],
      ['VALID_HOOKS = build_hooks()', /not assigned a set literal/],
      ['VALID_HOOKS = {"a", "b"', /never closes/],
      ['VALID_HOOKS = {"a, "b"}\n', /a string in `VALID_HOOKS` never closes/],
    ] as const) {
      const r = readSetLiteral(source, 'VALID_HOOKS');
      expect(r.ok, source).toBe(false);
      if (!r.ok) expect(r.problem, source).toMatch(problem);
    }
  });

  it('readVersion: __version__ with either quote, annotated or not; undefined without one', () => {
    expect(readVersion('"""doc"""\nimport os\n__version__ = "0.21.3"\n__release_date__ = "2026.9.14"\n')).toBe('0.21.3');
    expect(readVersion("__version__: str = '0.18.2'")).toBe('0.18.2');
    expect(readVersion('# __version__ = "9"\nversion = "1"')).toBeUndefined();
  });
});

describe('doctor on a stand-in 0.21.3 tree', () => {
  it('reports the version, no hook the mapping has not decided about (its 16 new ones are), none gone, shell refusals and outbound webhooks: status 0', () => {
    const root = hermesTree({ init: '__version__ = "0.21.3"\n', plugins: PLUGINS_PY_0_21_3_LAYOUT, outbound: true });
    const r = doctor(root, {});
    console.log(r.lines.join('\n'));
    expect(r.status).toBe(0);
    expect(r.lines).toContain('  version: 0.21.3');
    expect(r.lines).toContain('  hooks: 39 in VALID_HOOKS');
    expect(r.lines).toContain('  unknown to the mapping: (none)');
    expect(r.lines).toContain('  known, but gone: (none)');
    expect(r.lines).toContain('  refused to shell hooks: transform_api_error_classification');
    expect(r.lines).toContain('  outbound webhooks: yes (agent/outbound_webhooks.py)');
  });

  it('a name nobody has decided about (pre_tts_synthesis, on later main) is still drift: status 1', () => {
    const plugins = PLUGINS_PY_0_21_3_LAYOUT.replace('"pre_command",', '"pre_command", "pre_tts_synthesis",');
    expect(plugins).not.toBe(PLUGINS_PY_0_21_3_LAYOUT);
    const r = doctor(hermesTree({ init: '__version__ = "0.22.0"\n', plugins }), {});
    expect(r.status).toBe(1);
    expect(r.lines).toContain('  unknown to the mapping: pre_tts_synthesis');
  });

  it('a known hook missing (one install registers) is drift too, and says Hermes would refuse it', () => {
    const plugins = PLUGINS_PY_0_21_3_LAYOUT.replace('"post_approval_response",', '');
    const r = doctor(hermesTree({ init: '__version__ = "9.9.9"\n', plugins }), {});
    expect(r.status).toBe(1);
    expect(r.lines).toContain('  known, but gone: post_approval_response (install registers post_approval_response: Hermes would refuse them)');
    expect(r.lines).toContain('  outbound webhooks: no');
  });

  it('odd or missing files: a clear line and status 2 (or an unknown version), never a throw', () => {
    const noPlugins = doctor(hermesTree({ init: '__version__ = "1"' }), {});
    expect(noPlugins.status).toBe(2);
    expect(noPlugins.lines.at(-1)).toMatch(/no hermes_cli\/plugins.py found from --hermes/);
    const odd = doctor(hermesTree({ plugins: 'VALID_HOOKS = compute()\n' }), {});
    expect(odd.status).toBe(2);
    expect(odd.lines).toContain('  version: unknown (hermes_cli/__init__.py unreadable)');
    expect(odd.lines.at(-1)).toMatch(/hook list: unreadable in .*plugins\.py: `VALID_HOOKS` is not assigned a set literal/);
    const noVersion = doctor(hermesTree({ init: 'pass\n', plugins: 'VALID_HOOKS = {"pre_tool_call"}' }), {});
    expect(noVersion.lines).toContain('  version: unknown (no __version__ in hermes_cli/__init__.py)');
    expect(noVersion.status).toBe(1); // 22 known hooks gone
    expect(doctor('/nonexistent/hermes', {})).toEqual({ status: 2, lines: [`doctor: --hermes /nonexistent/hermes does not exist`] });
    expect(doctor(undefined, { PATH: '', HOME: '/nonexistent' }).lines[0]).toMatch(/^doctor: no Hermes found: no hermes on PATH, none at/);
  });
});
