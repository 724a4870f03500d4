import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLOOR, runtimeWarning } from '../../../src/daemon/runtime.js';
import { ROOT } from '../../support/paths.js';

describe('the runtime floor', () => {
  it('is the engines floor of package.json', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${NODE_FLOOR.replace(/\.0$/, '')}`);
  });

  it('warns below it, and only below it', () => {
    expect(runtimeWarning('20.20.2')).toContain('older than 22.15.0');
    expect(runtimeWarning('22.14.9')).toContain('Node.js 22.14.9');
    expect(runtimeWarning('v18.20.8')).toBeDefined();
    expect(runtimeWarning('22.15.0')).toBeUndefined();
    expect(runtimeWarning('22.23.3')).toBeUndefined();
    expect(runtimeWarning('24.21.0')).toBeUndefined();
    expect(runtimeWarning('26.0.0')).toBeUndefined();
  });
});
