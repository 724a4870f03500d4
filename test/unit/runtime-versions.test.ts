/**
 * One runtime story across the files that name a Node release: package.json's
 * engines floor, the Docker image, the releases .ci/run provisions, and the one scripts/check-node.cjs recommends.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, readJson } from '../support/paths.js';

const read = (rel: string): string => readFileSync(path.join(ROOT, rel), 'utf8');
const parts = (v: string): number[] => v.split('.').map(Number);
/** a >= b, release by release */
const atLeast = (a: string, b: string): boolean => {
  const [x, y] = [parts(a), parts(b)];
  const d = [0, 1, 2].map((i) => (x[i] ?? 0) - (y[i] ?? 0)).find((n) => n !== 0) ?? 0;
  return d >= 0;
};

const floor = /^>=\s*(\d+\.\d+(?:\.\d+)?)$/.exec(readJson<{ engines: { node: string } }>('package.json').engines.node)?.[1];
const ciRelease = (name: string): string | undefined => new RegExp(`^${name}=(\\d+\\.\\d+\\.\\d+)$`, 'm').exec(read('.ci/run'))?.[1];
const imageRelease = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-/m.exec(read('Dockerfile'))?.[1];

describe('the Node releases the project names agree', () => {
  it('engines is a plain floor on Node 22 LTS or later', () => {
    expect(floor, 'package.json engines.node: ">=x.y"').toBeDefined();
    expect(atLeast(floor!, '22.15')).toBe(true);
  });

  it('the Docker image runs the Node 24 release .ci/run tests on', () => {
    expect(ciRelease('NODE24_RELEASE')).toMatch(/^24\./);
    expect(imageRelease).toBe(ciRelease('NODE24_RELEASE'));
  });

  it('the Node 24 release scripts/check-node.cjs tells a too-old runtime to get is the one .ci/run tests on', () => {
    expect(/^var RECOMMENDED = '(\d+\.\d+\.\d+)';$/m.exec(read('scripts/check-node.cjs'))?.[1]).toBe(ciRelease('NODE24_RELEASE'));
  });

  it('.ci/run tests the unit tier on a Node 22 release the engines floor admits', () => {
    const node22 = ciRelease('NODE22_RELEASE');
    expect(node22).toMatch(/^22\./);
    expect(atLeast(node22!, floor!)).toBe(true);
  });
});
