import type { Logger } from '../core/logger.js';
import type { StreamHubApi } from '../stream/hub-types.js';
import type { OwnControlPort } from '../stream/socket/frames.js';
import type { StreamAuth } from '../stream/stream-auth.js';

/** What the live view's routes need (the daemon builds it: src/daemon/main.ts). */
export interface UiDeps {
  /** the folder the page's files are read from (`ui/` at the package root) */
  readonly dir: string;
  readonly version: string;
  /** AEP_UI_JAEGER_URL, no trailing slash */
  readonly jaegerUrl: string;
  /** the control gates: answers (AEP_HERMES_CONTROL) and instructions (AEP_INSTRUCT) */
  readonly gates: { readonly control: boolean; readonly instruct: boolean };
  /** AEP_TOKEN: the only credential an answer is taken with */
  readonly token?: string;
  /** the stream's auth: `/ui/state` follows its read rule */
  readonly auth: Pick<StreamAuth, 'credentials'>;
  /** where the commands' acks are observed, and which sessions are this daemon's own */
  readonly hub: Pick<StreamHubApi, 'subscribe' | 'isOwnSession'>;
  /** the control target of the own sessions */
  readonly control?: Pick<OwnControlPort, 'command'>;
  /** the host part of a command's `source` (AEP_SOURCE_HOST or the host name) */
  readonly sourceHost: string;
  /** how long an ack is waited for (default ACK_WAIT_MS: the ack window and a grace) */
  readonly ackWaitMs?: number;
  readonly log: Logger;
}
