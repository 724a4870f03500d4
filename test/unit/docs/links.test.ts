import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/paths.js';

/** The user's pages: the README, CONTRIBUTING and every page under docs/. */
const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation but hyphens dropped, spaces as hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchors(file: string): Set<string> {
  const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!.replace(/`/g, ''))));
}

/** Every relative Markdown link of a page, outside code blocks: [target file or '', anchor or '']. */
function links(file: string): { target: string; anchor: string }[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((href) => !/^[a-z]+:/i.test(href))
    .map((href) => {
      const [target = '', anchor = ''] = href.split('#');
      return { target, anchor };
    });
}

describe('the manual links only to what exists', () => {
  it.each(PAGES)('%s: every relative link names an existing file, and every #anchor a heading of it', (page) => {
    const broken: string[] = [];
    for (const { target, anchor } of links(page)) {
      const file = target === '' ? page : path.normalize(path.join(path.dirname(page), target));
      if (!existsSync(path.join(ROOT, file))) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor && file.endsWith('.md') && !anchors(file).has(anchor)) broken.push(`${target}#${anchor}: no such heading`);
    }
    expect(broken).toEqual([]);
  });

  it.each(PAGES)('%s spells every command hermes-aep <command> (npm link puts it on PATH), never node dist/src/cli.js', (page) => {
    expect(readFileSync(path.join(ROOT, page), 'utf8')).not.toMatch(/node dist\/src\/cli\.js/);
  });

  it('the README is a manual read in five minutes: at most about 250 lines', () => {
    const lines = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length;
    expect(lines).toBeLessThanOrEqual(260);
  });
});
