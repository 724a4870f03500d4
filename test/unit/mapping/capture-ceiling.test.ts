import { describe, expect, it } from 'vitest';
import { monotonicFactory } from 'ulid';
import { CAPTURE_LEVELS, captureRank, type CaptureLevel } from '../../../src/core/capture-levels.js';
import { annotationsFor, type AnnotationNode } from '../../../src/capture/annotations.js';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import type { CapturePolicy } from '../../../src/capture/policy.js';
import type { AepEvent } from '../../../src/aep/event.js';
import { aepValidator } from '../../support/aep-validator.js';
import { MARKER, scriptedSession } from '../../support/scripted-session.js';
import { readJson } from '../../support/paths.js';

/** Every data leaf whose annotation is above the event's own capture level. */
function above(node: AnnotationNode | undefined, value: unknown, level: CaptureLevel, at: string, root = true): string[] {
  const own = node?.capture ?? 'metadata';
  if (!root && captureRank(own) > captureRank(level)) return [at];
  if (Array.isArray(value)) return value.flatMap((v, i) => above(node?.items, v, level, `${at}[${i}]`, false));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => above(node?.properties?.[k], v, level, `${at}.${k}`, false));
  }
  return [];
}

function emitAll(policy: CapturePolicy, inputs: unknown[]): AepEvent[] {
  const ulid = monotonicFactory();
  const stage = new IdentityStage({ epoch: 0, host: 'h', policy, newId: () => ulid() });
  return inputs.flatMap((raw) => {
    const env = hookEnvelopeSchema.parse(raw);
    return stage.process(readHook(env, policy), new Date());
  });
}

const fixture = readJson<{ hooks: Record<string, { input: unknown }> }>('fixtures/aep/hermes.json');
const inputs: unknown[] = [...scriptedSession().envelopes, ...Object.values(fixture.hooks).map((c) => c.input)];
const validate = aepValidator();

describe('no field rides above the capture level its event declares', () => {
  for (const ceiling of CAPTURE_LEVELS) {
    for (const attention of CAPTURE_LEVELS) {
      it(`AEP_CAPTURE=${ceiling}, attention=${attention}`, () => {
        const policy: CapturePolicy = { ceiling, categories: { attention }, redact: { home: '/home/dev' }, agent: 'hermes' };
        for (const ev of emitAll(policy, inputs)) {
          expect(ev.capture).toBe(ev.type.startsWith('attention.') ? attention : ceiling);
          expect(above(annotationsFor(ev.type), ev.data, ev.capture, ev.type)).toEqual([]);
          expect(validate(ev)).toEqual([]);
          // metadata and below: no content at all, so no planted marker
          if (captureRank(ev.capture) <= captureRank('metadata')) expect(JSON.stringify(ev)).not.toContain(MARKER);
        }
      });
    }
  }

  it('at redacted, secrets in content are redacted and home paths scrubbed', () => {
    const policy: CapturePolicy = { ceiling: 'redacted', categories: {}, redact: { home: '/home/dev' }, agent: 'hermes' };
    const [ev] = emitAll(policy, [
      {
        hook_event_name: 'pre_tool_call',
        tool_name: 'terminal',
        tool_input: { command: 'curl -H "Authorization: Bearer abcdef123456789" /home/dev/x', token: 'tok_live_123' },
        session_id: 's',
        extra: { tool_call_id: 'c' },
      },
    ]);
    const text = JSON.stringify(ev!.data);
    expect(text).not.toContain('abcdef123456789');
    expect(text).not.toContain('tok_live_123');
    expect(text).not.toContain('/home/dev');
    expect(text).toContain('[REDACTED:secret]');
  });
});
