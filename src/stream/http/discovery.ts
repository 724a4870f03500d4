import type { StreamHubApi } from '../hub-types.js';

/** The AEP versions this endpoint speaks (AEP-0003 §3.2, §4). */
export const AEP_VERSIONS = ['0.1'] as const;

/** The capture levels a subscriber may ask the stream to be down-leveled to (AEP-0003 §6.4). */
export const CAPTURE_CEILINGS = ['none', 'metadata', 'redacted', 'full'] as const;

/**
 * The discovery document (AEP-0003 §3.4), served at `GET /events` and
 * `GET /.well-known/aep`. `control.accepts` is empty until the control gate
 * exists: every command to this daemon's own sessions is refused `unsupported`.
 */
export function discoveryDocument(hub: Pick<StreamHubApi, 'replay'>): Record<string, unknown> {
  return {
    aep: [...AEP_VERSIONS],
    role: 'collector',
    endpoints: { events: '/events', stream: '/stream', socket: '/socket' },
    capabilities: {
      filters: ['attr-match'],
      replay: { buffer: hub.replay.buffer, all: hub.replay.all },
      capture: [...CAPTURE_CEILINGS],
      control: { accepts: [] },
      roster: {},
      experimental: {},
    },
  };
}
