// Suite `ui-latency`: the live view (issue 27) in the real browser, Debian's chromium driven by puppeteer-core
// (test/support/browser.ts). Two figures:
//
// - From a hook's arrival at the daemon to the page showing it: the bench posts a `pre_tool_call` over the daemon's
//   Unix socket (as the shim does, without the shim's own start) and stamps the send with Date.now(); a
//   MutationObserver the bench injects into the page stamps, with the page's wall clock (performance.timeOrigin +
//   performance.now(), the same machine clock), the moment the tree holds one more tool unit. The latency is the
//   difference, hook by hook, one hook at a time (each call's post_tool_call follows, untimed, so the turn looks like
//   a real one). Figure: the median with its p95; the ratio is the p95 in ms against the 100 ms budget.
// - The page's assets (every /ui file the page loaded), each gzip-compressed: the total against the 100 KB budget.
//
// It needs the page: on a daemon that does not serve /ui it fails with a message saying so.
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import type { Figure, Suite } from '../bench-types.js';
import { launchBrowser } from '../../support/browser.js';
import { httpCall, startDaemonProcess } from '../../support/processes.js';
import { scriptedSession } from '../../support/scripted-session.js';
import { requireUi, tid, uiUrl } from '../../support/ui-view.js';
import { dist, round } from '../support/stats.js';

const TOKEN = 'ui-latency-bench-token-0123456789';

export const suite: Suite = {
  name: 'ui-latency',
  about:
    'the live view in headless chromium: a pre_tool_call posted to the daemon (Unix socket) until the page shows its tool unit (a MutationObserver stamp, same wall clock), one hook at a time; and the page assets’ gzip size',
  async run(ctx) {
    const hooks = ctx.short ? 30 : 100;
    const provisioned = ctx.provision ? await ctx.provision('provision-chromium.sh') : new Map<string, string>();
    const base = ctx.tmp('ui-latency-');
    const daemon = await startDaemonProcess({ AEP_TOKEN: TOKEN }, { historyDir: path.join(base, 'log'), stateDir: path.join(base, 'state') });
    const browser = await launchBrowser(provisioned.get('CHROMIUM') ? { executable: provisioned.get('CHROMIUM')! } : {});
    try {
      await requireUi(daemon);
      ctx.log(`ui-latency: ${browser.version}, ${hooks} hooks`);
      const page = await browser.open(uiUrl(daemon, TOKEN));
      await page.waitUntil('the page to say live', () => document.querySelector('[data-testid="connection"]')?.textContent?.trim() === 'live');

      const session = '20261204_130000_uibench';
      const { envelopes } = scriptedSession(session);
      const post = async (body: string) => {
        const r = await httpCall(
          { socketPath: daemon.socketPath },
          { method: 'POST', path: '/hook', headers: { host: 'localhost', 'content-type': 'application/json' }, body },
        );
        if (r.status !== 200) throw new Error(`hook answered ${r.status}`);
      };
      const byHook = (hook: string) => envelopes.find((e) => e.hook_event_name === hook)!;
      const call = (hook: 'pre_tool_call' | 'post_tool_call', id: string) => {
        const e = structuredClone(byHook(hook));
        e.extra['tool_call_id'] = id;
        return JSON.stringify(e);
      };
      for (const h of ['on_session_start', 'pre_llm_call']) await post(JSON.stringify(byHook(h)));
      await page.waitFor(tid('session-item', { session }));
      await page.page.click(tid('session-item', { session }));
      await page.waitFor(tid('turn-tree'));

      // the stamps: when the tree first held k tool units, and when k of them were done
      await page.page.evaluate(() => {
        const w = window as unknown as { __shown: number[]; __done: number[] };
        w.__shown = [];
        w.__done = [];
        const now = () => performance.timeOrigin + performance.now();
        const look = () => {
          const tools = document.querySelectorAll('[data-testid="unit"][data-kind="tool"]');
          while (w.__shown.length < tools.length) w.__shown.push(now());
          const done = document.querySelectorAll('[data-testid="unit"][data-kind="tool"]:not([data-state="running"])').length;
          while (w.__done.length < done) w.__done.push(now());
        };
        new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'] });
        look();
      });
      const stamps = (key: '__shown' | '__done', k: number) =>
        page.page
          .waitForFunction(
            (key2: string, k2: number) => ((window as unknown as Record<string, number[]>)[key2] ?? []).length >= k2,
            { timeout: 15_000, polling: 'raf' },
            key,
            k,
          )
          .then(() => page.page.evaluate((key2: string, k2: number) => (window as unknown as Record<string, number[]>)[key2]![k2 - 1]!, key, k));
      const base0 = await page.page.evaluate(() => document.querySelectorAll('[data-testid="unit"][data-kind="tool"]').length);

      const shown: number[] = [];
      const done: number[] = [];
      const answered: number[] = [];
      for (let i = 1; i <= hooks; i++) {
        const id = `bench_call_${i}`;
        const sent = Date.now();
        await post(call('pre_tool_call', id));
        answered.push(Date.now() - sent);
        shown.push((await stamps('__shown', base0 + i)) - sent);
        const sentPost = Date.now();
        await post(call('post_tool_call', id));
        done.push((await stamps('__done', base0 + i)) - sentPost);
      }
      const appear = dist(shown, 'ms', 1);
      ctx.log(`ui-latency: hook -> page median ${appear.value} ms, p95 ${appear.p95} ms; done median ${dist(done, 'ms', 1).value} ms`);

      // the page's own assets (every one the page loaded), each gzip-compressed as a daemon serving gzip sends it
      const assets = [
        ...new Set(
          page.requests
            .map((r) => new URL(r.url))
            .filter((u) => u.origin === daemon.url && (u.pathname === '/ui' || /^\/ui\/[^/]+\.(js|css|svg|png|ico|woff2?)$/.test(u.pathname)))
            .map((u) => u.pathname),
        ),
      ];
      let gz = 0;
      const sizes: Record<string, number> = {};
      for (const a of assets) {
        const r = await httpCall({ url: daemon.url }, { path: a, headers: { host: new URL(daemon.url).host } });
        if (r.status !== 200) throw new Error(`${a} answered ${r.status}`);
        const bytes = gzipSync(Buffer.from(r.body, 'utf8')).length;
        sizes[a] = bytes;
        gz += bytes;
      }
      const kb = round(gz / 1024, 1);
      const figures: Figure[] = [
        {
          id: 'ui.hook_to_page',
          label: `live view: a hook's arrival at the daemon to the page showing it (headless chromium, ${hooks} hooks), p95 in ms`,
          measure: appear,
          ratio: appear.p95!,
          budget: { max: 100 },
          detail: {
            hook_answered_ms: dist(answered, 'ms', 1),
            post_to_done_ms: dist(done, 'ms', 1),
            browser: browser.version,
          },
        },
        {
          id: 'ui.assets_gzip_kb',
          label: "live view: the page's assets, gzip-compressed, in KB",
          measure: { value: kb, unit: 'KB' },
          ratio: kb,
          budget: { max: 100 },
          detail: { assets: sizes },
        },
      ];
      return figures;
    } finally {
      await browser.close();
      await daemon.stop();
    }
  },
};
