/**
 * Every attribute name the OpenTelemetry mirror sets, in one place: on spans,
 * on span events, on links and on the resource. Code sets attributes through
 * these constants only, and docs/spans.md lists exactly these
 * names (both checked by test/unit/otel/attribute-catalogue.test.ts).
 * Structural, except `aep.data` and the four GenAI content attributes
 * (`gen_ai.input.messages`, `gen_ai.output.messages`,
 * `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`), which are gated
 * by the capture ceilings (span-content.ts).
 */

/** On spans. */
export const SPAN_ATTR = {
  // every span: the AEP-0005 bridge names
  conversationId: 'gen_ai.conversation.id',
  sessionId: 'aep.session_id',
  // the attribute several backends group sessions by
  session: 'session.id',
  runId: 'aep.run_id',
  source: 'aep.source',
  capture: 'aep.capture',
  // runs and delegations (GenAI agent spans), tools (GenAI tool spans)
  operationName: 'gen_ai.operation.name',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  providerName: 'gen_ai.provider.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  // model calls (GenAI inference spans, `chat {model}`); the usage names also on the turn, summed
  responseModel: 'gen_ai.response.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningTokens: 'gen_ai.usage.reasoning.output_tokens',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  apiCall: 'hermes.api_call',
  apiMode: 'hermes.api_mode',
  // an auxiliary model call (title generation, compression, …): its task; a call that reported no usage; its first token
  auxTask: 'hermes.aux_task',
  usageUnknown: 'hermes.usage_unknown',
  firstTokenMs: 'hermes.first_token_ms',
  // emitter-asserted (AEP-0002 §5.2); the GenAI conventions name no cost attribute
  costUsd: 'aep.cost.usd',
  // content, only where the event's own capture AND AEP_OTEL_CAPTURE admit it (redacted or full)
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  // Hermes facts
  trigger: 'hermes.trigger',
  platform: 'hermes.platform',
  toolDurationMs: 'hermes.tool.duration_ms',
  childRole: 'hermes.child_role',
  childStatus: 'hermes.child_status',
  durationMs: 'hermes.duration_ms',
  // outcomes
  outcome: 'aep.outcome',
  cancelledBy: 'aep.cancelled_by',
  deniedBy: 'aep.denied_by',
  errorType: 'error.type',
  // attention cards
  attentionKind: 'aep.attention.kind',
  attentionRespondVia: 'aep.attention.respond_via',
  attentionRequestId: 'aep.attention.request_id',
  attentionOptions: 'aep.attention.options',
  attentionFields: 'aep.attention.fields',
  attentionAnswerOption: 'aep.attention.answer.option',
  attentionAnsweredVia: 'aep.attention.answered_via',
  attentionResolution: 'aep.attention.resolution',
  attentionLatencyMs: 'aep.attention.latency_ms',
  // an answer over control (AEP-0004): the command that carried it, the answer's cause
  controlCommandId: 'aep.control.command_id',
  // delegations
  delegationChildSessionId: 'aep.delegation.child_session_id',
  // units that did not finish normally
  startUnknown: 'aep.start_unknown',
  incomplete: 'aep.incomplete',
  incompleteReason: 'aep.incomplete.reason',
} as const;

/** On span events (one per AEP event). */
export const EVENT_ATTR = {
  eventId: 'aep.event_id',
  sequence: 'aep.sequence',
  epoch: 'aep.epoch',
  cause: 'aep.cause',
  data: 'aep.data',
  dataOmittedChars: 'aep.data.omitted_chars',
} as const;

/** On links. */
export const LINK_ATTR = {
  linkType: 'aep.link.type',
  causeEventId: 'aep.cause_event_id',
} as const;

/** On the resource (OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES add to or override them). */
export const RESOURCE_ATTR = {
  serviceName: 'service.name',
  serviceVersion: 'service.version',
} as const;

export type AttributePlace = 'span' | 'event' | 'link' | 'resource';

/** Every name with where it goes. */
export const ATTRIBUTE_CATALOGUE: ReadonlyMap<string, AttributePlace> = new Map<string, AttributePlace>([
  ...Object.values(SPAN_ATTR).map((n) => [n, 'span'] as const),
  ...Object.values(EVENT_ATTR).map((n) => [n, 'event'] as const),
  ...Object.values(LINK_ATTR).map((n) => [n, 'link'] as const),
  ...Object.values(RESOURCE_ATTR).map((n) => [n, 'resource'] as const),
]);
