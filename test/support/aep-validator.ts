import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ROOT } from './paths.js';

/**
 * Validates an emitted event against the AEP envelope schema and the payload
 * schema of its type (JSON Schema 2020-12, as published with the standard).
 */
export function aepValidator(): (ev: unknown) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addKeyword('x-aep-capture');
  const load = (p: string) => JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
  const envelope = ajv.compile(load(path.join(ROOT, 'schemas', 'aep-event.schema.json')));
  const payloads = new Map<string, ValidateFunction>();
  for (const dir of ['types', 'x-hermes']) {
    for (const f of readdirSync(path.join(ROOT, 'schemas', dir))) {
      if (!f.endsWith('.schema.json')) continue;
      payloads.set(f.replace('.schema.json', ''), ajv.compile(load(path.join(ROOT, 'schemas', dir, f))));
    }
  }
  return (ev: unknown) => {
    const errors: string[] = [];
    if (!envelope(ev)) errors.push(...(envelope.errors ?? []).map((e) => `envelope ${e.instancePath} ${e.message}`));
    const e = ev as { type?: string; data?: unknown; capture?: string };
    // at capture `none` the payload is deliberately empty (envelope only)
    if (e.capture === 'none') return errors;
    const payload = e.type ? payloads.get(e.type) : undefined;
    if (payload) {
      if (!payload(e.data ?? {})) errors.push(...(payload.errors ?? []).map((x) => `${e.type} data${x.instancePath} ${x.message}`));
    } else if (!(e.type ?? '').startsWith('x.hermes.')) {
      errors.push(`no payload schema for ${e.type}`);
    }
    return errors;
  };
}
