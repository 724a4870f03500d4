/**
 * Whether an event's `source` names this daemon's own emitter
 * (`aep://{host}/agent/hermes/…`), compared as URIs, not as strings: the
 * scheme and host case-insensitively, any port (`aep:` has no default port,
 * and a port does not make another emitter of the same host's agent), user
 * info, a trailing dot on the host, empty and percent-encoded path segments,
 * `.`/`..` segments, a query or fragment all ignored. Parsed by the WHATWG URL
 * parser; a source it cannot parse is not this daemon's (its own sources always parse).
 */
export type OwnSourceCheck = (source: string) => boolean;

/** Where the bindings report an event refused for naming this daemon's own emitter. */
export interface OwnRefusals {
  ownSource(): void;
}

interface Named {
  readonly host: string;
  readonly segments: readonly string[];
}

const decode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** The host and the decoded, non-empty path segments of an `aep:` URI, lowercased; undefined for anything else. */
function named(uri: string): Named | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'aep:') return undefined;
  const host = decode(u.hostname).toLowerCase().replace(/\.+$/, '');
  if (host === '') return undefined;
  const segments = u.pathname
    .split('/')
    .filter((s) => s !== '')
    .map((s) => decode(s).toLowerCase());
  return { host, segments };
}

/**
 * The check for `prefix`, this daemon's own source prefix
 * (`aep://{host}/agent/hermes/`): a source is its own when it names the same
 * host and starts with the same path segments.
 */
export function ownSourceCheck(prefix: string): OwnSourceCheck {
  const own = named(prefix);
  if (!own) throw new Error('the own source prefix is not an aep:// URI');
  return (source) => {
    const n = named(source);
    if (!n || n.host !== own.host || n.segments.length < own.segments.length) return false;
    return own.segments.every((s, i) => n.segments[i] === s);
  };
}
