#!/usr/bin/env node
// The one bin. Each subcommand is imported lazily so `hermes-aep hook` (run
// by Hermes on every hook firing) loads nothing but the shim.
const [cmd, ...args] = process.argv.slice(2);

async function run(): Promise<void> {
  switch (cmd) {
    case 'hook':
      return (await import('./shim/hook.cjs')).runHook(args);
    case 'daemon':
      return (await import('./daemon/main.js')).main();
    case 'install':
    case 'uninstall':
      return (await import('./install/install-cli.js')).runInstall(cmd, args);
    default:
      process.stderr.write(
        'usage: hermes-aep <command>\n' +
          '  daemon                 run the daemon (POST /hook, GET /healthz on {AEP_STATE_DIR}/hook.sock; TCP with AEP_PORT)\n' +
          '  hook [--socket PATH | --url URL] [--state-dir DIR]\n' +
          '                         the Hermes shell-hook shim (stdin envelope -> daemon -> stdout reply)\n' +
          '  install [--dry-run]    register the shim in $HERMES_HOME/config.yaml and the allowlist\n' +
          '  uninstall [--dry-run]  remove what install added\n',
      );
      process.exitCode = cmd === undefined || cmd === '--help' || cmd === 'help' ? 0 : 2;
  }
}

run().catch((err: unknown) => {
  if (cmd === 'hook') {
    // fail-open, whatever happened
    process.stdout.write('{}');
    process.exitCode = 0;
    return;
  }
  process.stderr.write(`hermes-aep ${cmd ?? ''}: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
