/**
 * The body of `POST /ui/command`: an answer to a gate card, or an
 * instruction for a session's next turn. Anything else is refused 400 with
 * the paths and rules that failed (never a value: the text is the operator's).
 */
import { z } from 'zod';

/** The most bytes one body may have (the route reads no more). */
export const MAX_COMMAND_BYTES = 16 * 1024;

const id = z.string().min(1).max(512);

const answer = z.strictObject({
  action: z.literal('answer'),
  session: id,
  card: id,
  option: z.enum(['allow', 'deny']),
  reason: z.string().max(8_000).optional(),
});

const instruct = z.strictObject({
  action: z.literal('instruct'),
  session: id,
  text: z.string().min(1).max(12_000),
});

export const commandBody = z.discriminatedUnion('action', [answer, instruct]);
export type CommandBody = z.output<typeof commandBody>;

/** The body's shape, or a content-free detail of what is wrong. */
export function readCommandBody(value: unknown): { ok: true; body: CommandBody } | { ok: false; detail: string } {
  const parsed = commandBody.safeParse(value);
  if (parsed.success) return { ok: true, body: parsed.data };
  const where = parsed.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(body)'}: ${i.code}`)
    .join('; ');
  return { ok: false, detail: `not an answer or an instruction (${where})` };
}
