/**
 * Capture down-leveling (AEP-0001 §8.2b, AEP-0002 §5.1) and the type-dependent
 * gating of form answers (AEP-0006). Both are pure: they read the payload
 * annotations and the envelope, never the clock or the network, so any hop
 * (adapter, fan-out, exporter) can apply them and get the same bytes.
 */
import { annotationsFor, type AnnotationNode } from './annotations.js';
import { captureRank, DEFAULT_CAPTURE, isCaptureLevel, type CaptureLevel } from '../core/capture-levels.js';
import { redactValue, type RedactOptions } from './redact.js';
import type { CaptureEvent, FormFieldSpec } from './types.js';

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Set an own property even for the key `__proto__`, which plain assignment would treat as the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

function cloneJson(value: unknown): unknown {
  return value === undefined ? undefined : structuredClone(value);
}

function childAnnotation(node: AnnotationNode, key: string): AnnotationNode | undefined {
  const props = node.properties;
  return props !== undefined && Object.prototype.hasOwnProperty.call(props, key) ? props[key] : undefined;
}

/**
 * Copy `value`, dropping every annotated member whose minimum level exceeds
 * `level`. Members the schema does not describe default to `metadata`
 * (AEP-0002 §5.1 rule 4) and are kept, since `level` is at least `metadata`,
 * unless the schema is closed, in which case they are invalid and dropped.
 */
function prune(value: unknown, node: AnnotationNode, level: CaptureLevel): unknown {
  const rank = captureRank(level);
  if (node.properties !== undefined && isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      const child = childAnnotation(node, key);
      if (child === undefined) {
        if (node.closed !== true) setOwn(out, key, cloneJson(member));
      } else if (captureRank(child.capture) <= rank) {
        setOwn(out, key, prune(member, child, level));
      }
    }
    return out;
  }
  if (node.items !== undefined && Array.isArray(value)) {
    if (captureRank(node.items.capture) > rank) return [];
    const items = node.items;
    return value.map((item: unknown) => prune(item, items, level));
  }
  return cloneJson(value);
}

/** A token that can name an attention kind but cannot carry prose (no spaces). */
const KIND_TOKEN_RE = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The AEP-0003 §9.2 synthesized prompt, built only from structural metadata:
 * `"{agent} requests {kind}: {subject}"` (the `: {subject}` part omitted when
 * the Event has no subject).
 */
export function synthesizePrompt(agent: string, kind: unknown, subject: unknown): string {
  const k = typeof kind === 'string' && KIND_TOKEN_RE.test(kind) ? kind : 'other';
  const base = `${agent} requests ${k}`;
  return typeof subject === 'string' && subject.length > 0 ? `${base}: ${subject}` : base;
}

/** A label's structural placeholder: the entry's id, or its 1-based index when it has none. */
function placeholderFor(entry: Record<string, unknown>, index: number): string {
  const id = entry['id'];
  if (typeof id === 'string' || typeof id === 'number') return String(id);
  return String(index + 1);
}

/** Replace every `label` of a list of `{id, label}` entries by its placeholder. */
function degradeLabels(list: unknown): void {
  if (!Array.isArray(list)) return;
  list.forEach((entry: unknown, index: number) => {
    if (isRecord(entry) && Object.prototype.hasOwnProperty.call(entry, 'label')) {
      entry['label'] = placeholderFor(entry, index);
    }
  });
}

/**
 * `attention.requested` below `redacted`: the [metadata*] fields keep their
 * place but lose their content (AEP-0002 §5.3, AEP-0006): the prompt is
 * synthesized, option/field/choice labels become their ids.
 */
function degradeAttentionRequested(data: Record<string, unknown>, event: CaptureEvent): void {
  if (Object.prototype.hasOwnProperty.call(data, 'prompt')) {
    data['prompt'] = synthesizePrompt(event.agent, data['kind'], event.subject);
  }
  degradeLabels(data['options']);
  const fields = data['fields'];
  if (Array.isArray(fields)) {
    degradeLabels(fields);
    for (const field of fields) {
      if (isRecord(field)) degradeLabels(field['choices']);
    }
  }
}

/**
 * `answer.values` below `redacted` without the request's field_specs: a hop
 * cannot tell a closed-select id from free text, so only numbers and booleans
 * (structural by construction) survive. Dropping more than required is legal
 * (AEP-0001 §8.2b); leaking free text is not.
 */
function degradeAnswerValues(data: Record<string, unknown>): void {
  const answer = data['answer'];
  if (!isRecord(answer) || !Object.prototype.hasOwnProperty.call(answer, 'values')) return;
  const values = answer['values'];
  if (!isRecord(values)) {
    delete answer['values'];
    return;
  }
  const kept: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(values)) {
    if (typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) setOwn(kept, key, v);
  }
  answer['values'] = kept;
}

/** Per-type handling of the [metadata*] exception fields when landing below `redacted`. */
const METADATA_STAR_HANDLERS: ReadonlyMap<string, (data: Record<string, unknown>, event: CaptureEvent) => void> = new Map([
  ['attention.requested', degradeAttentionRequested],
  ['attention.answered', degradeAnswerValues],
  ['control.attention.respond', degradeAnswerValues],
]);

/** The level an Event claims; a missing claim is the envelope default, a malformed one is treated as `full`. */
function claimedCapture(event: CaptureEvent): CaptureLevel {
  const c: unknown = event.capture;
  if (c === undefined) return DEFAULT_CAPTURE;
  return isCaptureLevel(c) ? c : 'full';
}

/**
 * Lower an Event to a capture ceiling, returning a new Event (the input is
 * never mutated). A ceiling at or above the claimed level returns an
 * unchanged copy. Otherwise `capture` is rewritten and `data` pruned by the
 * payload annotations; a `redacted` ceiling on a `full` Event lands on
 * `metadata`, because a mechanical hop cannot mint the redaction claim
 * (AEP-0001 §8.2e); [metadata*] fields degrade structurally; a type with no
 * annotations loses `data` entirely; ceiling `none` keeps the envelope only.
 * A malformed ceiling is treated as `none` (fail closed).
 */
export function downlevel<E extends CaptureEvent>(event: E, ceiling: CaptureLevel): E {
  const ceil: CaptureLevel = isCaptureLevel(ceiling) ? ceiling : 'none';
  const claimed = claimedCapture(event);
  if (captureRank(ceil) >= captureRank(claimed)) return structuredClone(event);

  const target: CaptureLevel = ceil === 'redacted' ? 'metadata' : ceil;
  const { data, ...envelope } = event;
  const out = structuredClone(envelope) as Record<string, unknown>;
  out['capture'] = target;

  if (target !== 'none' && isRecord(data)) {
    const node = annotationsFor(event.type);
    if (node !== undefined) {
      const pruned = prune(data, node, target);
      if (isRecord(pruned)) {
        METADATA_STAR_HANDLERS.get(event.type)?.(pruned, event);
        out['data'] = pruned;
      }
    }
  }
  return out as E;
}

/**
 * Whether a form answer is structural (AEP-0002 §5.3 `values` rule): finite
 * numbers for `number`, booleans for `boolean`, and `choices[].id` strings
 * (or arrays of them) for `select`. `string` fields and `other` free text
 * never are.
 */
function isStructuralAnswer(spec: FormFieldSpec, value: unknown): boolean {
  switch (spec.type) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'select': {
      const ids = new Set<string>();
      for (const choice of spec.choices ?? []) {
        if (isRecord(choice) && typeof choice.id === 'string') ids.add(choice.id);
      }
      if (typeof value === 'string') return ids.has(value);
      if (Array.isArray(value)) return value.every((v: unknown) => typeof v === 'string' && ids.has(v));
      return false;
    }
    default:
      return false;
  }
}

/**
 * Gate an `answer.values` map for a capture ceiling using the request's
 * field_specs (AEP-0006): keys with no field_spec are dropped at every level;
 * below `redacted` (including `none`, whose wholesale `data` drop is the
 * caller's job) only structural answers survive; at `redacted` free-text
 * answers pass through the §9.4 pipeline; at `full` everything is kept
 * verbatim. Returns a new object.
 */
export function gateFormValues(fields: readonly FormFieldSpec[], values: unknown, ceiling: CaptureLevel, opts: RedactOptions = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isRecord(values)) return out;
  const specs = new Map<string, FormFieldSpec>();
  for (const spec of fields) {
    if (isRecord(spec) && typeof spec.id === 'string' && !specs.has(spec.id)) specs.set(spec.id, spec);
  }
  const rank = captureRank(isCaptureLevel(ceiling) ? ceiling : 'none');
  for (const [key, value] of Object.entries(values)) {
    const spec = specs.get(key);
    if (spec === undefined) continue;
    if (isStructuralAnswer(spec, value)) {
      setOwn(out, key, cloneJson(value));
    } else if (rank >= captureRank('full')) {
      setOwn(out, key, cloneJson(value));
    } else if (rank >= captureRank('redacted')) {
      setOwn(out, key, redactValue(value, opts));
    }
  }
  return out;
}
