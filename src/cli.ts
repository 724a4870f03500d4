#!/usr/bin/env node
// The one bin. `hermes-aep hook` runs on every hook firing, so it is settled
// first and loads nothing but the shim: no argument parser, no other module.
// Every other command goes through commander (loaded lazily, like each
// command's own code).
import type { Command as CommandType } from 'commander';

const argv = process.argv.slice(2);
const wantsHelp = (args: readonly string[]) => args.some((a) => a === '-h' || a === '--help');

const DAEMON_ENV = `
Settings are environment variables (validated at start; a bad value stops the
daemon naming the variable, never its value). The main ones:
  AEP_STATE_DIR        state: epoch, ended sessions, hook-token, spool (~/.aep/state/hermes-aep)
  AEP_SOCKET           unix socket path ({AEP_STATE_DIR}/hook.sock; "off" disables it)
  AEP_HOST, AEP_PORT   TCP listener, opened only when AEP_PORT is set (bearer token required)
  AEP_LOG_DIR          root of the JSONL stream (~/.aep/logs)
  AEP_CAPTURE          capture ceiling: none | metadata | redacted | full (metadata)
  AEP_DEBUG            one stderr line per hook (false)
  OTEL_*               the OpenTelemetry mirror (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_EXPORTER, ...)
The full table with every variable and its default: docs/reference.md, section "Settings".
`;

const HOOK_ENV = `
Hermes runs this once per hook with the envelope on stdin; it prints one JSON
object ({} unless a gate lets a reply through) and exits 0 whatever happens.
Without options it reads AEP_SOCKET, AEP_HOOK_URL, AEP_STATE_DIR (and
AEP_HOST/AEP_PORT), then the defaults; AEP_SHIM_TIMEOUT_MS bounds the wait (5 s).
Two opt-in gates, each as an option or its variable (1, true, yes, on):
  --control   AEP_HERMES_CONTROL  pre_tool_call waits for the daemon's answer, up
              to AEP_ATTENTION_TIMEOUT_MS + 3 s (it says so in the header
              x-hermes-aep-hold-ms); only a block reply reaches Hermes
  --instruct  AEP_INSTRUCT        a pre_llm_call {"context": ...} reply reaches Hermes
--attention-timeout-ms stands for AEP_ATTENTION_TIMEOUT_MS (55000). Options win
over the environment; install writes them into the command it registers.
`;

const INSTALL_ENV = `
Environment: HERMES_HOME (Hermes's directory, ~/.hermes) unless --hermes-home;
AEP_STATE_DIR, AEP_SOCKET, AEP_HOOK_URL, AEP_PORT (+ AEP_HOST) choose the
target like the options do, and whatever differs from the default is written
into the registered command, so Hermes needs none of them. So do the gates:
AEP_HERMES_CONTROL (--control) and AEP_INSTRUCT (--instruct), 1/true/yes/on;
with the control gate, AEP_ATTENTION_TIMEOUT_MS (the daemon's hold window,
55000) is written too, and pre_tool_call gets a timeout above the shim's wait
(window + 3 s, + 2 s margin: 60 s by default). Install refuses a window whose
timeout would pass Hermes's 300 s clamp, or a --timeout below it.
Model calls: post_api_request is registered by default (x.hermes.model.call:
model, tokens, cost), one more hook call per model call, so with the shell
transport one more shim start each. --no-model-calls leaves it out (the plugin
then does not subscribe to it); install again without it to turn it back on.
`;

const TAIL_ENV = `
Like tail(1): the last 10 events (across sessions, after the filter) from what
the daemon holds, then the new ones as they come; -n 0 shows only new ones,
--no-follow prints everything held and exits (-n N: the last N), --from resumes
at exact positions. Without a daemon, the last events of the most recently
written history files, then what is appended.
One line per event: local time, session, run, type (indented: run events under
their session, tool events under their run), subject, key facts at the event's
capture level. Colors on a terminal unless NO_COLOR is set (FORCE_COLOR forces).
A card that can be answered from here (hermes-aep answer) ends its line with
card=<id> and the time left; on a terminal a footer lists the pending ones.
Reconnects when the daemon restarts, resuming after the last event shown.
Environment: AEP_STATE_DIR / AEP_SOCKET (the socket), AEP_PORT + AEP_HOST with
AEP_TOKEN (TCP when the socket is off), AEP_LOG_DIR (the history read when no
daemon answers).
`;

const DEMO_HELP = `
The session (its id starts with demo-): one turn with four model calls (tokens
included), four tool calls (one fails), Hermes's own approval prompt (asked,
allowed once) and a clarify question (asked, answered), then the session ends.
Each hook runs the shim Hermes would run (node dist/src/shim/hook.cjs, the
envelope on stdin). The daemon is found as tail finds it; when none answers,
one is started with the same environment and stopped at the end.
Exit status: 0 when every expected event is in the history; 1 with the reason
(the daemon refused, nothing arrived in time...).
Environment: AEP_STATE_DIR / AEP_SOCKET, AEP_PORT + AEP_HOST with AEP_TOKEN_FILE
(the daemon and its hook token), AEP_LOG_DIR (the history), AEP_OTEL_FILE and
OTEL_* (the spans).
`;

const CONTROL_ENV = `
Sent as an AEP command on the daemon's WebSocket (/socket): over its Unix socket
(trusted, no token), or over TCP with the stream token, which a command always
needs there. Prints one line: accepted, rejected: <reason> (the target said no),
or refused: <code> (the daemon routed it nowhere); --json prints the ack event
as received. Exit 0 accepted, 1 rejected or refused, 2 usage, connection, card
not found, or no ack within the ack window (+2 s).
Environment: AEP_STATE_DIR / AEP_SOCKET (the socket), AEP_PORT + AEP_HOST with
AEP_TOKEN (TCP when the socket is off), AEP_SOURCE_HOST (the command's source).
`;

const ANSWER_HELP = `
The card id is the one a card line of \`hermes-aep tail\` shows (card=…); only
cards that list "control" in respond_via can be answered from here. The card's
session is looked up in what the daemon holds unless --session names it. After
accepted, the card's outcome is printed when it arrives in time, e.g.
  hermes-aep answer 01JZ5R7Q1B8N6T3X0V9W2Y4K3M deny not on prod
  accepted
  answered: deny "not on prod"
A reason that starts with - goes after --.
${CONTROL_ENV}`;

const INSTRUCT_HELP = `
The words are joined by spaces into one instruction for the session (it must
accept instructions: AEP_INSTRUCT=1 on the daemon side).
${CONTROL_ENV}`;

const DOCTOR_HELP = `
One line a check: ok|warn|FAIL  <what>: <finding>, and under each that is not ok
"fix:" with the command or setting that fixes it. In order: the runtime (node
against package.json engines); the daemon (GET /healthz on its unix socket, and
over TCP when AEP_PORT is set; a refused start lists its problems); the
transport install left in HERMES_HOME (shell, plugin, webhook, or none); each
registered command (its pinned node exists and runs, its shim exists); where
they send hooks against the daemon found; the hook token (present and 0600
when TCP is in use); the allowlist (Hermes approves each shell hook); the
installed Hermes's version and hook list against the mapping (drift); the OTLP
endpoint (a TCP connect, nothing sent); free disk under the history dir.
Environment: as the daemon and the shim read it (AEP_STATE_DIR, AEP_SOCKET,
AEP_HOST/AEP_PORT, AEP_LOG_DIR, OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT), and
HERMES_HOME. docs/doctor.md lists each check and its fix.

Exit status: 0 all ok (warnings allowed); 1 any FAIL; 2 doctor itself could not run.`;

const UI_HELP = `
The page needs the daemon's TCP listener: AEP_PORT (a browser cannot open a Unix
socket). Its address is http://<AEP_HOST>:<AEP_PORT>/ui, with #token=<token>
in the fragment (never sent to the server: the page keeps it for its requests):
AEP_TOKEN when set (the page can read and answer), else the hook token file's
content (read only: answers need AEP_TOKEN), else none. Without --url it is
opened with xdg-open or open when one is on PATH, else printed. Exit 2 without
AEP_PORT.
Environment: AEP_HOST, AEP_PORT, AEP_TOKEN, AEP_STATE_DIR / AEP_TOKEN_FILE.
`;

/** Commander's own usage errors (a missing argument, an unknown option) exit 2 for the control commands, like theirs. */
const usageExit = (err: { exitCode: number }) => process.exit(err.exitCode === 0 ? 0 : 2);

function transportKind(raw: string): 'shell' | 'plugin' | 'webhook' {
  if (raw !== 'shell' && raw !== 'plugin' && raw !== 'webhook') throw new Error('--transport takes shell, plugin or webhook');
  return raw;
}

function timeoutSeconds(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 6 || n > 300) {
    throw new Error("--timeout takes whole seconds between 6 and 300 (above the shim's own 5 s deadline, within Hermes's 300 s clamp)");
  }
  return n;
}

type InstallCliOptions = {
  dryRun?: boolean;
  timeout?: number;
  socket?: string;
  url?: string;
  stateDir?: string;
  hermesHome?: string;
  hermes?: string;
  transport?: 'shell' | 'plugin' | 'webhook';
  control?: boolean;
  instruct?: boolean;
  /** commander's `--no-model-calls`: true unless given */
  modelCalls: boolean;
};

async function program(): Promise<CommandType> {
  const { Command, InvalidArgumentError } = await import('commander');
  const { packageVersion } = await import('./install/version.js');
  const seconds = (raw: string) => {
    try {
      return timeoutSeconds(raw);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
  const cli = new Command('hermes-aep')
    .description('Hermes Agent hooks → the AEP event stream, mirrored as OpenTelemetry spans')
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .helpOption('-h, --help', 'show help and exit')
    .helpCommand('help [command]', 'show help for a command')
    .allowExcessArguments(false);

  cli
    .command('daemon')
    .description('run the daemon: POST /hook, GET /healthz')
    .allowExcessArguments(false)
    .addHelpText('after', DAEMON_ENV)
    .action(async () => {
      (await import('./daemon/compile-cache.js')).enableDaemonCompileCache();
      await (await import('./daemon/main.js')).main();
    });

  cli
    .command('hook')
    .description('the Hermes shell-hook shim: stdin envelope → daemon → {} on stdout (install registers its fast launcher)')
    .option('--socket <path>', "the daemon's unix socket")
    .option('--url <url>', "the daemon's http://127.0.0.1:PORT/hook (TCP, with the token from the state dir)")
    .option('--state-dir <dir>', 'the state directory the default socket, token and spool derive from')
    .option('--control', "the operator-deny gate (AEP_HERMES_CONTROL): pre_tool_call waits for the daemon's answer")
    .option('--instruct', 'the steering gate (AEP_INSTRUCT): a pre_llm_call context reply reaches Hermes')
    .option('--attention-timeout-ms <ms>', "the daemon's hold window the wait is planned for (AEP_ATTENTION_TIMEOUT_MS, 55000)")
    .addHelpText('after', HOOK_ENV)
    .action(async () => (await import('./shim/hook.cjs')).runHook(argv.slice(1)));

  cli
    .command('install')
    .description(
      'connect Hermes to the daemon by the cheapest transport the installed Hermes allows (--transport to choose): shell copies the shim to {state dir}/shim/{version}/, registers it for the thirteen events in $HERMES_HOME/config.yaml (twelve with --no-model-calls) and records consent in shell-hooks-allowlist.json',
    )
    .option('-n, --dry-run', 'print the planned changes; write nothing')
    .option('--timeout <seconds>', "Hermes's kill deadline for the shim, 6..300 (default 10; with --control, pre_tool_call gets what its hold needs)", seconds)
    .option('--socket <path>', 'register the shim for this unix socket (default {state dir}/hook.sock)')
    .option('--url <url>', 'register the shim for TCP at this loopback URL, e.g. http://127.0.0.1:8393/hook (compose)')
    .option('--state-dir <dir>', 'the state directory the shim copy, token and defaults live in (default AEP_STATE_DIR or ~/.aep/state/hermes-aep)')
    .option('--hermes-home <dir>', "Hermes's directory (default HERMES_HOME or ~/.hermes)")
    .option(
      '--transport <kind>',
      "shell: a shell hook per event, the shim runs out of process; plugin: a Hermes plugin forwards the same envelopes from a background thread; webhook: Hermes's outbound webhook posts them to the daemon's /webhook (needs TCP: --url or AEP_PORT; the gated hooks stay shell hooks). Default: webhook when the installed Hermes has outbound webhooks and the target is TCP, else plugin when a Hermes is found, else shell (the report says which and why)",
      transportKind,
    )
    .option(
      '--hermes <path>',
      'the installed Hermes the default transport is chosen from (and --transport webhook checks for outbound webhooks): its executable, venv, checkout or site-packages (default: as doctor finds it)',
    )
    .option('--control', "the operator-deny gate: a pre_tool_call waits for the operator's answer (default AEP_HERMES_CONTROL)")
    .option('--instruct', 'the steering gate: a pre_llm_call reply may add context (default AEP_INSTRUCT)')
    .option(
      '--no-model-calls',
      'leave out post_api_request (one hook call per model call; with the shell transport, one more shim start each): no model-call spans, tokens or cost',
    )
    .allowExcessArguments(false)
    .addHelpText('after', INSTALL_ENV)
    .action(async (o: InstallCliOptions) =>
      (await import('./install/install-cli.js')).runInstall({
        transport: o.transport,
        dryRun: Boolean(o.dryRun),
        timeout: o.timeout,
        socket: o.socket,
        url: o.url,
        stateDir: o.stateDir,
        hermesHome: o.hermesHome,
        hermes: o.hermes,
        control: o.control,
        instruct: o.instruct,
        modelCalls: o.modelCalls,
      }),
    );

  cli
    .command('uninstall')
    .description('remove exactly what install added to config.yaml and the allowlist, and the plugin directory (either transport); the shim copy stays')
    .option('-n, --dry-run', 'print the planned changes; write nothing')
    .option('--hermes-home <dir>', "Hermes's directory (default HERMES_HOME or ~/.hermes)")
    .allowExcessArguments(false)
    .action(async (o: { dryRun?: boolean; hermesHome?: string }) =>
      (await import('./install/install-cli.js')).runUninstall({ dryRun: Boolean(o.dryRun), hermesHome: o.hermesHome }),
    );

  cli
    .command('doctor')
    .description(
      'check the runtime, the daemon, the registration in Hermes, the token and allowlist, the Hermes hook list, OTLP and disk; each problem with its fix',
    )
    .option('--hermes <path>', 'the hermes executable, its venv, its checkout or site-packages (default: hermes on PATH, then ~/.hermes/hermes-agent)')
    .option('--hermes-home <dir>', "Hermes's directory (default HERMES_HOME or ~/.hermes)")
    .option('--json', 'print {status, checks: [{level, what, finding, fix?}]} as one JSON line')
    .allowExcessArguments(false)
    .addHelpText('after', DOCTOR_HELP)
    .action(async (o: { hermes?: string; hermesHome?: string; json?: boolean }) => {
      try {
        await (await import('./install/doctor/run.js')).runDoctorCli(o);
      } catch (err) {
        process.stderr.write(`hermes-aep doctor: could not run: ${(err as Error).message}\n`);
        process.exitCode = 2;
      }
    });

  const repeat = (v: string, prev: string[] = []) => [...prev, v];
  cli
    .command('tail')
    .description("follow the AEP stream on the terminal: the daemon's GET /stream, or the JSONL history when no daemon answers")
    .option('--url <url>', 'the daemon over TCP, e.g. http://127.0.0.1:8393 (token from --token or AEP_TOKEN)')
    .option('--socket <path>', "the daemon's unix socket (default {AEP_STATE_DIR}/hook.sock)")
    .option('--token <token>', 'the stream token for --url (prefer AEP_TOKEN: a command line is visible to other users)')
    .option('--session <id>', 'only this session')
    .option('--type <type>', 'only this type or prefix.* pattern (repeatable, or comma-separated)', repeat)
    .option('--filter <json>', 'an attr-match filter (AEP-0003 §6), e.g. {"severity":{"gte":"notice"}}')
    .option('-n, --lines <N>', 'recent events shown before following (default 10; 0: only new events)')
    .option('--from <all|json>', 'replay first instead: all, or a JSON array of {"session","epoch","seq"} to resume after (with --no-follow, default: all)')
    .option('--capture <level>', 'capture ceiling: none | metadata | redacted | full')
    .option('--json', 'print the raw event lines (JSONL)')
    .option('--no-follow', 'print what is held and exit')
    .allowExcessArguments(false)
    .addHelpText('after', TAIL_ENV)
    .action(async (o: import('./tail/options.js').TailCliOptions) => (await import('./tail/tail-cli.js')).runTailCli(o));

  cli
    .command('demo')
    .description(
      'send a scripted Hermes session (no model, no network) through the shim into the running daemon (or one it starts and stops), then show the tail view, the history file and the trace',
    )
    .option('--jaeger-url <url>', "Jaeger's base URL for the trace link", 'http://127.0.0.1:16686')
    .allowExcessArguments(false)
    .addHelpText('after', DEMO_HELP)
    .action(async (o: { jaegerUrl: string }) => (await import('./demo/demo-cli.js')).runDemo(o));

  cli
    .command('ui')
    .description("the live view: open the daemon's page (/ui) in a browser, or print its address with --url")
    .option('--url', 'print the address (the token in its #fragment) and exit, instead of opening it')
    .allowExcessArguments(false)
    .addHelpText('after', UI_HELP)
    .exitOverride(usageExit)
    .action(async (o: { url?: boolean }) => (await import('./ui-server/ui-cli.js')).runUiCli(o));

  const target = (c: CommandType) =>
    c
      .option('--url <url>', 'the daemon over TCP, e.g. http://127.0.0.1:8393 (token from --token or AEP_TOKEN)')
      .option('--socket <path>', "the daemon's unix socket (default {AEP_STATE_DIR}/hook.sock)")
      .option('--token <token>', 'the stream token for --url (prefer AEP_TOKEN: a command line is visible to other users)')
      .option('--json', 'print the ack (and outcome) event line exactly as received');
  target(
    cli
      .command('answer')
      .description('answer a held tool call (a card tail shows): allow it, or deny it with a reason')
      .argument('<card-id>', 'the card: the id of its attention.requested event')
      .argument('<decision>', 'allow or deny')
      .argument('[reason...]', 'deny only: why, given to the agent')
      .option('--session <id>', "the card's session (skips looking the card up)"),
  )
    .allowExcessArguments(false)
    .addHelpText('after', ANSWER_HELP)
    .exitOverride(usageExit)
    .action(async (card: string, decision: string, reason: string[], o: import('./control-cli/control-cli.js').ControlCliOptions) =>
      (await import('./control-cli/control-cli.js')).runAnswerCli(card, decision, reason, o),
    );
  target(
    cli
      .command('instruct')
      .description('send an instruction to a running session (one that accepts them)')
      .argument('<session>', 'the session id')
      .argument('<text...>', 'the instruction'),
  )
    .allowExcessArguments(false)
    .addHelpText('after', INSTRUCT_HELP)
    .exitOverride(usageExit)
    .action(async (session: string, text: string[], o: import('./control-cli/control-cli.js').ControlCliOptions) =>
      (await import('./control-cli/control-cli.js')).runInstructCli(session, text, o),
    );
  return cli;
}

async function main(): Promise<void> {
  // a reader that goes away (`| head`) must not crash a command half way
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  const cmd = argv[0] ?? '';
  try {
    await (await program()).parseAsync(process.argv);
  } catch (err) {
    process.stderr.write(`hermes-aep ${cmd}: ${(err as Error).message}\n`.replace(/^hermes-aep : /, 'hermes-aep: '));
    // a refusal that says the install cannot work here (install --transport webhook) exits 2, every other failure 1
    process.exitCode = (err as { exitStatus?: unknown }).exitStatus === 2 ? 2 : 1;
  }
}

if (argv[0] === 'hook' && !wantsHelp(argv.slice(1))) {
  import('./shim/hook.cjs')
    .then((shim) => shim.runHook(argv.slice(1)))
    .catch(() => {
      // fail-open, whatever happened
      process.stdout.write('{}');
      process.exitCode = 0;
    });
} else {
  void main();
}
