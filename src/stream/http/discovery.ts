import { CAPTURE_LEVELS } from '../../core/capture-levels.js';
import type { StreamHubApi } from '../hub-types.js';
import { ownControl, type OwnControlPort } from '../socket/frames.js';

/** The discovery document (AEP-0003 §3.4), with the capabilities a `hello` would carry (§4). */
export function discoveryDocument(hub: Pick<StreamHubApi, 'replay'>, control?: Pick<OwnControlPort, 'accepts'>): Record<string, unknown> {
  return {
    aep: ['0.1'],
    role: 'collector',
    endpoints: { events: '/events', stream: '/stream', socket: '/socket' },
    capabilities: {
      filters: ['attr-match'],
      replay: { buffer: hub.replay.buffer, all: hub.replay.all },
      capture: [...CAPTURE_LEVELS],
      control: ownControl(control),
      roster: {},
      experimental: {},
    },
  };
}
