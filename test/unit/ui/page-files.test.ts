// The page's files as the daemon serves them (ui/): nothing the CSP would block or that could run data as code,
// no address but the daemon's, and within the issue's size budget (100 KB compressed).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { UI_DIR } from './ui-modules.js';

const FILES = readdirSync(UI_DIR).sort();
const text = (f: string) => readFileSync(path.join(UI_DIR, f), 'utf8');

/** The file without its comments: block comments, `//` line comments (not the `//` of `scheme://`), HTML comments. */
function code(f: string): string {
  const t = text(f);
  if (f.endsWith('.html')) return t.replace(/<!--[\s\S]*?-->/g, '');
  const noBlocks = t.replace(/\/\*[\s\S]*?\*\//g, '');
  return f.endsWith('.js') ? noBlocks.replace(/(^|\s)\/\/.*$/gm, '$1') : noBlocks;
}

/** What the page must never hold (the rule, and what finds it). */
export const FORBIDDEN: readonly (readonly [string, RegExp])[] = [
  ['innerHTML', /innerHTML/],
  ['outerHTML / insertAdjacentHTML / document.write', /outerHTML|insertAdjacentHTML|document\.write/],
  ['eval(', /\beval\s*\(/],
  ['new Function', /new\s+Function\b/],
  ['a style= attribute', /\sstyle\s*=|setAttribute\(\s*['"]style['"]/i],
  ['an inline event handler attribute', /<[^>]*\son[a-z]+\s*=/i],
  ['an http(s):// address', /https?:\/\//i],
];

/** Every rule broken by a text (used on the files, and on planted samples to show the rules bite). */
export function broken(f: string, body: string): string[] {
  const out = FORBIDDEN.filter(([, re]) => re.test(body)).map(([rule]) => rule);
  if (f.endsWith('.html')) {
    for (const m of body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
      if (m[2]!.trim() !== '' || !/\ssrc=/.test(m[1]!)) out.push('an inline <script>');
    }
    if (/<style\b/i.test(body)) out.push('an inline <style>');
    for (const m of body.matchAll(/\s(?:src|href)="([^"]*)"/g)) if (!m[1]!.startsWith('/ui/')) out.push(`an asset outside /ui/: ${m[1]}`);
  }
  return out;
}

describe('the page files', () => {
  it('are the page and its modules only: index.html, app.js, app.css and small ES modules', () => {
    expect(FILES).toContain('index.html');
    expect(FILES).toContain('app.js');
    expect(FILES).toContain('app.css');
    expect(FILES.filter((f) => !/^[a-z-]+\.(js|css|html)$/.test(f))).toEqual([]);
  });

  it.each(FILES)('%s holds nothing a strict CSP blocks or that turns data into markup or code', (f) => {
    expect(broken(f, code(f))).toEqual([]);
  });

  it('the rules find what they are for (planted samples)', () => {
    expect(broken('x.js', code2('el.innerHTML = data;'))).toEqual(['innerHTML']);
    expect(broken('x.js', code2('eval(s); new Function("x")'))).toEqual(['eval(', 'new Function']);
    expect(broken('x.js', code2("fetch('https://cdn.example/x.js')"))).toEqual(['an http(s):// address']);
    expect(broken('x.js', code2('// see https://example.org\nconst a = 1;'))).toEqual([]);
    expect(broken('x.html', '<div style="color:red" onclick="go()"></div><script>alert(1)</script><link href="x.css">')).toEqual([
      'a style= attribute',
      'an inline event handler attribute',
      'an inline <script>',
      'an asset outside /ui/: x.css',
    ]);
  });

  it('weigh under 100 KB compressed (each file gzipped as the daemon serves it)', () => {
    const sizes = FILES.map((f) => [f, gzipSync(readFileSync(path.join(UI_DIR, f)), { level: 9 }).length] as const);
    const total = sizes.reduce((a, [, n]) => a + n, 0);
    const raw = FILES.reduce((a, f) => a + readFileSync(path.join(UI_DIR, f)).length, 0);
    console.log(`ui/ size: ${raw} bytes raw, ${total} bytes gzipped (${sizes.map(([f, n]) => `${f} ${n}`).join(', ')})`);
    expect(total).toBeLessThan(100 * 1024);
  });
});

/** A planted JS sample with its comments stripped the same way as the files. */
function code2(body: string): string {
  return body.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');
}
