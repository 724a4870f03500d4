import { expect } from 'vitest';
import { ConfigError } from '../../src/config/read-env.js';

/** The ConfigError `fn` throws (the test fails when it throws none, or something else). */
export function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  return expect.unreachable('no ConfigError');
}
