import { describe, expect, it } from 'vitest';
import { ownSourceCheck } from '../../../src/stream/own-source.js';

const own = ownSourceCheck('aep://vm/agent/hermes/');

describe('the own-source check compares URIs, not strings', () => {
  it.each([
    'aep://vm/agent/hermes/session/s1',
    'aep://VM/agent/hermes/session/s1',
    'AEP://Vm/agent/hermes/session/s1',
    'aep://vm:1/agent/hermes/session/s1',
    'aep://vm:65535/agent/hermes',
    'aep://vm./agent/hermes/session/s1',
    'aep://x@vm/agent/hermes/session/s1',
    'aep://vm//agent//hermes/session/s1',
    'aep://vm/agent/%68ermes/session/s1',
    'aep://%76m/agent/hermes/session/s1',
    'aep://vm/Agent/HERMES/session/s1',
    'aep://vm/x/../agent/hermes/session/s1',
    'aep://vm/agent/hermes?q=1',
    'aep://vm/agent/hermes#f',
  ])('%s is the own emitter', (source) => {
    expect(own(source)).toBe(true);
  });

  it.each([
    'aep://vm2/agent/hermes/session/s1',
    'aep://elsewhere/agent/hermes/session/s1',
    'aep://vm/agent/hermes-cli/session/s1',
    'aep://vm/agent/claude-code/session/s1',
    'aep://vm/agent',
    'https://vm/agent/hermes/session/s1',
    'aep:vm/agent/hermes',
    'not a uri',
    '',
  ])('%s is another emitter', (source) => {
    expect(own(source)).toBe(false);
  });

  it('a prefix that is no aep:// URI is a configuration error, not a check that passes everything', () => {
    expect(() => ownSourceCheck('vm/agent/hermes/')).toThrow();
  });
});
