import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axNodes, launchBrowser, type BrowserPage, type HeadlessBrowser } from '../support/browser.js';
import { tempDir } from '../support/processes.js';

/**
 * The real-browser harness the live view's tests and bench stand on (test/support/browser.ts), proven on pages a
 * tiny loopback server in this file serves: Debian's chromium starts headless, a strict CSP stops an inline script
 * (and the violation is reported) while the page's own script runs, every request and response is captured (headers,
 * bodies, a stream's chunks while it is still open), a request to a host that is not loopback is aborted by the
 * harness, and a screenshot is a real PNG of the viewport's width.
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'";

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>harness</title>
<script>document.title = 'INLINE-RAN';</script>
<script type="module" src="/own.js"></script>
</head><body><h1>harness page</h1><label>reason <input id="reason"></label><p id="out" data-testid="out"></p></body></html>`;

// the page's own script: a POST with a header and a body, then the stream read chunk by chunk into the DOM
const OWN_JS = `
document.body.dataset.own = 'ran';
const posted = await fetch('/echo', { method: 'POST', headers: { Authorization: 'Bearer HEADER-MARKER' }, body: 'BODY-MARKER' });
document.getElementById('out').textContent = await posted.text();
const stream = await fetch('/stream');
const reader = stream.body.getReader();
const dec = new TextDecoder();
for (;;) {
  const { value, done } = await reader.read();
  if (done) break;
  const li = document.createElement('li');
  li.dataset.testid = 'chunk';
  li.textContent = dec.decode(value);
  document.body.append(li);
}
`;

const OPEN_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>open</title></head>
<body><img alt="far" src="http://blocked.invalid/pixel.png"><img alt="near" src="/pixel.png"></body></html>`;

// a 1×1 transparent PNG
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

describe('the real-browser harness (chromium + puppeteer-core, loopback only)', () => {
  let server: Server;
  let base: string;
  let browser: HeadlessBrowser;
  const streams: ServerResponse[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const send = (status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...extra });
        res.end(body);
      };
      if (req.url === '/csp') return send(200, 'text/html; charset=utf-8', PAGE, { 'content-security-policy': CSP });
      if (req.url === '/own.js') return send(200, 'text/javascript; charset=utf-8', OWN_JS, { 'content-security-policy': CSP });
      if (req.url === '/echo') {
        req.resume();
        return req.on('end', () => send(200, 'text/plain; charset=utf-8', 'ECHO-MARKER'));
      }
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
        res.write('data: STREAM-MARKER-1\n\n');
        streams.push(res);
        return;
      }
      if (req.url === '/open') return send(200, 'text/html; charset=utf-8', OPEN_PAGE);
      if (req.url === '/pixel.png') return send(200, 'image/png', PIXEL);
      send(404, 'text/plain', 'not found');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const t0 = performance.now();
    browser = await launchBrowser();
    console.log(`[browser-harness] ${browser.version} (${browser.executable}) launched in ${Math.round(performance.now() - t0)} ms`);
  });

  afterAll(async () => {
    for (const s of streams) s.end();
    await browser?.close();
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  });

  let page: BrowserPage;

  it('a strict CSP stops the inline script and reports the violation; the page’s own script runs', async () => {
    page = await browser.open(`${base}/csp`);
    await page.waitFor('[data-testid="out"]:not(:empty)');
    expect(await page.page.evaluate(() => document.body.dataset.own)).toBe('ran');
    expect(await page.page.title()).toBe('harness');
    const violation = page.log.find((e) => e.source === 'security' && /Content Security Policy/.test(e.text));
    expect(violation, JSON.stringify(page.log)).toBeDefined();
  });

  it('captures every request and response: headers, bodies, and a stream’s chunks while it is open', async () => {
    expect(page.requests.map((r) => new URL(r.url).pathname)).toEqual(expect.arrayContaining(['/csp', '/own.js', '/echo', '/stream']));
    await page.waitUntil('the echo body', () => document.getElementById('out')?.textContent === 'ECHO-MARKER');
    // the stream stays open: a chunk written now reaches the DOM and the capture
    await page.waitFor('[data-testid="chunk"]');
    streams[0]!.write('data: STREAM-MARKER-2\n\n');
    await page.waitUntil('the second chunk', () => (document.body.textContent ?? '').includes('STREAM-MARKER-2'));
    const traffic = await page.trafficText();
    const echo = page.requests.find((r) => r.url.endsWith('/echo'))!;
    expect(echo.method).toBe('POST');
    expect(echo.headers['authorization']).toBe('Bearer HEADER-MARKER');
    expect(echo.body).toBe('BODY-MARKER');
    for (const m of ['HEADER-MARKER', 'BODY-MARKER', 'ECHO-MARKER', 'STREAM-MARKER-1', 'STREAM-MARKER-2', 'INLINE-RAN']) {
      expect(traffic, m).toContain(m);
    }
    expect(page.requests.find((r) => r.url.endsWith('/stream'))!.responseHeaders['content-type']).toBe('text/event-stream');
    // the DOM text carries what a script put in a control, which outerHTML alone does not
    await page.page.type('#reason', 'TYPED-MARKER');
    expect(await page.domText()).toContain('TYPED-MARKER');
    expect(await page.domText()).toContain('STREAM-MARKER-2');
  });

  it('a request to a host that is not loopback is aborted by the harness; loopback ones load', async () => {
    const open = await browser.open(`${base}/open`);
    await open.waitUntil('both images settled', () => [...document.images].every((i) => i.complete));
    expect(open.blocked).toEqual(['http://blocked.invalid/pixel.png']);
    const far = open.requests.find((r) => r.url === 'http://blocked.invalid/pixel.png');
    // the harness's abort, not a failed name lookup
    expect(far?.failed).toMatch(/^net::ERR_BLOCKED_BY_CLIENT\b/);
    expect(open.requests.find((r) => r.url.endsWith('/pixel.png') && r.url.startsWith(base))?.status).toBe(200);
    expect(await open.page.evaluate(() => [...document.images].map((i) => i.naturalWidth))).toEqual([0, 1]);
  });

  it('a screenshot is a PNG of the viewport’s width, and the accessibility tree names the labelled input', async () => {
    const file = path.join(tempDir('hermes-aep-shot-'), 'page.png');
    await page.screenshot(file);
    const png = readFileSync(file);
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.readUInt32BE(16)).toBe(1280); // IHDR width
    const textboxes = axNodes(await page.accessibility()).filter((n) => n.role === 'textbox');
    expect(textboxes.map((n) => n.name)).toEqual(['reason']);
  });
});
