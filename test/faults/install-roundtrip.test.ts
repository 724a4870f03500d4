// install → uninstall gives back the user's config.yaml byte for byte, and a
// second install changes nothing: a property over generated configs (comments
// above, inside and after `hooks:`, blank lines, CRLF, no final newline,
// flow and block styles, `hooks: {}`, `hooks:` null, other tools' hooks on the
// same and other events, anchors and aliases, unicode, a block scalar that
// contains the marker text), plus the same round trip through the real CLI,
// allowlist included; with the opt-in gates too (a command carrying --control
// and --instruct, and a pre_tool_call timeout that differs from the others),
// and with `--no-model-calls` (post_api_request left out; switching either way
// converges on a direct install, and a user's own post_api_request hooks stay).
import { describe, expect, it } from 'vitest';
import { requirePython } from '../support/python.js';
import fc from 'fast-check';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { addHooks, enablePlugin, isOurCommand, removeHooks, timeoutFor, type HookEntry } from '../../src/install/hermes-config.js';
import { MODEL_CALL_HOOK, REGISTERED_HOOKS } from '../../src/hermes/envelope.js';
import { CLI } from '../support/paths.js';
import { tempDir } from '../support/processes.js';

const run = promisify(execFile);

// ---------------------------------------------------------------- generator

const OTHER_EVENTS = ['transform_tool_result', 'pre_gateway_dispatch', 'post_llm_call'] as const;
const EVENT_POOL = [...REGISTERED_HOOKS, ...OTHER_EVENTS];
/** what `install --no-model-calls` registers */
const NO_MODEL_CALLS: readonly string[] = REGISTERED_HOOKS.filter((h) => h !== MODEL_CALL_HOOK);
const EVENT_SETS: readonly (readonly string[])[] = [REGISTERED_HOOKS, NO_MODEL_CALLS];

type ItemKind = 'block' | 'block-matcher' | 'flow' | 'anchor' | 'alias' | 'unicode';
interface EventSpec {
  readonly name: string;
  readonly style: 'block' | 'flow' | 'flow-empty' | 'null-implicit' | 'null-tilde';
  readonly dashExtra: 0 | 2;
  readonly items: readonly ItemKind[];
  readonly commentAbove: boolean;
  readonly commentInside: boolean;
  readonly trailingComment: boolean;
  readonly blankAfter: boolean;
}
type HooksForm = 'absent' | 'null-implicit' | 'null-comment' | 'null-tilde' | 'null-word' | 'empty-flow' | 'empty-flow-comment' | 'block' | 'flow-nonempty';
interface ConfigSpec {
  readonly sections: readonly string[];
  readonly hooksAt: number;
  readonly hooks: HooksForm;
  readonly indent: 2 | 4;
  readonly events: readonly EventSpec[];
  readonly commentAboveHooks: boolean;
  readonly commentAfterHooks: boolean;
  readonly eol: '\n' | '\r\n';
  readonly finalNewline: boolean;
  readonly bom: boolean;
}

const SECTIONS: Record<string, readonly string[]> = {
  model: ['model:', '  default: x', '  provider: custom   # keep me', '  mode: 0755', '  big: 1e3'],
  flow: ['opts: {a: 1, b: [x, y]}   # flow style', 'tags: [one, "two three"]'],
  anchors: ['base: &base', '  retries: 3', 'derived: *base'],
  unicode: ['name: "héllo ✓"', 'emoji: 🚀 rocket  # ünïcode comment'],
  scalar: ['prompt: |', '  first line', '  # added by hermes-aep', '  hooks: not a key'],
  folded: ['note: >-', '  folded', '  text'],
  comment: ['# a comment on its own', ''],
  blank: [''],
  accept: ['hooks_auto_accept: false'],
  dupes: ['dup: 1', 'dup: 2'],
  quoted: ["'quoted key': 'it''s'", '"dq": "a # not a comment"'],
};

const eventArb: fc.Arbitrary<EventSpec> = fc.record({
  name: fc.constantFrom(...EVENT_POOL),
  style: fc.constantFrom('block', 'block', 'block', 'flow', 'flow-empty', 'null-implicit', 'null-tilde'),
  dashExtra: fc.constantFrom(0 as const, 2 as const),
  items: fc.array(fc.constantFrom<ItemKind>('block', 'block-matcher', 'flow', 'anchor', 'alias', 'unicode'), { minLength: 1, maxLength: 3 }),
  commentAbove: fc.boolean(),
  commentInside: fc.boolean(),
  trailingComment: fc.boolean(),
  blankAfter: fc.boolean(),
});

const configArb: fc.Arbitrary<ConfigSpec> = fc.record({
  sections: fc.shuffledSubarray(Object.keys(SECTIONS), { minLength: 0 }),
  hooksAt: fc.nat(20),
  hooks: fc.constantFrom<HooksForm>(
    'absent',
    'null-implicit',
    'null-comment',
    'null-tilde',
    'null-word',
    'empty-flow',
    'empty-flow-comment',
    'block',
    'block',
    'block',
    'block',
    'flow-nonempty',
  ),
  indent: fc.constantFrom(2 as const, 4 as const),
  events: fc.uniqueArray(eventArb, { maxLength: 6, selector: (e) => e.name }),
  commentAboveHooks: fc.boolean(),
  commentAfterHooks: fc.boolean(),
  eol: fc.constantFrom('\n' as const, '\r\n' as const),
  finalNewline: fc.boolean(),
  bom: fc.nat(9).map((n) => n === 0),
});

// the plugin transport's edit: `plugins:` in every form Hermes accepts (and a few it refuses)
type PluginsForm = 'absent' | 'null-implicit' | 'null-tilde' | 'empty-flow' | 'block';
interface PluginsSpec {
  readonly form: PluginsForm;
  readonly enabled: 'absent' | 'block' | 'flow' | 'flow-empty' | 'null' | 'multiline-flow';
  readonly items: readonly string[];
  readonly disabled: readonly string[];
  readonly comment: boolean;
  readonly indent: 2 | 4;
  readonly first: boolean;
}
const pluginsArb: fc.Arbitrary<PluginsSpec> = fc.record({
  form: fc.constantFrom<PluginsForm>('absent', 'null-implicit', 'null-tilde', 'empty-flow', 'block', 'block', 'block'),
  enabled: fc.constantFrom(
    'absent' as const,
    'block' as const,
    'block' as const,
    'flow' as const,
    'flow-empty' as const,
    'null' as const,
    'multiline-flow' as const,
  ),
  items: fc.uniqueArray(fc.constantFrom('disk-cleanup', '"quoted-one"', 'image_gen/openai', 'hermes-aep'), { minLength: 1, maxLength: 3 }),
  disabled: fc.uniqueArray(fc.constantFrom('old-thing', 'hermes-aep'), { maxLength: 1 }),
  comment: fc.boolean(),
  indent: fc.constantFrom(2 as const, 4 as const),
  first: fc.boolean(),
});

function pluginsLines(p: PluginsSpec): string[] {
  const ind = ' '.repeat(p.indent);
  switch (p.form) {
    case 'absent':
      return [];
    case 'null-implicit':
      return ['plugins:'];
    case 'null-tilde':
      return ['plugins: ~   # later'];
    case 'empty-flow':
      return ['plugins: {}'];
    case 'block': {
      const out = ['plugins:'];
      if (p.comment) out.push(`${ind}# which plugins load`);
      if (p.disabled.length > 0) out.push(`${ind}disabled: [${p.disabled.join(', ')}]`);
      if (p.enabled === 'block') out.push(`${ind}enabled:`, ...p.items.map((i) => `${ind}${ind}- ${i}`));
      if (p.enabled === 'flow') out.push(`${ind}enabled: [${p.items.join(', ')}]${p.comment ? '  # mine' : ''}`);
      if (p.enabled === 'flow-empty') out.push(`${ind}enabled: []`);
      if (p.enabled === 'null') out.push(`${ind}enabled:`);
      if (p.enabled === 'multiline-flow') out.push(`${ind}enabled: [${p.items[0]!},`, `${ind}${ind}other]`);
      if (out.length === 1 || (out.length === 2 && p.comment)) out.push(`${ind}entries: {}`);
      return out;
    }
  }
}

/** The user's own hook entries for one event, as lines at the dash column. */
function itemLines(kind: ItemKind, n: number, pad: string, anchors: string[]): string[] {
  const cmd = `/usr/local/bin/guard-${n}`;
  switch (kind) {
    case 'block':
      return [`${pad}- command: ${cmd}`, `${pad}  timeout: 5`];
    case 'block-matcher':
      return [`${pad}- command: "${cmd} --flag"`, `${pad}  matcher: terminal`];
    case 'flow':
      return [`${pad}- {command: ${cmd}}`];
    case 'anchor':
      anchors.push(`g${n}`);
      return [`${pad}- &g${n} {command: ${cmd}}`];
    case 'alias': {
      const a = anchors[0];
      return a ? [`${pad}- *${a}`] : [`${pad}- command: ${cmd}`];
    }
    case 'unicode':
      return [`${pad}- command: /opt/wächter/bin/prüfen ✓`];
  }
}

function hooksLines(c: ConfigSpec): string[] {
  const out: string[] = [];
  if (c.commentAboveHooks) out.push('# my hooks');
  switch (c.hooks) {
    case 'absent':
      return [];
    case 'null-implicit':
      out.push('hooks:');
      break;
    case 'null-comment':
      out.push('hooks:   # none yet');
      break;
    case 'null-tilde':
      out.push('hooks: ~');
      break;
    case 'null-word':
      out.push('hooks: null  # later');
      break;
    case 'empty-flow':
      out.push('hooks: {}');
      break;
    case 'empty-flow-comment':
      out.push('hooks: { }   # nothing');
      break;
    case 'flow-nonempty':
      out.push('hooks: {on_session_end: [{command: /bin/true}]}');
      break;
    case 'block': {
      out.push('hooks:');
      const anchors: string[] = [];
      const ind = ' '.repeat(c.indent);
      let n = 0;
      for (const e of c.events) {
        if (e.commentAbove) out.push(`${ind}# about ${e.name}`);
        const trail = e.trailingComment ? '   # trailing' : '';
        const pad = ind + ' '.repeat(e.dashExtra);
        switch (e.style) {
          case 'block':
            out.push(`${ind}${e.name}:${trail}`);
            e.items.forEach((k, i) => {
              out.push(...itemLines(k, n++, pad, anchors));
              if (e.commentInside && i === 0) out.push(`${pad}  # inside`);
            });
            break;
          case 'flow':
            out.push(`${ind}${e.name}: [{command: /usr/local/bin/flow-${n++}}, {command: "/x y"}]${trail}`);
            break;
          case 'flow-empty':
            out.push(`${ind}${e.name}: []${trail}`);
            break;
          case 'null-implicit':
            out.push(`${ind}${e.name}:${trail}`);
            break;
          case 'null-tilde':
            out.push(`${ind}${e.name}: ~${trail}`);
            break;
        }
        if (e.blankAfter) out.push('');
      }
      break;
    }
  }
  if (c.commentAfterHooks) out.push('# after the hooks');
  return out;
}

function render(c: ConfigSpec, plugins: readonly string[] = [], pluginsFirst = false): string {
  const parts = c.sections.map((s) => SECTIONS[s]!);
  const at = Math.min(c.hooksAt, parts.length);
  const body = [...parts.slice(0, at).flat(), ...hooksLines(c), ...parts.slice(at).flat()];
  const lines = pluginsFirst ? [...plugins, ...body] : [...body, ...plugins];
  let text = lines.join(c.eol);
  if (c.finalNewline && lines.length > 0) text += c.eol;
  return (c.bom ? '\uFEFF' : '') + text;
}

// ---------------------------------------------------------------- checks

const ENTRY: HookEntry = { command: '/usr/bin/node /home/u/.aep/state/hermes-aep/shim/0.1.0/hook.cjs', timeout: 10 };
const MOVED: HookEntry = { command: "'/opt/node dir/bin/node' /srv/state/shim/0.2.0/hook.cjs --state-dir /srv/state", timeout: 20 };
/** `install --control --instruct`: the gates in the command, pre_tool_call's timeout above the shim's hold */
const GATED: HookEntry = {
  command: '/usr/bin/node /home/u/.aep/state/hermes-aep/shim/0.1.0/hook.cjs --control --attention-timeout-ms 55000 --instruct',
  timeout: 10,
  timeouts: { pre_tool_call: 60 },
};
/** the same gates with a longer window and an explicit --timeout for the others */
const GATED_MOVED: HookEntry = {
  command: "'/opt/node dir/bin/node' /srv/state/shim/0.2.0/hook.cjs --state-dir /srv/state --control --attention-timeout-ms 120000",
  timeout: 30,
  timeouts: { pre_tool_call: 125 },
};

function load(text: string): Record<string, any> {
  const doc = parseDocument(text, { version: '1.1', uniqueKeys: false });
  expect(doc.errors.map((e) => e.message)).toEqual([]);
  return (doc.toJS({ maxAliasCount: -1 }) ?? {}) as Record<string, any>;
}

function withoutOurs(entries: unknown): unknown[] {
  if (!Array.isArray(entries)) return [];
  return entries.filter((e) => !(e && typeof e === 'object' && isOurCommand((e as { command?: unknown }).command)));
}

/** Ours once per installed event (none under the others); everything else means what it meant before. */
function expectSemantics(before: string, after: string, entry: HookEntry, events: readonly string[] = REGISTERED_HOOKS): void {
  expectSameExceptOurs(load(before), load(after), entry, events);
}

function expectSameExceptOurs(a: Record<string, any>, b: Record<string, any>, entry: HookEntry, events: readonly string[] = REGISTERED_HOOKS): void {
  const { hooks: ha, ...restA } = a;
  const { hooks: hb, ...restB } = b;
  expect(restB).toEqual(restA);
  const hooksA = (ha ?? {}) as Record<string, unknown>;
  const hooksB = (hb ?? {}) as Record<string, unknown>;
  for (const event of REGISTERED_HOOKS) {
    const ours = (Array.isArray(hooksB[event]) ? (hooksB[event] as unknown[]) : []).filter((e) => !withoutOurs([e]).length);
    expect(ours, event).toEqual(events.includes(event) ? [{ command: entry.command, timeout: timeoutFor(entry, event) }] : []);
  }
  for (const event of new Set([...Object.keys(hooksA), ...Object.keys(hooksB)])) {
    expect(withoutOurs(hooksB[event]), event).toEqual(withoutOurs(hooksA[event]));
  }
}

/** Insert `- command: /usr/local/bin/late` after our block entry for `event` (undefined when ours is not a block item). */
function addUserHookAfterOurs(text: string, event: string): string | undefined {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(eol);
  const indent = (l: string) => /^ */.exec(l)![0].length;
  let key = -1;
  lines.forEach((l, i) => {
    if (new RegExp(`^\\s+${event}:`).test(l)) key = i;
  });
  if (key === -1) return undefined;
  const col = indent(lines[key]!);
  for (let i = key + 1; i < lines.length; i++) {
    const l = lines[i]!;
    const inside = l.trim() === '' || l.trimStart().startsWith('#') || indent(l) > col || (indent(l) === col && l.trimStart().startsWith('- '));
    if (!inside) return undefined;
    if (/^\s*- command: .*# added by hermes-aep$/.test(l) && /timeout: \d+ {2}# added by hermes-aep$/.test(lines[i + 1] ?? '')) {
      lines.splice(i + 2, 0, `${/^(\s*)-/.exec(l)![1]!}- command: /usr/local/bin/late`);
      return lines.join(eol);
    }
  }
  return undefined;
}

describe('install → uninstall round trip on config.yaml (property)', () => {
  it('gives back the original bytes; install twice = install once; a moved install replaces the entry (gates off and on)', () => {
    fc.assert(
      fc.property(
        configArb,
        fc.constantFrom<[HookEntry, HookEntry]>([ENTRY, MOVED], [GATED, GATED_MOVED], [ENTRY, GATED], [GATED, ENTRY]),
        fc.constantFrom(...EVENT_SETS),
        fc.constantFrom(...EVENT_SETS),
        (c, [entry, next], events, nextEvents) => {
          const original = render(c);
          if (c.hooks === 'flow-nonempty') {
            // a flow `hooks: {...}` holding other hooks is refused with the reason, never rewritten
            expect(() => addHooks(original, entry, events)).toThrow(/flow/);
            return;
          }
          const once = addHooks(original, entry, events);
          expect(once.changed).toBe(true);
          expectSemantics(original, once.text, entry, events);
          expect(removeHooks(once.text).text).toBe(original);

          const twice = addHooks(once.text, entry, events);
          expect(twice.changed).toBe(false);
          expect(twice.text).toBe(once.text);

          // switching to or from --no-model-calls: the same bytes as a direct install of that set (which uninstalls
          // back to the original; what the user's own post_api_request entries mean is checked on `moved` below)
          if (events !== nextEvents) {
            const switched = addHooks(once.text, entry, nextEvents);
            expect(switched.changed).toBe(true);
            expect(switched.text).toBe(addHooks(original, entry, nextEvents).text);
          }

          // the user adds a hook of their own right after ours, between install and uninstall
          const ev = REGISTERED_HOOKS[c.hooksAt % REGISTERED_HOOKS.length]!;
          const edited = addUserHookAfterOurs(once.text, ev);
          if (edited !== undefined) {
            const back = removeHooks(edited).text;
            const a = load(original);
            const b = load(back);
            expect(withoutOurs(b.hooks?.[ev])).toEqual([...withoutOurs(a.hooks?.[ev]), { command: '/usr/local/bin/late' }]);
            expect(JSON.stringify(b)).not.toContain('hook.cjs');
            expect(removeHooks(addHooks(back, entry, events).text).text).toBe(back);
          }

          // a new path, new gates or new timeouts (and maybe the other event set) replace our entries
          const moved = addHooks(once.text, next, nextEvents);
          expect(moved.changed).toBe(true);
          expectSemantics(original, moved.text, next, nextEvents);
          expect(removeHooks(moved.text).text).toBe(original);
          expect(addHooks(moved.text, entry, events).text).toBe(once.text);
          // uninstall of a config without our entries changes nothing
          expect(removeHooks(original).text).toBe(original);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the plugin transport: enable → uninstall gives back the bytes; twice = once; switching transports both ways round-trips', () => {
    fc.assert(
      fc.property(configArb, pluginsArb, (c, p) => {
        const original = render(c, pluginsLines(p), p.first);
        const a = load(original);
        const userEnabled = Array.isArray(a.plugins?.enabled) && (a.plugins.enabled as unknown[]).includes('hermes-aep');
        if (p.form === 'block' && p.disabled.includes('hermes-aep')) {
          expect(() => enablePlugin(original)).toThrow(/plugins.disabled lists hermes-aep/);
          return;
        }
        if (p.form === 'block' && p.enabled === 'multiline-flow' && !userEnabled) {
          expect(() => enablePlugin(original)).toThrow(/several lines/);
          return;
        }
        const once = enablePlugin(original);
        const b = load(once.text);
        // what Hermes reads: the same config, with hermes-aep enabled
        expect(b.plugins.enabled).toContain('hermes-aep');
        expect(b.plugins.enabled.filter((n: string) => n !== 'hermes-aep')).toEqual(((a.plugins?.enabled ?? []) as string[]).filter((n) => n !== 'hermes-aep'));
        const { plugins: pa, ...restA } = a;
        const { plugins: pb, ...restB } = b;
        expect(restB).toEqual(restA);
        expect({ ...(pb ?? {}), enabled: undefined }).toEqual({ ...(pa ?? {}), enabled: undefined });
        expect(once.changed).toBe(!userEnabled);
        expect(removeHooks(once.text).text).toBe(original);
        expect(enablePlugin(once.text).changed).toBe(false);
        if (c.hooks === 'flow-nonempty') return;
        // plugin → shell → uninstall, and shell → plugin → uninstall (gates off and on)
        for (const [entry, events] of [
          [ENTRY, REGISTERED_HOOKS],
          [GATED, NO_MODEL_CALLS],
        ] as const) {
          const shell = addHooks(once.text, entry, events);
          expect(load(shell.text).plugins?.enabled ?? []).toEqual(userEnabled ? a.plugins.enabled : (a.plugins?.enabled ?? []));
          expect(removeHooks(shell.text).text).toBe(original);
          const back = enablePlugin(addHooks(original, entry, events).text);
          expect(back.text).toBe(once.text);
          expect(removeHooks(back.text).text).toBe(original);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the issue repro: three install/uninstall cycles leave the file as it was', () => {
    const original = 'model:\n  default: x\n\n# my hooks\nhooks:\n  on_session_end:\n    - command: /bin/true\n';
    let text = original;
    for (let i = 0; i < 3; i++) {
      text = addHooks(text, ENTRY).text;
      expect(text.split('# my hooks').length - 1).toBe(1);
      text = removeHooks(text).text;
      expect(text).toBe(original);
    }
  });

  it('`hooks: {}` and inline comment spacing survive byte for byte', () => {
    for (const original of ['hooks: {}\n', 'a: 1      # wide\nhooks: {}\nb: 2\n', 'x: 1  # c\nhooks:\n']) {
      expect(removeHooks(addHooks(original, ENTRY).text).text).toBe(original);
    }
  });

  it('entries the user adds in between stay; only ours go', () => {
    const original = 'model:\n  default: x\n';
    const once = addHooks(original, ENTRY).text;
    // the user appends their own hook under an event install created, and a key of their own
    const edited = once.replace(/( {2}on_session_end:.*\r?\n(?: {4}.*\r?\n)*)/, '$1    - command: /usr/local/bin/mine\n') + 'extra: true\n';
    const back = removeHooks(edited).text;
    expect(load(back).hooks).toEqual({ on_session_end: [{ command: '/usr/local/bin/mine' }] });
    expect(load(back).extra).toBe(true);
    expect(back).not.toMatch(/hook\.cjs/);
  });

  it('a replaced line whose key the user kept stays a comment, now and through later install/uninstall cycles', () => {
    const original = 'hooks: {}\nother: 1\n';
    const once = addHooks(original, ENTRY).text;
    const edited = once.replace(/( {2}on_session_end:.*\r?\n(?: {4}.*\r?\n)*)/, '$1    - command: /usr/local/bin/mine\n');
    const back = removeHooks(edited).text;
    expect(back.startsWith('# replaced by hermes-aep: hooks: {}\nhooks:\n  on_session_end:\n    - command: /usr/local/bin/mine\n')).toBe(true);
    expect(removeHooks(addHooks(back, ENTRY).text).text).toBe(back);
  });
});

describe('what Hermes reads: PyYAML on the installed config', () => {
  it('sees our entry once per event and every other value as before', () => {
    requirePython('yaml');
    const samples = fc.sample(
      configArb.filter((c) => c.hooks !== 'flow-nonempty'),
      { numRuns: 200, seed: 11 },
    );
    const entryOf = (i: number) => (i % 2 ? GATED : ENTRY);
    const eventsOf = (i: number) => EVENT_SETS[Math.floor(i / 2) % 2]!;
    const docs = samples.flatMap((c, i) => {
      const original = render(c);
      return [original, addHooks(original, entryOf(i), eventsOf(i)).text];
    });
    const py = 'import sys, json, yaml\nprint(json.dumps([yaml.safe_load(s.encode("utf-8")) for s in json.load(sys.stdin)], default=str))';
    const loaded = JSON.parse(execFileSync('python3', ['-c', py], { input: JSON.stringify(docs), maxBuffer: 64 << 20 }).toString()) as (Record<
      string,
      any
    > | null)[];
    for (let i = 0; i < samples.length; i++) expectSameExceptOurs(loaded[2 * i] ?? {}, loaded[2 * i + 1] ?? {}, entryOf(i), eventsOf(i));
  });
});

describe('install → uninstall round trip through the real CLI (config.yaml and allowlist bytes)', () => {
  it('gives back both files byte for byte, creates and deletes what did not exist', async () => {
    const samples = fc.sample(
      configArb.filter((c) => c.hooks !== 'flow-nonempty'),
      { numRuns: 9, seed: 8 },
    );
    const allowlists = [
      undefined,
      '{\n  "approvals": [\n    {\n      "approved_at": "2026-01-01T00:00:00Z",\n      "command": "/usr/local/bin/guard-0",\n      "event": "pre_tool_call",\n      "script_mtime_at_approval": null\n    }\n  ]\n}',
      '{"approvals": [], "other": {"k": [1, 2]}}\n',
    ];
    for (const [i, c] of samples.entries()) {
      const home = tempDir();
      const state = tempDir();
      const cfg = path.join(home, 'config.yaml');
      const allow = path.join(home, 'shell-hooks-allowlist.json');
      const original = render(c);
      writeFileSync(cfg, original);
      const allowText = allowlists[i % allowlists.length];
      if (allowText !== undefined) writeFileSync(allow, allowText);
      const env = { ...process.env, HERMES_HOME: home, AEP_STATE_DIR: state, AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', AEP_ATTENTION_TIMEOUT_MS: '' };
      // every third sample with the gates (and so a pre_tool_call timeout of its own), one of them from the environment
      const gates = i % 3 === 0 ? ['--control', '--instruct'] : [];
      if (i % 3 === 1) Object.assign(env, { AEP_HERMES_CONTROL: '1', AEP_ATTENTION_TIMEOUT_MS: '120000' });
      // every other sample starts with --no-model-calls, and each switches once to the other way and back
      const [first, other] = i % 2 === 0 ? [['--no-model-calls'], []] : [[], ['--no-model-calls']];
      await run(process.execPath, [CLI, 'install', ...gates, ...first], { env });
      const installed = readFileSync(cfg, 'utf8');
      const installedAllow = readFileSync(allow, 'utf8');
      if (gates.length || env.AEP_HERMES_CONTROL) expect(installed).toContain('--control');
      await run(process.execPath, [CLI, 'install', ...gates, ...first], { env });
      expect(readFileSync(cfg, 'utf8')).toBe(installed);
      expect(readFileSync(allow, 'utf8')).toBe(installedAllow);
      await run(process.execPath, [CLI, 'install', ...gates, ...other], { env });
      const approved = (JSON.parse(readFileSync(allow, 'utf8')) as { approvals: { event: string; command: string }[] }).approvals
        .filter((a) => isOurCommand(a.command))
        .map((a) => a.event);
      expect(approved).toEqual(other.length ? NO_MODEL_CALLS : [...REGISTERED_HOOKS]);
      await run(process.execPath, [CLI, 'install', ...gates, ...first], { env });
      expect(readFileSync(cfg, 'utf8')).toBe(installed);
      await run(process.execPath, [CLI, 'uninstall'], { env });
      expect(readFileSync(cfg, 'utf8')).toBe(original);
      if (allowText === undefined) expect(existsSync(allow)).toBe(false);
      else expect(readFileSync(allow, 'utf8')).toBe(allowText);
    }
  });

  it('a missing config.yaml is created by install and removed again by uninstall', async () => {
    const home = path.join(tempDir(), 'fresh-hermes-home');
    mkdirSync(home);
    const env = { ...process.env, HERMES_HOME: home, AEP_STATE_DIR: tempDir() };
    await run(process.execPath, [CLI, 'install'], { env });
    expect(existsSync(path.join(home, 'config.yaml'))).toBe(true);
    await run(process.execPath, [CLI, 'uninstall'], { env });
    expect(existsSync(path.join(home, 'config.yaml'))).toBe(false);
    expect(existsSync(path.join(home, 'shell-hooks-allowlist.json'))).toBe(false);
  });
});
