import { extraOf, type HookEnvelope } from '../hermes/envelope.js';
import type { AepExtensions } from '../aep/event.js';
import { X_HERMES } from '../aep/lifecycle.js';

/**
 * Vendor facts the pinned mapping does not carry in `data` but a trace wants:
 * the model, platform and provider Hermes reports. They ride as AEP envelope
 * extension attributes (AEP-0001 §5.4: `[a-z0-9]{1,20}`, scalar, prefixed with
 * the vendor's name), structural identifiers only: a value that does not look
 * like an identifier is left out rather than carried.
 */
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$/;
/** A model, platform or provider name: identifier-shaped, else absent (a free-text value is no identifier). */
export const identifier = (v: unknown): string | undefined => (typeof v === 'string' && IDENTIFIER.test(v) ? v : undefined);

/** Which extension attributes an event of `type` carries, from its envelope (none: `undefined`). */
export function hermesExtensions(env: HookEnvelope, type: string): AepExtensions | undefined {
  if (type !== 'run.started' && type !== 'session.started' && type !== X_HERMES.apiError) return undefined;
  const x = extraOf(env);
  const out: { -readonly [K in keyof AepExtensions]: AepExtensions[K] } = {};
  const model = identifier(x.model);
  const platform = identifier(x.platform);
  const provider = type === X_HERMES.apiError ? identifier(x.provider) : undefined;
  if (model) out.hermesmodel = model;
  if (platform) out.hermesplatform = platform;
  if (provider) out.hermesprovider = provider;
  return out;
}
