import type { ModelUsage } from '../core/usage-keys.js';
import type { AepType, ControlAckType, GUARDRAIL, LifecycleType, XHermesFallbackType, XHermesType } from './lifecycle.js';

/**
 * The `data` of every AEP type this project emits, as its payload schema
 * describes it (`schemas/types/*.schema.json` for core types,
 * `schemas/x-hermes/*.schema.json` for the vendor ones). Only the members a
 * schema defines are listed; AEP payloads admit more (no schema closes its
 * properties), which is how `run.started` carries `message_digest`.
 */
export type ToolRef = { readonly name: string; readonly call_id?: string };
export type ErrorInfo = { readonly type?: string; readonly message?: string };
export type Peer = { readonly session?: string; readonly run?: string; readonly agent?: string };
export type Choice = { readonly id: string; readonly label: string };
export type FieldSpec = {
  readonly id: string;
  readonly type: 'string' | 'number' | 'boolean' | 'select';
  readonly label: string;
  readonly required?: boolean;
  readonly multi?: boolean;
  readonly other?: boolean;
  readonly choices?: readonly Choice[];
  readonly min?: number;
  readonly max?: number;
};
export type CardOutcome = 'attention.answered' | 'attention.timeout' | 'attention.resolved';
export type Resolution = 'answered' | 'auto' | 'dismissed';
/** `control.rejected.reason` (AEP-0004 §3) */
export type NackReason = 'unsupported' | 'unauthorized' | 'busy' | 'refused' | 'invalid';

/** Token accounting with the GenAI semantic-convention names, flat (AEP-0002 §5.2 `usage`, as the AEP schemas carry it). */
export type Usage = ModelUsage;
/** AEP-0002 §5.2 `cost`: emitter-asserted, in one ISO 4217 currency. */
export type Cost = { readonly currency: string; readonly total?: number; readonly prompt?: number; readonly completion?: number };
/** What a run's terminal carries of its model calls (summed by identity, src/identity/run-usage.ts). */
export type RunTotals = Usage & {
  readonly cost?: Cost;
  /** this project's: how many of the run's model calls reported no usage (the token sums leave them out: a lower bound) */
  readonly calls_without_usage?: number;
};

/** One assistant tool call as a model call's output carries it (content: redacted or full). */
export type ModelToolCall = { readonly id?: string; readonly name?: string; readonly arguments?: unknown };
/** A model call's output (assistant text and tool calls), gated like every content field. */
export type ModelOutput = { readonly content?: string; readonly tool_calls?: readonly ModelToolCall[] };

/** `x.hermes.model.call` (schemas/x-hermes/x.hermes.model.call.schema.json). */
export type ModelCallPayload = Usage & {
  readonly model?: string;
  readonly response_model?: string;
  readonly provider?: string;
  readonly api_mode?: string;
  readonly server_address?: string;
  readonly server_port?: number;
  readonly api_request_id?: string;
  /** 1-based index of this call in its turn */
  readonly api_call?: number;
  readonly started_at?: string;
  readonly ended_at?: string;
  readonly duration_ms?: number;
  readonly finish_reason?: string;
  readonly message_count?: number;
  readonly assistant_content_chars?: number;
  readonly assistant_tool_call_count?: number;
  /** an auxiliary call's task (`title_generation`, `compression`, …); absent on a main-loop call */
  readonly aux_task?: string;
  /** a failed auxiliary call's error type */
  readonly error_type?: string;
  /** the call reported no usage (a streamed or failed auxiliary call): its tokens are unknown, not zero */
  readonly usage_unknown?: true;
  /** ms from the call's stream start to its first text (or its end when no text came), as the daemon received them */
  readonly first_token_ms?: number;
  /** added by the daemon's pricing step when the model's price is known */
  readonly cost?: Cost;
  readonly output_redacted?: ModelOutput;
  readonly output?: ModelOutput;
};

export type AepPayloads = {
  'session.started': {
    readonly label?: string;
    readonly parent?: { readonly session: string; readonly run?: string; readonly agent?: string };
    readonly client?: { readonly name: string; readonly version?: string };
    readonly cwd?: string;
  };
  'session.ended': { readonly reason?: 'normal' | 'error' | 'timeout' | 'killed' | 'compaction'; readonly duration_ms?: number; readonly runs?: number };
  'run.started': {
    readonly trigger?: 'user' | 'schedule' | 'agent' | 'control' | 'resume';
    readonly prompt?: string;
    /** this project's: the digest of the user's message, at metadata and above */
    readonly message_digest?: string;
  };
  'run.finished': { readonly duration_ms?: number; readonly summary?: string } & RunTotals;
  'run.cancelled': { readonly by?: 'user' | 'control' | 'policy' | 'shutdown'; readonly reason?: string; readonly duration_ms?: number } & RunTotals;
  'run.failed': { readonly reason: string; readonly error?: ErrorInfo; readonly duration_ms?: number } & RunTotals;
  'tool.requested': { readonly tool: ToolRef; readonly args_digest?: string; readonly args_redacted?: unknown; readonly args?: object };
  'tool.completed': {
    readonly tool: ToolRef;
    readonly duration_ms?: number;
    readonly status?: string;
    readonly result_digest?: string;
    readonly result_redacted?: unknown;
    readonly result?: string | object;
  };
  'tool.failed': { readonly tool: ToolRef; readonly error: ErrorInfo; readonly duration_ms?: number };
  'tool.denied': { readonly tool: ToolRef; readonly by: 'policy' | 'user_setting' | 'runtime'; readonly rule?: string; readonly duration_ms?: number };
  'attention.requested': {
    readonly kind: 'permission' | 'input' | 'auth' | 'review' | 'form' | 'other';
    readonly prompt: string;
    readonly options?: readonly Choice[];
    readonly fields?: readonly FieldSpec[];
    readonly expires_at?: string;
    readonly respond_via?: readonly ('control' | 'oob')[];
  };
  'attention.answered': {
    readonly answer: { readonly option?: string; readonly text?: string; readonly values?: Readonly<Record<string, string | readonly string[]>> };
    readonly by?: string;
    readonly via?: 'control' | 'oob';
  };
  'attention.resolved': { readonly resolution: Resolution; readonly latency_ms?: number };
  'attention.timeout': { readonly after_ms?: number };
  'delegation.subagent.started': { readonly child?: Peer; readonly agent_type?: string; readonly role?: string };
  'delegation.subagent.stopped': { readonly child?: Peer; readonly agent_type?: string; readonly status?: string; readonly duration_ms?: number };
  'assessment.guardrail.recorded': {
    readonly guardrail?: {
      readonly stage?: 'input' | 'output';
      readonly verdict?: 'allowed' | 'flagged' | 'blocked' | 'modified';
      readonly categories?: readonly { readonly name?: string; readonly score?: number }[];
      readonly detector?: { readonly name?: string; readonly version?: string };
      readonly explanation?: string;
    };
  };
  'x.hermes.api.error': { readonly status_code?: number; readonly retry_count?: number; readonly reason?: string; readonly error_message?: string };
  'x.hermes.model.call': ModelCallPayload;
  'x.hermes.approval.review.requested': Record<string, never>;
  'x.hermes.attention.unpaired': { readonly of: CardOutcome; readonly resolution?: Resolution; readonly option?: string };
  'x.hermes.session.reset': { readonly reason?: string };
  'control.accepted': Record<string, never>;
  'control.rejected': { readonly reason: NackReason; readonly detail?: string };
  'x.hermes.instruction.delivered': { readonly queued_ms: number };
  'x.hermes.instruction.dropped': { readonly reason: 'session-ended' };
};

/** The types with a payload of their own; the rest are unknown hooks (`x.hermes.<hook>`), whose `data` is always `{}`. */
export type KnownType = keyof AepPayloads;

/** The `data` of type `T`. */
export type PayloadOf<T extends AepType> = T extends KnownType ? AepPayloads[T] : T extends XHermesFallbackType ? Record<string, never> : never;

type Missing = Exclude<LifecycleType | typeof GUARDRAIL | ControlAckType | XHermesType, KnownType>;
/** Compile-time: every type the lifecycle table names has its payload here (else this names the missing ones). */
export const EVERY_TYPE_HAS_A_PAYLOAD: [Missing] extends [never] ? true : Missing = true;
