/**
 * A tiny scripted OpenAI-compatible model server for driving the real Hermes
 * Agent offline in end-to-end tests.
 *
 * - Listens on 127.0.0.1 (port 0 by default: the OS picks a free port).
 * - Answers `GET /v1/models`, `GET /v1/models/:id` and
 *   `POST /v1/chat/completions`, streamed (SSE `data: {...}` chunks ending
 *   with `data: [DONE]`) and non-streamed.
 * - Plays a script: each request is matched against the script's steps by
 *   inspecting the conversation (the marker in the last user message, or a
 *   custom predicate). The reply is chosen by how many assistant messages
 *   already follow that user message, so `replies: [toolCall, text]` means
 *   "ask for a tool, then answer in text once the tool result came back".
 * - Requests that carry no `tools` (Hermes's auxiliary calls: session title
 *   generation, compression summaries) get the plain `auxiliaryReply` text
 *   and never consume a scripted step.
 * - Reports token usage on every answer (the non-streamed `usage`; streamed,
 *   a final chunk with `choices: []` when the request asks for
 *   `stream_options.include_usage`), with the cache read, cache write and
 *   reasoning buckets: a reply's explicit `usage`, exactly, else an
 *   approximation from the lengths with every bucket 0 (FakeUsage).
 *
 * Node 20, ESM, no dependencies.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

/** One tool call the fake model asks for. */
export interface FakeToolCall {
  name: string;
  /** An object is JSON-encoded; a string is sent verbatim (it must be JSON). */
  arguments: Record<string, unknown> | string;
  /** Optional fixed id; default `call_<24 hex>`. */
  id?: string;
}

/**
 * The token usage one reply reports, in the OpenAI Chat Completions contract:
 * `prompt_tokens` counts EVERY input token (the cached and the cache-written
 * ones too) and `completion_tokens` every output token (reasoning too); the
 * buckets break them out. On the wire: `prompt_tokens_details.cached_tokens`,
 * `prompt_tokens_details.cache_write_tokens`,
 * `completion_tokens_details.reasoning_tokens`, which are the fields Hermes's
 * `normalize_usage` reads in chat-completions mode (0.18.2 and 0.19.0; see
 * docs/hermes-drift.md).
 */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** cache READ: `prompt_tokens_details.cached_tokens` (default 0) */
  cached_tokens?: number;
  /** cache WRITE: `prompt_tokens_details.cache_write_tokens` (default 0) */
  cache_write_tokens?: number;
  /** `completion_tokens_details.reasoning_tokens` (default 0) */
  reasoning_tokens?: number;
}

/** The usage object as the fake model sends it (the non-streamed `usage`, the streamed final chunk's `usage`). */
export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/**
 * What the fake model answers for one request (`delayMs`: wait before
 * answering; `usage`: the exact token counts to report, else an approximation
 * from the request's and the reply's lengths with every bucket 0).
 */
export type FakeReply = (
  { type: 'text'; content: string } | { type: 'tool_calls'; calls: FakeToolCall[]; content?: string } | { type: 'error'; status: number; message: string }
) & { delayMs?: number; usage?: FakeUsage };

/** A read-only view of the incoming conversation, used to pick a reply. */
export interface ConversationView {
  body: ChatRequest;
  messages: ChatMessage[];
  /** Text of the last `role: "user"` message ('' when none). */
  lastUserText: string;
  /** Messages after the last user message (assistant turns and tool results). */
  sinceLastUser: ChatMessage[];
  /** Number of assistant messages after the last user message. */
  assistantTurnsSinceUser: number;
  /** Tool-result messages after the last user message. */
  toolResultsSinceUser: ChatMessage[];
  /** Names of the tools offered in this request. */
  toolNames: string[];
}

export type ReplySource = FakeReply | ((view: ConversationView) => FakeReply);

export interface FakeStep {
  /** Human-readable name for diagnostics. */
  name?: string;
  /** Matches when the last user message contains this substring. */
  marker?: string;
  /** Matches when this returns true (checked in addition to / instead of `marker`). */
  when?: (view: ConversationView) => boolean;
  /**
   * The reply sequence: index = assistant turns already taken since the last
   * user message. Past the end the last entry's `final` (or the default final
   * text) is used.
   */
  replies: ReplySource[];
  /** Reply once `replies` is exhausted (default: a text quoting the last tool result). */
  final?: ReplySource;
}

export interface FakeLlmOptions {
  steps: FakeStep[];
  /** Reply when no step matches (default: a plain text answer). */
  fallback?: ReplySource;
  /**
   * Reply to requests that offer no tools (default: "Fake session title"); a
   * function answers per request (Hermes 0.19.0's smart-approval review is one
   * such request and expects APPROVE, DENY or ESCALATE).
   */
  auxiliaryReply?: string | ((view: ConversationView) => string);
  /** Model id reported by /v1/models and echoed in completions (default "fake-model"). */
  model?: string;
  /** Port to bind (default 0). */
  port?: number;
  /** Split streamed text into chunks of this many characters (default 16). */
  streamChunkSize?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  body: unknown;
  /** Name of the step that answered (or 'auxiliary' / 'fallback' / 'none'). */
  step: string;
  reply?: FakeReply;
  /** the usage the fake model reported for this request (chat completions that answered 200) */
  usage?: WireUsage;
  at: number;
}

export interface FakeLlm {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:43123/v1`. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown[];
  tool_call_id?: string;
  name?: string;
  [k: string]: unknown;
}

export interface ChatRequest {
  model?: string;
  messages?: ChatMessage[];
  tools?: Array<{ type?: string; function?: { name?: string } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [k: string]: unknown;
}

/** Convenience constructors. */
export const text = (content: string): FakeReply => ({ type: 'text', content });
export const toolCall = (name: string, args: Record<string, unknown> | string, id?: string): FakeReply => ({
  type: 'tool_calls',
  calls: [{ name, arguments: args, ...(id ? { id } : {}) }],
});

export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        if (typeof p === 'string') return p;
        if (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string') {
          return (p as { text: string }).text;
        }
        return '';
      })
      .join('');
  }
  return '';
}

export function viewOf(body: ChatRequest): ConversationView {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let lastUser = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user') {
      lastUser = i;
      break;
    }
  }
  const sinceLastUser = lastUser >= 0 ? messages.slice(lastUser + 1) : messages.slice();
  return {
    body,
    messages,
    lastUserText: lastUser >= 0 ? contentText(messages[lastUser]?.content) : '',
    sinceLastUser,
    assistantTurnsSinceUser: sinceLastUser.filter((m) => m.role === 'assistant').length,
    toolResultsSinceUser: sinceLastUser.filter((m) => m.role === 'tool'),
    toolNames: (body.tools ?? []).map((t) => t?.function?.name ?? '').filter(Boolean),
  };
}

function defaultFinal(view: ConversationView): FakeReply {
  const last = view.toolResultsSinceUser.at(-1);
  const excerpt = last ? contentText(last.content).slice(0, 200) : '';
  return text(last ? `Done. The tool said: ${excerpt}` : 'Done.');
}

function resolve(src: ReplySource, view: ConversationView): FakeReply {
  return typeof src === 'function' ? src(view) : src;
}

/** Pick the reply for a request. Exported for unit tests. */
export function chooseReply(opts: FakeLlmOptions, body: ChatRequest): { step: string; reply: FakeReply } {
  const view = viewOf(body);
  if (view.toolNames.length === 0) {
    const aux = typeof opts.auxiliaryReply === 'function' ? opts.auxiliaryReply(view) : opts.auxiliaryReply;
    return { step: 'auxiliary', reply: text(aux ?? 'Fake session title') };
  }
  for (const [i, step] of opts.steps.entries()) {
    const byMarker = step.marker !== undefined && view.lastUserText.includes(step.marker);
    const byPredicate = step.when !== undefined && step.when(view);
    if (!byMarker && !byPredicate) continue;
    const idx = view.assistantTurnsSinceUser;
    const src = idx < step.replies.length ? step.replies[idx] : (step.final ?? defaultFinal);
    return { step: step.name ?? step.marker ?? `step${i}`, reply: resolve(src!, view) };
  }
  return {
    step: 'fallback',
    reply: resolve(opts.fallback ?? text('Hello from the fake model.'), view),
  };
}

const hex = (n: number) => randomBytes(n).toString('hex');

function approxTokens(s: string): number {
  return Math.max(1, Math.ceil(s.length / 4));
}

const tokenCount = (what: string, v: number | undefined): number => {
  if (v === undefined) return 0;
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`fake-llm: usage.${what} must be a non-negative integer, got ${v}`);
  return v;
};

/** A reply's usage on the wire: its explicit `usage` (checked to be consistent), else the approximate default. Exported for unit tests. */
export function usageFor(body: ChatRequest, reply: FakeReply): WireUsage {
  const u: FakeUsage = reply.usage ?? {
    prompt_tokens: approxTokens(JSON.stringify(body.messages ?? [])),
    completion_tokens: reply.type === 'text' ? approxTokens(reply.content) : reply.type === 'tool_calls' ? approxTokens(JSON.stringify(reply.calls)) : 0,
  };
  const prompt = tokenCount('prompt_tokens', u.prompt_tokens);
  const completion = tokenCount('completion_tokens', u.completion_tokens);
  const cached = tokenCount('cached_tokens', u.cached_tokens);
  const write = tokenCount('cache_write_tokens', u.cache_write_tokens);
  const reasoning = tokenCount('reasoning_tokens', u.reasoning_tokens);
  // the OpenAI contract: the buckets are PART of the totals (Hermes subtracts them from prompt_tokens)
  if (cached + write > prompt) throw new Error(`fake-llm: usage cached_tokens + cache_write_tokens (${cached + write}) exceed prompt_tokens (${prompt})`);
  if (reasoning > completion) throw new Error(`fake-llm: usage reasoning_tokens (${reasoning}) exceed completion_tokens (${completion})`);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached, cache_write_tokens: write },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}

function materializeCalls(calls: FakeToolCall[]) {
  return calls.map((c) => ({
    id: c.id ?? `call_${hex(12)}`,
    type: 'function' as const,
    function: {
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    },
  }));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, obj: unknown) {
  const data = JSON.stringify(obj);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(data),
  });
  res.end(data);
}

export async function startFakeLlm(opts: FakeLlmOptions): Promise<FakeLlm> {
  const model = opts.model ?? 'fake-model';
  const chunkSize = Math.max(1, opts.streamChunkSize ?? 16);
  const requests: RecordedRequest[] = [];
  const created = Math.floor(Date.now() / 1000);

  const modelObj = (id: string) => ({ id, object: 'model', created, owned_by: 'hermes-aep-fake' });

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    let raw: string;
    try {
      raw = await readBody(req);
    } catch {
      res.destroy();
      return;
    }
    let body: unknown = undefined;
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }

    if (method === 'GET' && (path === '/v1/models' || path === '/models')) {
      requests.push({ method, path, body, step: 'models', at: Date.now() });
      sendJson(res, 200, { object: 'list', data: [modelObj(model)] });
      return;
    }
    const single = /^\/(?:v1\/)?models\/(.+)$/.exec(path);
    if (method === 'GET' && single) {
      requests.push({ method, path, body, step: 'models', at: Date.now() });
      sendJson(res, 200, modelObj(decodeURIComponent(single[1]!)));
      return;
    }
    if (method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) {
      const chat = (body && typeof body === 'object' ? body : {}) as ChatRequest;
      const { step, reply } = chooseReply(opts, chat);
      // a script's inconsistent usage answers 500 with the reason (Hermes logs it), never a silently wrong count
      let usage: WireUsage | undefined;
      let failure = reply.type === 'error' ? { status: reply.status, message: reply.message } : undefined;
      if (reply.type !== 'error') {
        try {
          usage = usageFor(chat, reply);
        } catch (err) {
          failure = { status: 500, message: err instanceof Error ? err.message : String(err) };
        }
      }
      requests.push({ method, path, body, step, reply, ...(usage ? { usage } : {}), at: Date.now() });
      if (reply.delayMs && reply.delayMs > 0) {
        await new Promise((r) => setTimeout(r, reply.delayMs));
      }
      if (failure || !usage || reply.type === 'error') {
        sendJson(res, failure?.status ?? 500, {
          error: { message: failure?.message ?? 'fake-llm: no usage', type: 'fake_error', param: null, code: null },
        });
        return;
      }
      const id = `chatcmpl-${hex(12)}`;
      const now = Math.floor(Date.now() / 1000);
      const calls = reply.type === 'tool_calls' ? materializeCalls(reply.calls) : [];
      const content = reply.type === 'text' ? reply.content : (reply.content ?? null);
      const finish = reply.type === 'tool_calls' ? 'tool_calls' : 'stop';
      const respModel = typeof chat.model === 'string' && chat.model ? chat.model : model;

      if (!chat.stream) {
        sendJson(res, 200, {
          id,
          object: 'chat.completion',
          created: now,
          model: respModel,
          system_fingerprint: 'fp_fake',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content,
                ...(calls.length ? { tool_calls: calls } : {}),
              },
              logprobs: null,
              finish_reason: finish,
            },
          ],
          usage,
        });
        return;
      }

      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      const base = { id, object: 'chat.completion.chunk', created: now, model: respModel, system_fingerprint: 'fp_fake' };
      const send = (choices: unknown[], extra: Record<string, unknown> = {}) => res.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
      send([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
      if (typeof content === 'string' && content) {
        for (let i = 0; i < content.length; i += chunkSize) {
          send([{ index: 0, delta: { content: content.slice(i, i + chunkSize) }, logprobs: null, finish_reason: null }]);
        }
      }
      calls.forEach((c, index) => {
        send([
          {
            index: 0,
            delta: { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] },
            logprobs: null,
            finish_reason: null,
          },
        ]);
        const a = c.function.arguments;
        for (let i = 0; i < a.length; i += chunkSize) {
          send([
            {
              index: 0,
              delta: { tool_calls: [{ index, function: { arguments: a.slice(i, i + chunkSize) } }] },
              logprobs: null,
              finish_reason: null,
            },
          ]);
        }
      });
      send([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }]);
      if (chat.stream_options?.include_usage) send([], { usage });
      res.write('data: [DONE]\n\n');
      res.end();
      return;
    }

    requests.push({ method, path, body, step: 'none', at: Date.now() });
    sendJson(res, 404, { error: { message: `fake-llm: no route for ${method} ${path}`, type: 'invalid_request_error' } });
  };
  // a request that fails mid-answer drops its connection (Hermes sees the failure) instead of an unhandled rejection
  const server = createServer((req, res) => void serve(req, res).catch(() => res.destroy()));

  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? 0, '127.0.0.1', () => ok());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections?.();
        server.close(() => ok());
      }),
  };
}
