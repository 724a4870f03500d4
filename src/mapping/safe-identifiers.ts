import { safeIdentifier } from '../capture/identifier-secrets.js';
import type { RedactOptions } from '../capture/redact.js';
import type { HookEnvelope } from '../hermes/envelope.js';

/**
 * The members of `extra` that carry content (free text or structures of it):
 * the capture gating decides those (absent at `metadata`, the §9.4 pipeline
 * at `redacted`, verbatim at `full`), so they are not touched here.
 */
const CONTENT_KEYS: ReadonlySet<string> = new Set([
  'user_message',
  'conversation_history',
  'command',
  'description',
  'result',
  'error_message',
  'error',
  'child_goal',
  'child_summary',
  'response',
  'assistant_message',
]);

const safeString = (v: unknown, opts: RedactOptions): unknown => (typeof v === 'string' && v.length > 0 ? safeIdentifier(v, opts) : v);

/**
 * `base_url` as the mapping needs it: the model server's origin (`scheme://host[:port]`), never its user info, path,
 * query or fragment (the mapping reads only the host and port). Without this, credentials in the URL made the whole
 * value a secret, so the host was lost too; a secret in the host itself still is. A value that is not an http(s) URL
 * is left as it came.
 */
function originOf(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:' ? `${u.protocol}//${u.host}` : v;
  } catch {
    return v;
  }
}

/**
 * The hook envelope with every identifier-shaped value through secret
 * detection (`capture/identifier-secrets.ts`), once, before the mapping reads
 * any of it: `tool_name`, `session_id`, and every string member of `extra` but
 * the content ones (a model, response model, provider, platform, subagent
 * role and status, pattern key, call, turn, request, child and session-key
 * ids, reason and error codes, `base_url`), and the strings of `pattern_keys`.
 * Everything the events, their keys and extension attributes are built from
 * is then clean, so every egress (history, stream, spans and their names,
 * metrics, logs) is too, and keys built here and read back from the history
 * agree. A value of an unknown member is covered too: whatever a future
 * mapping reads as an identifier. `cwd` and `tool_input` are content (gated).
 */
export function withSafeIdentifiers(env: HookEnvelope, opts: RedactOptions): HookEnvelope {
  const extra = env.extra;
  let safeExtra = extra;
  if (extra) {
    for (const [key, value] of Object.entries(extra)) {
      if (CONTENT_KEYS.has(key)) continue;
      const safe = Array.isArray(value)
        ? key === 'pattern_keys'
          ? safeArray(value, opts)
          : value
        : safeString(key === 'base_url' ? originOf(value) : value, opts);
      if (safe === value) continue;
      if (safeExtra === extra) safeExtra = { ...extra };
      Object.defineProperty(safeExtra, key, { value: safe, enumerable: true, writable: true, configurable: true });
    }
  }
  const toolName = safeString(env.tool_name, opts) as HookEnvelope['tool_name'];
  const sessionId = safeString(env.session_id, opts) as HookEnvelope['session_id'];
  if (safeExtra === extra && toolName === env.tool_name && sessionId === env.session_id) return env;
  return { ...env, tool_name: toolName, session_id: sessionId, ...(safeExtra ? { extra: safeExtra } : {}) };
}

function safeArray(values: readonly unknown[], opts: RedactOptions): readonly unknown[] {
  let out: unknown[] | undefined;
  values.forEach((v, i) => {
    const safe = safeString(v, opts);
    if (safe === v) return;
    out ??= [...values];
    out[i] = safe;
  });
  return out ?? values;
}
