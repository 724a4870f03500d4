/**
 * The live view (`GET /ui`, issue 27) as its browser tests and bench reach it: its address with the token in the
 * fragment, a check that this daemon serves it (a clear failure when the page is not there), and the page's stable
 * selectors (the `data-testid` attributes the page promises).
 */
import { httpCall, type DaemonProcess } from './processes.js';

/** `[data-testid="<id>"]`, with attribute filters: `tid('unit', { kind: 'tool', state: 'running' })`. */
export function tid(id: string, data: Record<string, string> = {}): string {
  return `[data-testid="${id}"]${Object.entries(data)
    .map(([k, v]) => `[data-${k}="${v}"]`)
    .join('')}`;
}

/** The page's address on the daemon's TCP listener, with the token in the fragment (never sent to the server). */
export function uiUrl(daemon: Pick<DaemonProcess, 'url'>, token?: string): string {
  if (!daemon.url) throw new Error('the live view needs the daemon’s TCP listener (AEP_PORT): a browser cannot open a Unix socket');
  return `${daemon.url}/ui${token ? `#token=${encodeURIComponent(token)}` : ''}`;
}

/**
 * Fail with a message that says what is missing when this daemon does not serve the page (a build without issue
 * 27's page, or AEP_UI=off); otherwise the page's HTML.
 */
export async function requireUi(daemon: Pick<DaemonProcess, 'url'>): Promise<string> {
  const r = await httpCall({ url: daemon.url }, { path: '/ui', headers: { host: new URL(daemon.url).host } });
  if (r.status !== 200 || !/text\/html/.test(String(r.headers['content-type'] ?? '')))
    throw new Error(
      `the daemon does not serve the live view at /ui (HTTP ${r.status}, ${String(r.headers['content-type'] ?? 'no content type')}): ` +
        'this build has no page yet (issue 27: the daemon side serves ui/ at /ui), or AEP_UI is off',
    );
  return r.body;
}
