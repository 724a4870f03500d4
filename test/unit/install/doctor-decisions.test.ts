/**
 * The pure decisions of `hermes-aep doctor` (src/install/doctor/) and of the runtime `install` pins
 * (src/install/runtime-pin.ts): each finding's level, words and fix, without a daemon, a Hermes or a disk.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitStatus, fail, formatCheck, ok, warn } from '../../../src/install/doctor/check.js';
import { commandFinding } from '../../../src/install/doctor/command-check.js';
import { allowlistFinding, tokenFinding } from '../../../src/install/doctor/credentials-check.js';
import { daemonFinding, daemonPlaces } from '../../../src/install/doctor/daemon-check.js';
import { diskFinding } from '../../../src/install/doctor/disk-check.js';
import { hostPort, otlpEndpoint } from '../../../src/install/doctor/otlp-check.js';
import { parseCommand, sameEndpoint } from '../../../src/install/doctor/registration.js';
import { runtimeCheck } from '../../../src/install/doctor/runtime-check.js';
import { cacheOf, cacheRoots, choosePin } from '../../../src/install/runtime-pin.js';

const GiB = 1024 ** 3;

describe('disk under the history', () => {
  it('warns under 1 GiB free, or under 5 % of the file system; ok otherwise', () => {
    expect(diskFinding('/logs', 0.9 * GiB, 10 * GiB).level).toBe('warn'); // under 1 GiB (9 %)
    expect(diskFinding('/logs', 4 * GiB, 100 * GiB).level).toBe('warn'); // 4 GiB, but 4 %
    expect(diskFinding('/logs', 6 * GiB, 100 * GiB).level).toBe('ok');
    expect(diskFinding('/logs', 1 * GiB, 10 * GiB).level).toBe('ok'); // exactly 1 GiB and 10 %
    const low = diskFinding('/logs', 0.5 * GiB, 10 * GiB);
    expect(formatCheck(low)).toEqual([
      'warn  disk: 0.5 GiB free of 10.0 GiB (5.0 %) under /logs: low (under 1 GiB or 5 %); when full, hooks are refused (503) and spooled',
      '      fix: free space there, or set AEP_LOG_DIR to a larger file system',
    ]);
  });
});

describe('runtime against package.json engines', () => {
  it('older than the floor is FAIL with the way to Node 24; at or above is ok; an unreadable range warns', () => {
    expect(runtimeCheck('v20.20.2', '/n', '>=22.15').level).toBe('fail');
    expect(runtimeCheck('v22.14.9', '/n', '>=22.15').level).toBe('fail');
    expect(runtimeCheck('v22.15.0', '/n', '>=22.15')).toEqual(ok('runtime', 'node v22.15.0 at /n (engines >=22.15; Node 24 LTS is the one recommended)'));
    expect(runtimeCheck('v24.21.0', '/n', '>=22.15')).toEqual(ok('runtime', 'node v24.21.0 at /n (engines >=22.15)'));
    expect(runtimeCheck('v24.21.0', '/n', '^22').level).toBe('warn');
    expect(runtimeCheck('v20.20.2', '/n', '>=22.15').fix).toMatch(/^use Node\.js 24 LTS: scripts\/provision-node\.sh 24\.21\.0/);
  });
});

describe('the daemon /healthz answer', () => {
  it('no socket, refused: FAIL with the way to start it; 200: ok with the version; degraded: warn', () => {
    const down = daemonFinding('unix socket /s', { answered: false, code: 'ENOENT' });
    expect([down.level, down.finding]).toEqual(['fail', 'no socket file: no daemon is running there']);
    expect(down.fix).toContain('hermes-aep daemon (or npm start in the checkout)');
    expect(daemonFinding('x', { answered: false, code: 'ECONNREFUSED' }).finding).toBe('connection refused: no daemon is running there');
    expect(daemonFinding('x', { answered: true, status: 200, body: { ok: true, version: '0.1.0', uptime_s: 3 } })).toEqual(
      ok('daemon (x)', 'answers /healthz: version 0.1.0, up 3 s'),
    );
    const degraded = daemonFinding('x', {
      answered: true,
      status: 503,
      body: { status: 'degraded', degraded: ['spans cannot be exported'], version: '0.1.0' },
    });
    expect([degraded.level, degraded.finding]).toEqual(['warn', 'degraded (version 0.1.0): spans cannot be exported']);
  });

  it('a refused start (503 start-refused) is FAIL listing every problem', () => {
    const body = {
      error: 'start-refused',
      detail: '…',
      status: 'refused',
      problems: [
        { variable: 'AEP_STATE_DIR', rule: 'owned by another user' },
        { variable: 'AEP_LOG_DIR', rule: 'not writable' },
      ],
    };
    expect(daemonFinding('http://127.0.0.1:8393', { answered: true, status: 503, body })).toEqual(
      fail(
        'daemon (http://127.0.0.1:8393)',
        'refused to start: AEP_STATE_DIR: owned by another user; AEP_LOG_DIR: not writable',
        'correct the settings named, then restart hermes-aep daemon',
      ),
    );
  });

  it('looks where the shim looks: AEP_SOCKET, else {AEP_STATE_DIR}/hook.sock; TCP only with AEP_PORT', () => {
    expect(daemonPlaces({ AEP_STATE_DIR: '/st' })).toEqual({ stateDir: '/st', socket: '/st/hook.sock', url: undefined });
    expect(daemonPlaces({ AEP_STATE_DIR: '/st', AEP_SOCKET: '/run/a.sock', AEP_PORT: '8393' })).toEqual({
      stateDir: '/st',
      socket: '/run/a.sock',
      url: 'http://127.0.0.1:8393',
    });
    expect(daemonPlaces({ AEP_STATE_DIR: '/st', AEP_SOCKET: 'off', AEP_HOST: '::1', AEP_PORT: '9' }).url).toBe('http://[::1]:9');
  });
});

describe('the registered command', () => {
  const c = parseCommand('/opt/node/bin/node /st/shim/0.1.0/hook.cjs --state-dir /st --url http://127.0.0.1:8393/hook')!;
  it('is read apart: runtime, script, target', () => {
    expect(c).toMatchObject({ node: '/opt/node/bin/node', script: '/st/shim/0.1.0/hook.cjs', stateDir: '/st', target: { url: 'http://127.0.0.1:8393/hook' } });
    expect(parseCommand("'/a b/node' /st/shim/0.1.0/hook.cjs --state-dir /st")!.target).toEqual({ socket: '/st/hook.sock' });
    expect(sameEndpoint({ url: 'http://localhost:8393/hook' }, { url: 'http://127.0.0.1:8393' })).toBe(true);
    expect(sameEndpoint({ socket: '/a/hook.sock' }, { url: 'http://127.0.0.1:8393' })).toBe(false);
  });

  it('a vanished or silent runtime, an old one, a missing shim: FAIL with hermes-aep install; under a cache: warn', () => {
    const facts = { nodeExists: true, nodeVersion: 'v24.21.0', nodeCache: undefined, scriptExists: true };
    expect(commandFinding(c, facts).level).toBe('ok');
    const gone = commandFinding(c, { ...facts, nodeExists: false, nodeVersion: undefined });
    expect([gone.level, gone.finding, gone.fix]).toEqual([
      'fail',
      'its runtime /opt/node/bin/node does not exist: every hook fails open silently',
      'hermes-aep install (again, with a node 18+ outside cache directories first on PATH)',
    ]);
    expect(commandFinding(c, { ...facts, nodeVersion: undefined }).level).toBe('fail');
    expect(commandFinding(c, { ...facts, nodeVersion: 'v16.20.2' }).level).toBe('fail');
    expect(commandFinding(c, { ...facts, scriptExists: false })).toMatchObject({ level: 'fail', fix: 'hermes-aep install' });
    expect(commandFinding(c, { ...facts, nodeCache: '/home/u/.cache' }).level).toBe('warn');
  });
});

describe('token and allowlist', () => {
  it('the token: missing with TCP is FAIL, missing without is ok, readable by others is FAIL with chmod', () => {
    expect(tokenFinding('/st/hook-token', undefined, true).level).toBe('fail');
    expect(tokenFinding('/st/hook-token', undefined, false).level).toBe('ok');
    expect(tokenFinding('/st/hook-token', 0o100644, true)).toMatchObject({ level: 'fail', fix: 'chmod 600 /st/hook-token' });
    expect(tokenFinding('/st/hook-token', 0o100600, true).level).toBe('ok');
  });

  it('the allowlist must approve each (event, command) of ours', () => {
    const shell = [
      { event: 'pre_tool_call', command: '/n /h' },
      { event: 'post_tool_call', command: '/n /h' },
    ];
    const one = JSON.stringify({ approvals: [{ event: 'pre_tool_call', command: '/n /h' }] });
    const both = JSON.stringify({
      approvals: [
        { event: 'pre_tool_call', command: '/n /h' },
        { event: 'post_tool_call', command: '/n /h' },
      ],
    });
    expect(allowlistFinding('/h/a.json', both, shell).level).toBe('ok');
    expect(allowlistFinding('/h/a.json', one, shell)).toMatchObject({
      level: 'fail',
      finding: '1 of 2 hooks not approved (post_tool_call): Hermes asks on a terminal and skips them otherwise',
      fix: 'hermes-aep install',
    });
    expect(allowlistFinding('/h/a.json', undefined, shell).finding).toMatch(/^\/h\/a\.json is missing: 2 of 2/);
    expect(allowlistFinding('/h/a.json', '{', shell).level).toBe('fail');
    expect(allowlistFinding('/h/a.json', undefined, []).level).toBe('ok');
  });
});

describe('otlp endpoint', () => {
  it('the traces variable first; host and port with the scheme default', () => {
    expect(otlpEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:1', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:2/v1/traces' })).toEqual({
      variable: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      value: 'http://b:2/v1/traces',
    });
    expect(otlpEndpoint({})).toBeUndefined();
    expect(hostPort('https://collector.example')).toEqual({ host: 'collector.example', port: 443 });
    expect(hostPort('http://[::1]:4318')).toEqual({ host: '::1', port: 4318 });
    expect(hostPort('not a url')).toBeUndefined();
  });
});

describe('exit status', () => {
  it('0 with warnings only, 1 with any FAIL', () => {
    expect(exitStatus([ok('a', 'x'), warn('b', 'y', 'z')])).toBe(0);
    expect(exitStatus([ok('a', 'x'), fail('b', 'y', 'z')])).toBe(1);
  });
});

describe('the runtime install pins', () => {
  const home = '/home/u';
  const roots = cacheRoots({ HERMES_AEP_CACHE: '/var/cache/aep', XDG_CACHE_HOME: 'relative/ignored' }, home);
  const running = { path: '/home/u/.cache/hermes-aep/node-24.21.0/bin/node', real: '/home/u/.cache/hermes-aep/node-24.21.0/bin/node', version: 'v24.21.0' };
  const versions: Record<string, string> = { '/home/u/bin/node': 'v24.21.0', '/usr/bin/node': 'v20.20.2', '/opt/old/node': 'v16.20.2' };
  const versionOf = async (n: string) => versions[n];

  it('knows the caches: ~/.cache, $XDG_CACHE_HOME, $HERMES_AEP_CACHE, npm _npx directories', () => {
    expect(roots).toEqual([path.join(home, '.cache'), '/var/cache/aep']);
    expect(cacheOf('/home/u/.npm/_npx/abc/node_modules/node/bin/node', roots)).toBe('/home/u/.npm/_npx');
    expect(cacheOf('/var/cache/aep/node-24/bin/node', roots)).toBe('/var/cache/aep');
    expect(cacheOf('/usr/bin/node', roots)).toBeUndefined();
  });

  it('the running node when outside the caches; else the first supported node on PATH outside them; else the running one, warned', async () => {
    const outside = { path: '/usr/local/bin/node', real: '/usr/local/bin/node', version: 'v24.1.0' };
    expect((await choosePin(outside, [], roots, versionOf)).node).toBe('/usr/local/bin/node');
    const onPath = [
      { path: '/home/u/bin/node', real: '/home/u/.cache/x/node' }, // a symlink into a cache: skipped
      { path: '/opt/old/node', real: '/opt/old/node' }, // too old for the shim: skipped
      { path: '/usr/bin/node', real: '/usr/bin/node' },
    ];
    const chosen = await choosePin(running, onPath, roots, versionOf);
    expect([chosen.node, chosen.warning]).toEqual(['/usr/bin/node', undefined]);
    const warned = await choosePin(running, onPath.slice(0, 2), roots, versionOf);
    expect(warned.node).toBe(running.path);
    expect(warned.warning).toMatch(/^warning: the runtime \S+ is under the cache directory \/home\/u\/\.cache: .*hermes-aep doctor$/);
  });
});
