/**
 * Per-field capture annotations (AEP-0002 §5.1): every payload property's
 * `x-aep-capture` names the minimum level at which it may be present. This
 * module turns the shipped payload schemas into a lookup table once, so
 * down-leveling is mechanical and needs no schema validator at run time.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPackageRoot } from '../util/package-root.js';
import { isCaptureLevel, type CaptureLevel } from '../core/capture-levels.js';

/**
 * The capture annotation of one schema node: its own minimum level, plus the
 * annotations of its object properties and array items where the schema
 * declares them. Members a schema does not describe default to `metadata`
 * (AEP-0002 §5.1 rule 4) unless the schema is closed.
 */
export interface AnnotationNode {
  readonly capture: CaptureLevel;
  readonly properties?: Readonly<Record<string, AnnotationNode>>;
  readonly items?: AnnotationNode;
  /** The schema forbids undeclared members (`additionalProperties: false`): down-leveling drops them. */
  readonly closed?: boolean;
}

/** Schema directories scanned, relative to the package root (core types, then Hermes vendor types). */
const SCHEMA_DIRS: readonly string[] = ['schemas/types', 'schemas/x-hermes'];
const SCHEMA_SUFFIX = '.schema.json';

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/**
 * Build the annotation tree of one schema node. A missing annotation defaults
 * to `metadata` (§5.1 rule 4); an unrecognized value is treated as `full`, the
 * conservative reading, so a typo can only drop content, never leak it.
 */
function buildNode(schema: Record<string, unknown>, fallback: CaptureLevel): AnnotationNode {
  const raw = schema['x-aep-capture'];
  const capture: CaptureLevel = raw === undefined ? fallback : isCaptureLevel(raw) ? raw : 'full';
  let properties: Record<string, AnnotationNode> | undefined;
  const props = schema['properties'];
  if (isRecord(props)) {
    properties = {};
    for (const [name, child] of Object.entries(props)) {
      if (isRecord(child)) properties[name] = buildNode(child, 'metadata');
    }
  }
  const itemsSchema = schema['items'];
  const items = isRecord(itemsSchema) ? buildNode(itemsSchema, 'metadata') : undefined;
  return {
    capture,
    ...(properties !== undefined ? { properties } : {}),
    ...(items !== undefined ? { items } : {}),
    ...(schema['additionalProperties'] === false ? { closed: true } : {}),
  };
}

function loadTable(): ReadonlyMap<string, AnnotationNode> {
  const table = new Map<string, AnnotationNode>();
  const root = findPackageRoot();
  if (root === undefined) return table;
  for (const rel of SCHEMA_DIRS) {
    const dir = join(root, rel);
    if (!existsSync(dir)) continue;
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(SCHEMA_SUFFIX))
      .sort();
    for (const file of files) {
      const type = file.slice(0, -SCHEMA_SUFFIX.length);
      const path = join(dir, file);
      let parsed: unknown;
      try {
        parsed = JSON.parse(readFileSync(path, 'utf8'));
      } catch (err) {
        // A shipped schema that does not parse is a packaging defect: fail loudly.
        throw new Error(`capture annotations: cannot parse ${path}: ${(err as Error).message}`, { cause: err });
      }
      if (isRecord(parsed)) table.set(type, buildNode(parsed, 'metadata'));
    }
  }
  return table;
}

/**
 * Fields this adapter fills with free text although their schema annotates
 * them `metadata`: the design record puts Hermes's block message into
 * `tool.denied.rule` at redacted+. Gating them `redacted` here keeps every
 * down-level hop in this process (the OTel egress above all) from carrying
 * that text below redacted.
 */
const CONTENT_FIELDS: Readonly<Record<string, readonly string[]>> = { 'tool.denied': ['rule'] };

function withContentFields(t: Map<string, AnnotationNode>): Map<string, AnnotationNode> {
  for (const [type, fields] of Object.entries(CONTENT_FIELDS)) {
    const node = t.get(type);
    if (!node?.properties) continue;
    const properties = { ...node.properties };
    for (const f of fields) properties[f] = { ...(properties[f] ?? {}), capture: 'redacted' };
    t.set(type, { ...node, properties });
  }
  return t;
}

let cachedTable: ReadonlyMap<string, AnnotationNode> | undefined;

function table(): ReadonlyMap<string, AnnotationNode> {
  cachedTable ??= withContentFields(new Map(loadTable()));
  return cachedTable;
}

/**
 * The annotation tree for an Event type's `data`, or `undefined` when no
 * schema describes the type (callers then strip `data` wholesale when
 * down-leveling). Schemas are read on first use and cached for the process.
 */
export function annotationsFor(type: string): AnnotationNode | undefined {
  return table().get(type);
}

/** Every Event type with a loaded payload schema, sorted; for diagnostics and tests. */
export function annotatedTypes(): readonly string[] {
  return [...table().keys()].sort();
}
