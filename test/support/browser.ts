/**
 * A real browser for the live view's tests and bench: Debian's chromium (scripts/provision-chromium.sh; the e2e
 * global setup publishes it as E2E_CHROMIUM) driven by puppeteer-core, which never downloads a browser.
 *
 * The browser reaches loopback only, twice over: its host resolver answers NOTFOUND for every name but the loopback
 * ones, and every page opened here aborts any request whose host is not loopback (recorded in `blocked`, failing with
 * net::ERR_BLOCKED_BY_CLIENT). Each page records every request it made (URL, method, headers, body) and every
 * response (status, headers, body, streamed bodies such as an SSE stream as they arrive) for checks such as "no
 * planted marker in the page's network traffic", and the console's security and error entries (a CSP violation).
 * Nothing here sleeps: waits are on selectors or predicates with a deadline.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type CDPSession, type HTTPRequest, type Page, type SerializedAXNode } from 'puppeteer-core';
import { ROOT } from './paths.js';

/** The chromium executable: E2E_CHROMIUM (the e2e global setup), CHROMIUM, else what the provision script finds. */
export function chromiumPath(): string {
  const named = process.env.E2E_CHROMIUM || process.env.CHROMIUM;
  if (named) return named;
  const out = execFileSync('bash', [path.join(ROOT, 'scripts', 'provision-chromium.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const line = /^CHROMIUM=(.+)$/m.exec(out);
  if (!line) throw new Error('scripts/provision-chromium.sh printed no CHROMIUM= line');
  return line[1]!.trim();
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether a URL stays on this machine: a loopback host, or a scheme that makes no network request. */
export function isLoopbackUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol === 'data:' || u.protocol === 'blob:' || url === 'about:blank') return true;
  return LOOPBACK_HOSTS.has(u.hostname) || /^127\.\d+\.\d+\.\d+$/.test(u.hostname);
}

export interface CapturedRequest {
  readonly id: string;
  readonly url: string;
  readonly method: string;
  readonly type: string;
  /** the headers as sent (the network stack's own, with Authorization, Origin and cookies, when it reported them) */
  headers: Record<string, string>;
  body: string;
  status?: number;
  responseHeaders: Record<string, string>;
  /** the response body as received so far (a streamed one grows while the stream is open) */
  responseBody: string;
  failed?: string;
}

export interface LogEntry {
  readonly source: string;
  readonly level: string;
  readonly text: string;
}

export interface BrowserPage {
  readonly page: Page;
  /** every request this page made, in order (blocked ones too, with `failed`) */
  readonly requests: CapturedRequest[];
  /** the URLs aborted because they were not loopback */
  readonly blocked: string[];
  /** console entries from the browser itself (CSP violations are `security` errors) and uncaught page errors */
  readonly log: LogEntry[];
  /** everything the page sent and received so far, as one string (URLs, headers, bodies), for a substring check */
  trafficText(): Promise<string>;
  /** `document.documentElement.outerHTML`, plus every form control's current value (which outerHTML omits) */
  domText(): Promise<string>;
  /** wait until `selector` matches (and is visible when asked), or fail at the deadline naming it */
  waitFor(selector: string, o?: { timeoutMs?: number; visible?: boolean }): Promise<void>;
  /** wait until `fn` evaluated in the page returns a truthy value; it comes back */
  waitUntil<T>(what: string, fn: () => T, timeoutMs?: number): Promise<T>;
  /** a PNG of the whole page at `file` (its folder made if missing) */
  screenshot(file: string): Promise<void>;
  /** the accessibility tree as a screen reader gets it (every node, not only the "interesting" ones) */
  accessibility(): Promise<SerializedAXNode | null>;
  close(): Promise<void>;
}

export interface HeadlessBrowser {
  readonly browser: Browser;
  readonly executable: string;
  readonly version: string;
  open(url: string, o?: { timeoutMs?: number; viewport?: { width: number; height: number } }): Promise<BrowserPage>;
  /** close the browser and remove its profile; SIGKILL its own process if it does not exit */
  close(): Promise<void>;
}

/** Launch headless chromium with a throwaway profile, no first-run, no network beyond loopback. */
export async function launchBrowser(o: { executable?: string } = {}): Promise<HeadlessBrowser> {
  const executable = o.executable ?? chromiumPath();
  if (!existsSync(executable)) throw new Error(`chromium not found at ${executable}: run scripts/provision-chromium.sh`);
  const profile = mkdtempSync(path.join(os.tmpdir(), 'hermes-aep-chromium-'));
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const browser = await puppeteer.launch({
    executablePath: executable,
    headless: true, // puppeteer passes --headless=new
    userDataDir: profile,
    pipe: true, // DevTools over the launched process's pipes: no debugging port for anyone else to reach
    args: [
      ...(isRoot ? ['--no-sandbox'] : []),
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-domain-reliability',
      '--metrics-recording-only',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
      '--proxy-server=direct://',
      '--proxy-bypass-list=*',
    ],
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  const version = await browser.version();
  const pages: BrowserPage[] = [];
  return {
    browser,
    executable,
    version,
    open: async (url, po = {}) => {
      const p = await openPage(browser, url, po);
      pages.push(p);
      return p;
    },
    close: async () => {
      for (const p of pages.splice(0)) await p.close().catch(() => undefined);
      const proc = browser.process();
      await browser.close().catch(() => undefined);
      if (proc && proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise<void>((r) => proc.once('exit', () => r()));
        proc.kill('SIGKILL');
        await exited;
      }
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const headerMap = (h: Record<string, unknown> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));

const decode = (data: string, base64: boolean) => (base64 ? Buffer.from(data, 'base64').toString('utf8') : data);

/**
 * Record every request and response of a page through its own DevTools session (separate from puppeteer's). Bodies
 * arrive asynchronously: the returned function resolves once every body asked for so far has been read.
 */
async function captureNetwork(cdp: CDPSession, requests: CapturedRequest[], log: LogEntry[]): Promise<() => Promise<void>> {
  const byId = new Map<string, CapturedRequest>();
  /** per fetch: whether its body is being streamed to us (settles once the browser answered) */
  const streaming = new Map<string, Promise<boolean>>();
  const pending = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    pending.add(p);
    void p.finally(() => pending.delete(p)).catch(() => undefined);
    return p;
  };
  cdp.on('Network.requestWillBeSent', (e) => {
    const r: CapturedRequest = {
      id: e.requestId,
      url: e.request.url,
      method: e.request.method,
      type: e.type ?? '',
      headers: headerMap(e.request.headers),
      body: (e.request.postDataEntries ?? []).map((x) => (x.bytes ? Buffer.from(x.bytes, 'base64').toString('utf8') : '')).join(''),
      responseHeaders: {},
      responseBody: '',
    };
    byId.set(e.requestId, r);
    requests.push(r);
    // a body too large to ride the event is asked for
    if (e.request.hasPostData && !r.body)
      void track(
        cdp.send('Network.getRequestPostData', { requestId: e.requestId }).then(
          (p) => (r.body = p.postData),
          () => undefined,
        ),
      );
  });
  cdp.on('Network.requestWillBeSentExtraInfo', (e) => {
    const r = byId.get(e.requestId);
    if (r) r.headers = { ...r.headers, ...headerMap(e.headers) };
  });
  cdp.on('Network.responseReceived', (e) => {
    const r = byId.get(e.requestId);
    if (!r) return;
    r.status = e.response.status;
    r.responseHeaders = { ...r.responseHeaders, ...headerMap(e.response.headers) };
    // a fetch may be a stream that never finishes (SSE): take its body as it arrives
    if (e.type === 'Fetch' || e.type === 'XHR' || e.type === 'EventSource') {
      streaming.set(
        e.requestId,
        track(
          cdp.send('Network.streamResourceContent', { requestId: e.requestId }).then(
            (s) => {
              r.responseBody = decode(s.bufferedData, true) + r.responseBody;
              return true;
            },
            () => false, // already finished: loadingFinished reads it whole
          ),
        ),
      );
    }
  });
  cdp.on('Network.responseReceivedExtraInfo', (e) => {
    const r = byId.get(e.requestId);
    if (r) r.responseHeaders = { ...r.responseHeaders, ...headerMap(e.headers) };
  });
  cdp.on('Network.dataReceived', (e) => {
    const r = byId.get(e.requestId);
    if (r && streaming.has(e.requestId) && e.data) r.responseBody += decode(e.data, true);
  });
  cdp.on('Network.loadingFinished', (e) => {
    const r = byId.get(e.requestId);
    if (!r) return;
    void track(
      (streaming.get(e.requestId) ?? Promise.resolve(false)).then(async (streamed) => {
        if (streamed) return;
        try {
          const b = await cdp.send('Network.getResponseBody', { requestId: e.requestId });
          r.responseBody = decode(b.body, b.base64Encoded);
        } catch {
          // a body the browser kept none of (a redirect, a 204, a page already closed)
        }
      }),
    );
  });
  cdp.on('Network.loadingFailed', (e) => {
    const r = byId.get(e.requestId);
    if (r) r.failed = e.errorText;
  });
  cdp.on('Log.entryAdded', (e) => log.push({ source: e.entry.source, level: e.entry.level, text: e.entry.text }));
  cdp.on('Runtime.exceptionThrown', (e) =>
    log.push({ source: 'exception', level: 'error', text: e.exceptionDetails.exception?.description ?? e.exceptionDetails.text }),
  );
  await cdp.send('Network.enable', { maxTotalBufferSize: 64 * 1024 * 1024, maxResourceBufferSize: 16 * 1024 * 1024 });
  await cdp.send('Log.enable');
  await cdp.send('Runtime.enable');
  return async () => {
    while (pending.size > 0) await Promise.allSettled([...pending]);
  };
}

async function openPage(browser: Browser, url: string, o: { timeoutMs?: number; viewport?: { width: number; height: number } }): Promise<BrowserPage> {
  const page = await browser.newPage();
  await page.setViewport(o.viewport ?? { width: 1280, height: 860 });
  const requests: CapturedRequest[] = [];
  const blocked: string[] = [];
  const log: LogEntry[] = [];
  const cdp = await page.createCDPSession();
  const settled = await captureNetwork(cdp, requests, log);
  await page.setRequestInterception(true);
  page.on('request', (req: HTTPRequest) => {
    if (req.isInterceptResolutionHandled()) return;
    if (isLoopbackUrl(req.url())) void req.continue();
    else {
      blocked.push(req.url());
      void req.abort('blockedbyclient');
    }
  });
  await page.goto(url, { waitUntil: 'load', timeout: o.timeoutMs ?? 30_000 });
  const self: BrowserPage = {
    page,
    requests,
    blocked,
    log,
    trafficText: async () => {
      await settled();
      return requests
        .map((r) => [r.method, r.url, JSON.stringify(r.headers), r.body, String(r.status ?? ''), JSON.stringify(r.responseHeaders), r.responseBody].join('\n'))
        .join('\n');
    },
    domText: () =>
      page.evaluate(() => {
        const values = [...document.querySelectorAll('input, textarea, select')].map((el) => (el as HTMLInputElement).value);
        return [document.documentElement.outerHTML, ...values].join('\n');
      }),
    waitFor: async (selector, wo = {}) => {
      try {
        await page.waitForSelector(selector, { timeout: wo.timeoutMs ?? 15_000, visible: wo.visible ?? false });
      } catch (err) {
        throw new Error(`timed out after ${wo.timeoutMs ?? 15_000} ms waiting for ${selector} on ${page.url()}`, { cause: err });
      }
    },
    waitUntil: async <T>(what: string, fn: () => T, timeoutMs = 15_000): Promise<T> => {
      try {
        const handle = await page.waitForFunction(fn, { timeout: timeoutMs, polling: 'mutation' });
        return (await handle.jsonValue()) as T;
      } catch (err) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} on ${page.url()}`, { cause: err });
      }
    },
    screenshot: async (file) => {
      mkdirSync(path.dirname(file), { recursive: true });
      await page.screenshot({ path: file, fullPage: true, type: 'png' });
    },
    accessibility: () => page.accessibility.snapshot({ interestingOnly: false }),
    close: async () => {
      await cdp.detach().catch(() => undefined);
      if (!page.isClosed()) await page.close();
    },
  };
  return self;
}

/** Every node of an accessibility tree, depth first. */
export function axNodes(root: SerializedAXNode | null): SerializedAXNode[] {
  if (!root) return [];
  return [root, ...(root.children ?? []).flatMap(axNodes)];
}
