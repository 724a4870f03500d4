/**
 * The maintained secret-detection ruleset behind rule (a) of the §9.4
 * pipeline: every scanner rule of `@secretlint/secretlint-rule-preset-recommend`,
 * driven synchronously through secretlint's own rule API.
 *
 * `@secretlint/core`'s `lintSource` is per file and always asynchronous (an
 * event emitter resolved through promises), which the synchronous redaction on
 * the hook path cannot await. The rules themselves are synchronous functions
 * over `source.content` that call `context.report({range})`; this module is
 * the smallest host for them: it creates each rule once with a context whose
 * `report` collects ranges, and calls its `file` handler on each string.
 *
 * Deliberate differences from the secretlint CLI:
 * - `context.ignore` (and so the preset's `filter-comments` rule, which turns
 *   `secretlint-disable` comments in the content into ignores) is never
 *   honoured: redacted content must not be able to switch its own redaction off.
 * - A rule that throws, or answers with a promise (work the hook path cannot
 *   wait for), fails closed: the whole string counts as a secret.
 * - Rule messages are never built from the match (the translator returns the
 *   message id alone), so no secret is copied anywhere.
 */
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import type {
  SecretLintRuleContext,
  SecretLintRuleCreator,
  SecretLintRuleReportHandler,
  SecretLintSourceCode,
  SecretLintSourceNodeLocation,
  SecretLintSourceNodePosition,
  SecretLintSourceNodeRange,
} from '@secretlint/types';

/** A half-open character range `[start, end)` of the scanned string. */
export type Range = readonly [start: number, end: number];

const RULE_ID_PREFIX = '@secretlint/secretlint-rule-';

/**
 * Options per rule (by short id); the preset's defaults otherwise. None today:
 * the AWS rule's `enableIDScanRule` (key ids and account ids) would cost five
 * times the rest of the AWS rule per call, account ids are not secrets, and
 * the pipeline's own AWS rule already takes every access key id shape.
 */
const RULE_OPTIONS: Readonly<Record<string, Record<string, unknown>>> = {};

/** A file identity a rule keys its checks on (secretlint reads some only in certain files). */
type SourceIdentity = { readonly filePath: string | undefined; readonly ext: string };

const PLAIN: SourceIdentity = { filePath: undefined, ext: '' };

/**
 * Which identities each rule sees a string under. Most rules read only the
 * content (`PLAIN`). `npm` checks `_authToken=` only in an `.npmrc`, so it
 * also reads each string as one. `gcp` reads a whole service-account key file
 * as `.json`, and only when the string names a private key (the rule itself
 * parses and checks it), so ordinary strings skip a JSON parse.
 */
const RULE_SOURCES: Readonly<Record<string, (text: string) => readonly SourceIdentity[]>> = {
  npm: () => [PLAIN, { filePath: '.npmrc', ext: '' }],
  gcp: (text) => (text.includes('private_key') ? [{ filePath: 'key.json', ext: '.json' }] : []),
};

/** `[A-Za-z0-9_-]`: the characters of a GitHub token's segments */
function isTokenChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;
}

/**
 * The farthest a `ghs_<app id>_<first segment>` may run before the `.` that
 * must end its first segment: `ghs_`, at most 20 digits, `_`, at most 1000.
 */
const APP_TOKEN_HEAD_MAX = 4 + 20 + 1 + 1000;

/**
 * What the `github` rule reads: the string with every `ghs_` that cannot
 * begin an app installation token (`ghs_<id>_<seg>.<seg>.<seg>`) spelled
 * `ghr_`, same length, so every range stays where it is. Such a start cannot
 * match because its run of token characters does not end in a `.`, or ends
 * in one too far away for the first segment; the rule's other patterns take
 * `ghr_` exactly as `ghs_` (same alternation, same lookarounds), and only
 * ranges are kept. Why: the app-token pattern scans up to 1000 characters
 * from every `ghs_` before it fails, so a run of `ghs_1_ghs_1_…` cost ~50
 * times ordinary text (linear, but the largest factor of any input).
 * A test runs the rule on random strings both ways and wants the same ranges.
 */
export function quietAppTokenStarts(text: string): string {
  let at = text.indexOf('ghs_');
  if (at === -1) return text;
  const parts: string[] = [];
  let from = 0;
  let runEnd = -1;
  for (; at !== -1; at = text.indexOf('ghs_', at + 4)) {
    if (at > runEnd) for (runEnd = at; runEnd < text.length && isTokenChar(text.charCodeAt(runEnd));) runEnd++;
    if (text.charCodeAt(runEnd) === 46 /* . */ && runEnd - at <= APP_TOKEN_HEAD_MAX) continue;
    parts.push(text.slice(from, at + 2), 'r');
    from = at + 3;
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(from));
  return parts.join('');
}

/**
 * What a rule reads instead of the string itself, where that is cheaper and
 * finds exactly the same ranges (see each function).
 */
const RULE_CONTENT: Readonly<Record<string, (text: string) => string>> = {
  github: quietAppTokenStarts,
};

/**
 * Preset rules this host does not run, with the reason. Every other rule the
 * installed preset carries is run: a new scanner rule after an upgrade detects
 * from day one (and the unit test then asks for a planted secret of its family).
 */
export const SKIPPED_RULES: Readonly<Record<string, string>> = {
  'filter-comments': 'it only turns secretlint-disable comments in the content into ignores; content must not steer its own redaction',
};

/** One string as the secretlint source a rule reads. Location helpers are computed on demand. */
class StringSource implements SecretLintSourceCode {
  readonly hasBOM = false;
  readonly physicalFilePath = undefined;
  readonly contentType = 'text' as const;
  private lineStarts: number[] | undefined;

  constructor(
    readonly content: string,
    readonly filePath: string | undefined,
    readonly ext: string,
  ) {}

  getFilePath(): string | undefined {
    return this.filePath;
  }

  getPhysicalFilePath(): string | undefined {
    return undefined;
  }

  private starts(): number[] {
    if (this.lineStarts === undefined) {
      const starts = [0];
      for (let i = this.content.indexOf('\n'); i !== -1; i = this.content.indexOf('\n', i + 1)) starts.push(i + 1);
      this.lineStarts = starts;
    }
    return this.lineStarts;
  }

  indexToPosition(index: number): SecretLintSourceNodePosition {
    const starts = this.starts();
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: index - starts[lo]! };
  }

  positionToIndex(pos: SecretLintSourceNodePosition): number {
    return (this.starts()[pos.line - 1] ?? this.content.length) + pos.column;
  }

  rangeToLocation(range: SecretLintSourceNodeRange): SecretLintSourceNodeLocation {
    return { start: this.indexToPosition(range[0]), end: this.indexToPosition(range[1]) };
  }

  locationToRange(loc: SecretLintSourceNodeLocation): SecretLintSourceNodeRange {
    return [this.positionToIndex(loc.start), this.positionToIndex(loc.end)];
  }
}

interface HostedRule {
  readonly id: string;
  readonly file: NonNullable<SecretLintRuleReportHandler['file']>;
  readonly sources: (text: string) => readonly SourceIdentity[];
  readonly content: ((text: string) => string) | undefined;
}

function shortId(rule: SecretLintRuleCreator<unknown>): string {
  const id = rule.meta.id;
  return id.startsWith(RULE_ID_PREFIX) ? id.slice(RULE_ID_PREFIX.length) : id;
}

/** One report: the rule's short id and the range it reported. */
export interface SecretlintReport {
  readonly rule: string;
  readonly range: Range;
}

/** What one scan found. */
export interface SecretlintFindings {
  readonly reports: readonly SecretlintReport[];
  /** a rule threw or went asynchronous: the caller must treat the whole string as secret */
  readonly failed: boolean;
}

/** A set of secretlint rules, created once, scanning one string per call. */
export interface SecretlintHost {
  /** short ids of the rules run */
  readonly ruleIds: readonly string[];
  scan(text: string): SecretlintFindings;
}

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

/**
 * Host secretlint scanner rules: each is created once with a context whose
 * `report` collects ranges into the scan in progress (the rules run
 * synchronously, one scan at a time), whose translator returns the message id
 * alone (a rule's message embeds the match, which must not be copied), and
 * whose `ignore` does nothing.
 */
export function createSecretlintHost(rules: readonly SecretLintRuleCreator<unknown>[]): SecretlintHost {
  let collecting: Range[] | undefined;
  const context: SecretLintRuleContext = {
    sharedOptions: {},
    createTranslator: () => (messageId) => ({ message: String(messageId), messageId: String(messageId), data: undefined }),
    report(descriptor) {
      collecting?.push([descriptor.range[0], descriptor.range[1]]);
    },
    ignore() {
      // never honoured (see the module comment)
    },
  };
  const hosted: HostedRule[] = rules.flatMap((rule) => {
    const id = shortId(rule);
    if (Object.hasOwn(SKIPPED_RULES, id) || rule.meta.type !== 'scanner') return [];
    const supported = rule.meta.supportedContentTypes;
    if (!supported.includes('text') && !supported.includes('all')) return [];
    const handler = rule.create(context, RULE_OPTIONS[id] ?? {});
    const file = handler.file?.bind(handler);
    if (file === undefined) return [];
    return [{ id, file, sources: RULE_SOURCES[id] ?? (() => [PLAIN]), content: RULE_CONTENT[id] }];
  });

  const scan = (text: string): SecretlintFindings => {
    const reports: SecretlintReport[] = [];
    let failed = false;
    const plain = new StringSource(text, PLAIN.filePath, PLAIN.ext);
    for (const rule of hosted) {
      for (const identity of rule.sources(text)) {
        const found: Range[] = [];
        collecting = found;
        try {
          const content = rule.content?.(text) ?? text;
          const source = identity === PLAIN && content === text ? plain : new StringSource(content, identity.filePath, identity.ext);
          const result: unknown = rule.file(source);
          if (isThenable(result)) {
            // Work the hook path cannot wait for: fail closed, and keep the rejection handled.
            Promise.resolve(result).catch(() => undefined);
            failed = true;
          }
        } catch {
          failed = true;
        } finally {
          collecting = undefined;
        }
        for (const range of found) reports.push({ rule: rule.id, range });
      }
    }
    return { reports, failed };
  };
  return { ruleIds: hosted.map((r) => r.id), scan };
}

const PRESET_RULES = recommended.rules as readonly SecretLintRuleCreator<unknown>[];

/** The installed preset's rules, by short id, in the preset's order. */
export const PRESET_RULE_IDS: readonly string[] = PRESET_RULES.map(shortId);

const presetHost = createSecretlintHost(PRESET_RULES);

/** The short ids of the preset rules the pipeline runs. */
export const HOSTED_RULE_IDS: readonly string[] = presetHost.ruleIds;

/** Run every hosted preset rule over `text`, synchronously. */
export function scanWithSecretlint(text: string): SecretlintFindings {
  return presetHost.scan(text);
}
