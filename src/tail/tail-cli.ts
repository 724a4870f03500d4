/**
 * The `tail` command's process side: the plan from the options and the
 * environment, stdout for events, stderr for notices, colors by the TTY and
 * `NO_COLOR`/`FORCE_COLOR` rule, the pending-cards footer when stdout is a
 * terminal, and a clean stop on Ctrl-C, SIGTERM or a reader that goes away
 * (`| head`).
 */
import { plainStyler, stylerFor } from './color.js';
import { planTail, type TailCliOptions } from './options.js';
import { runTail } from './tail.js';

export async function runTailCli(o: TailCliOptions): Promise<void> {
  const plan = planTail(o, process.env);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') stop.abort();
  });
  const io = {
    out: (line: string) => void process.stdout.write(`${line}\n`),
    err: (line: string) => void process.stderr.write(`${line}\n`),
    // --json lines are data: never styled
    style: plan.json ? plainStyler : stylerFor(process.stdout, process.env),
    // the pending-cards footer: on a terminal only, never under --json
    ...(process.stdout.isTTY && !plan.json ? { terminal: { write: (s: string) => void process.stdout.write(s), columns: () => process.stdout.columns } } : {}),
  };
  try {
    process.exitCode = await runTail(plan, io, stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
