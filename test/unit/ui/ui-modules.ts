// The page's ES modules (ui/*.js) loaded by URL: plain browser JavaScript without type declarations, so the tests
// that exercise them receive them untyped.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const UI_DIR = fileURLToPath(new URL('../../../ui/', import.meta.url));

export async function uiModule(name: string): Promise<any> {
  return import(new URL(`../../../ui/${name}`, import.meta.url).href);
}

/** The history lines of one golden-history file, parsed. */
export function historyLines(relative: string): any[] {
  const text = readFileSync(fileURLToPath(new URL(`../../../fixtures/${relative}`, import.meta.url)), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}
