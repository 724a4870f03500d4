/**
 * The page's model, derived from AEP events only (the history lines the
 * daemon's stream sends). No DOM, no clock, no I/O: the same events in the
 * same order give the same model, so a reload (from=all) rebuilds it and a
 * unit test can feed it fixtures. `apply` updates the model in place (a
 * turn's tree grows event by event) and dedupes by the AEP key
 * (source + id), so a replay after a reconnect adds nothing twice.
 */

/** How many dedupe keys are kept (oldest forgotten first): far above a replay buffer's events. */
const MAX_SEEN = 200_000;
/** How long an expired card stays listed without an outcome (as `hermes-aep tail` does). */
export const EXPIRED_GRACE_MS = 60_000;

const rec = (v) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined);
const str = (v) => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
const timeOf = (ev) => {
  const t = typeof ev.time === 'string' ? Date.parse(ev.time) : NaN;
  return Number.isFinite(t) ? t : undefined;
};
const usd = (cost) => {
  const c = rec(cost);
  return c !== undefined && c.currency === 'USD' ? num(c.total) : undefined;
};

/** The trace id of a W3C traceparent (`00-<32 hex>-<16 hex>-<2 hex>`), unless it is all zeros. */
export function traceIdOf(traceparent) {
  const m = typeof traceparent === 'string' ? /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent) : null;
  return m !== null && !/^0+$/.test(m[1]) ? m[1] : undefined;
}

export function createModel() {
  return {
    /** dedupe keys of the events applied */
    seen: new Set(),
    sessions: new Map(),
    /** units by the id of the event that opened them (a tool.requested, an attention.requested): outcomes find them by cause/subject */
    byEvent: new Map(),
    /** attention units (cards) by their id, answered or not */
    cards: new Map(),
    /** bumped by every event that changed something: the page redraws when it moves */
    version: 0,
  };
}

function sessionOf(model, id, ev, at) {
  let s = model.sessions.get(id);
  if (s === undefined) {
    s = {
      id,
      agent: undefined,
      model: undefined,
      platform: undefined,
      provider: undefined,
      parent: undefined,
      firstAt: at,
      lastAt: at,
      ended: false,
      endedAt: undefined,
      endReason: undefined,
      endedBy: undefined,
      runs: new Map(),
      /** units outside any run (a card raised between turns) */
      loose: [],
      tokensIn: 0,
      tokensOut: 0,
      cost: 0,
      unpriced: 0,
    };
    model.sessions.set(id, s);
  }
  if (at !== undefined) {
    if (s.firstAt === undefined || at < s.firstAt) s.firstAt = at;
    if (s.lastAt === undefined || at > s.lastAt) s.lastAt = at;
  }
  s.agent ??= str(ev.agent);
  if (str(ev.hermesmodel) !== undefined) s.model = ev.hermesmodel;
  if (str(ev.hermesplatform) !== undefined) s.platform = ev.hermesplatform;
  if (str(ev.hermesprovider) !== undefined) s.provider = ev.hermesprovider;
  return s;
}

function runOf(s, id, at) {
  let r = s.runs.get(id);
  if (r === undefined) {
    r = {
      kind: 'run',
      id,
      name: id,
      session: s.id,
      state: 'running',
      startedAt: at,
      endedAt: undefined,
      durationMs: undefined,
      outcome: undefined,
      trigger: undefined,
      traceId: undefined,
      children: [],
      /** sums of this run's model calls; replaced by the run's own totals when it ends with them */
      tokensIn: 0,
      tokensOut: 0,
      cost: 0,
      unpriced: 0,
      calls: 0,
    };
    s.runs.set(id, r);
  }
  return r;
}

function unit(kind, id, name, at) {
  return { kind, id, name, state: 'running', startedAt: at, endedAt: undefined, durationMs: undefined, outcome: undefined, children: [] };
}

function end(u, state, at, durationMs, outcome) {
  if (u.endedAt !== undefined && u.state !== 'running') return;
  u.state = state;
  u.endedAt = at ?? u.startedAt;
  u.durationMs = durationMs ?? (u.endedAt !== undefined && u.startedAt !== undefined ? Math.max(0, u.endedAt - u.startedAt) : undefined);
  if (outcome !== undefined) u.outcome = outcome;
}

/** Units still open when their run or session ends stop ticking: nothing more will come for them. */
function closeOpen(children, at) {
  for (const c of children) {
    if (c.state === 'running') end(c, 'done', at, undefined, 'no outcome seen');
    closeOpen(c.children, at);
  }
}

function toolName(ev, d) {
  return str(rec(d.tool)?.name) ?? str(ev.subject) ?? 'tool';
}

/** The tool unit an outcome belongs to: its call id, else its cause, else the oldest open one of that name. */
function findTool(model, parent, ev, d) {
  const callId = str(rec(d.tool)?.call_id);
  const name = toolName(ev, d);
  const tools = parent.filter((u) => u.kind === 'tool');
  return (
    (callId !== undefined ? tools.find((u) => u.callId === callId) : undefined) ??
    (str(ev.cause) !== undefined ? model.byEvent.get(ev.cause) : undefined) ??
    tools.find((u) => u.state === 'running' && u.name === name)
  );
}

/** Apply one event (a parsed history line); false when it was seen before or is not an event. */
export function apply(model, ev) {
  if (rec(ev) === undefined || str(ev.id) === undefined || str(ev.type) === undefined) return false;
  const key = `${String(ev.source)}\u0000${ev.id}`;
  if (model.seen.has(key)) return false;
  model.seen.add(key);
  if (model.seen.size > MAX_SEEN) model.seen.delete(model.seen.values().next().value);
  const sid = str(ev.session);
  if (sid === undefined) return false; // the agent lane (heartbeats, presence): nothing the page shows
  const at = timeOf(ev);
  const d = rec(ev.data) ?? {};
  const s = sessionOf(model, sid, ev, at);
  const runId = str(ev.run);
  const r = runId !== undefined ? runOf(s, runId, at) : undefined;
  const place = r !== undefined ? r.children : s.loose;
  model.version += 1;

  switch (ev.type) {
    case 'session.started':
      s.agent = str(rec(d.client)?.name) ?? s.agent;
      s.model = str(d['gen_ai.request.model']) ?? s.model;
      s.parent = str(rec(d.parent)?.session) ?? s.parent;
      break;
    case 'session.ended':
      s.ended = true;
      s.endedAt = at;
      s.endReason = str(d.reason);
      s.endedBy = ev.hermesendedby === 'idle' ? 'idle' : undefined;
      for (const run of s.runs.values()) {
        if (run.state === 'running') end(run, 'done', at, undefined, 'session ended');
        closeOpen(run.children, at);
      }
      closeOpen(s.loose, at);
      break;
    case 'run.started':
      r.startedAt = at ?? r.startedAt;
      r.trigger = str(d.trigger);
      r.traceId = traceIdOf(ev.traceparent) ?? r.traceId;
      break;
    case 'run.finished':
    case 'run.failed':
    case 'run.cancelled': {
      if (r === undefined) break;
      r.traceId ??= traceIdOf(ev.traceparent);
      const outcome = ev.type === 'run.finished' ? 'finished' : ev.type === 'run.failed' ? `failed${str(d.reason) ? `: ${d.reason}` : ''}` : 'cancelled';
      end(r, ev.type === 'run.finished' ? 'done' : 'failed', at, num(d.duration_ms), outcome);
      // the run's own totals are the daemon's sum of its model calls: they replace the page's running sum
      const tin = num(d['gen_ai.usage.input_tokens']);
      const tout = num(d['gen_ai.usage.output_tokens']);
      if (tin !== undefined || tout !== undefined) {
        r.tokensIn = tin ?? 0;
        r.tokensOut = tout ?? 0;
      }
      const cost = usd(d.cost);
      if (cost !== undefined) {
        r.cost = cost;
        r.unpriced = 0;
      }
      closeOpen(r.children, at);
      break;
    }
    case 'x.hermes.model.call': {
      const u = unit('model', ev.id, str(d.response_model) ?? str(d.model) ?? s.model ?? 'model', at);
      u.call = num(d.api_call);
      u.tokensIn = num(d['gen_ai.usage.input_tokens']);
      u.tokensOut = num(d['gen_ai.usage.output_tokens']);
      u.cost = usd(d.cost);
      u.finish = str(d.finish_reason);
      end(u, 'done', at, num(d.duration_ms), u.finish);
      // one event per call, written when it returned: it started its duration earlier
      if (at !== undefined && u.durationMs !== undefined) u.startedAt = at - u.durationMs;
      place.push(u);
      s.model = str(d.model) ?? s.model;
      const target = r ?? s;
      target.tokensIn += u.tokensIn ?? 0;
      target.tokensOut += u.tokensOut ?? 0;
      if (u.cost !== undefined) target.cost += u.cost;
      else target.unpriced += 1;
      if (r !== undefined) r.calls += 1;
      break;
    }
    case 'x.hermes.api.error': {
      const u = unit('model', ev.id, str(ev.hermesmodel) ?? s.model ?? 'model', at);
      end(u, 'failed', at, undefined, `api error${num(d.status_code) !== undefined ? ` ${d.status_code}` : ''}`);
      place.push(u);
      break;
    }
    case 'tool.requested': {
      const u = unit('tool', ev.id, toolName(ev, d), at);
      u.callId = str(rec(d.tool)?.call_id);
      place.push(u);
      model.byEvent.set(ev.id, u);
      break;
    }
    case 'tool.completed':
    case 'tool.failed':
    case 'tool.denied': {
      let u = findTool(model, place, ev, d);
      if (u === undefined) {
        // an outcome without its request (a call refused before it started, a replay that began later)
        u = unit('tool', ev.id, toolName(ev, d), at);
        u.callId = str(rec(d.tool)?.call_id);
        place.push(u);
      }
      const status = str(d.status);
      if (ev.type === 'tool.denied') end(u, 'denied', at, num(d.duration_ms), `denied${str(d.by) ? ` by ${d.by}` : ''}`);
      else if (ev.type === 'tool.failed') end(u, 'failed', at, num(d.duration_ms), `failed${str(d.reason) ? `: ${d.reason}` : ''}`);
      else end(u, status === 'error' || status === 'failure' ? 'failed' : 'done', at, num(d.duration_ms), status ?? 'completed');
      break;
    }
    case 'delegation.subagent.started': {
      const child = str(rec(d.child)?.session) ?? str(ev.subject) ?? ev.id;
      const u = unit('subagent', child, str(rec(d.child)?.agent) ?? str(d.agent_type) ?? 'subagent', at);
      u.child = child;
      u.role = str(d.role);
      place.push(u);
      model.byEvent.set(ev.id, u);
      break;
    }
    case 'delegation.subagent.stopped': {
      const child = str(rec(d.child)?.session) ?? str(ev.subject);
      let u = (str(ev.cause) !== undefined ? model.byEvent.get(ev.cause) : undefined) ?? place.find((x) => x.kind === 'subagent' && x.child === child);
      if (u === undefined) {
        u = unit('subagent', child ?? ev.id, 'subagent', at);
        u.child = child;
        place.push(u);
      }
      const status = str(d.status);
      const failed = status !== undefined && /fail|error|interrupt|cancel/.test(status);
      end(u, failed ? 'failed' : 'done', at, num(d.duration_ms), status ?? 'stopped');
      break;
    }
    case 'attention.requested': {
      const via = Array.isArray(d.respond_via) ? d.respond_via.filter((x) => typeof x === 'string') : [];
      const u = unit('attention', ev.id, str(d.kind) ?? 'attention', at);
      const expires = typeof d.expires_at === 'string' ? Date.parse(d.expires_at) : NaN;
      Object.assign(u, {
        session: s.id,
        run: runId,
        subject: str(ev.subject),
        prompt: str(d.prompt),
        options: Array.isArray(d.options)
          ? d.options.map((o) => ({ id: str(rec(o)?.id) ?? '', label: str(rec(o)?.label) ?? str(rec(o)?.id) ?? '' })).filter((o) => o.id !== '')
          : [],
        fields: Array.isArray(d.fields) ? d.fields.length : 0,
        answerable: via.includes('control'),
        expiresAt: Number.isFinite(expires) ? expires : undefined,
      });
      // a card raised by a tool call hangs under it in the tree
      const tool = str(ev.cause) !== undefined ? model.byEvent.get(ev.cause) : undefined;
      (tool !== undefined && tool.kind === 'tool' ? tool.children : place).push(u);
      model.byEvent.set(ev.id, u);
      model.cards.set(ev.id, u);
      break;
    }
    case 'attention.answered':
    case 'attention.resolved':
    case 'attention.timeout': {
      const u = str(ev.subject) !== undefined ? model.cards.get(ev.subject) : undefined;
      if (u === undefined) break;
      if (ev.type === 'attention.answered') {
        const option = str(rec(d.answer)?.option);
        u.answer = option;
        u.via = str(d.via);
        end(u, option === 'deny' ? 'denied' : 'done', at, undefined, option !== undefined ? `answered: ${option}` : 'answered');
      } else if (ev.type === 'attention.timeout') {
        end(u, 'failed', at, num(d.after_ms), 'timed out');
      } else {
        const how = str(d.resolution);
        end(u, 'done', at, num(d.latency_ms), how === undefined || how === 'answered' ? 'answered' : how);
      }
      break;
    }
    default:
      break;
  }
  return true;
}

/** Tokens and cost of a session so far: its runs' (their own totals once ended) and any model call outside a run. */
export function sessionTotals(s) {
  let tokensIn = s.tokensIn;
  let tokensOut = s.tokensOut;
  let cost = s.cost;
  let unpriced = s.unpriced;
  for (const r of s.runs.values()) {
    tokensIn += r.tokensIn;
    tokensOut += r.tokensOut;
    cost += r.cost;
    unpriced += r.unpriced;
  }
  return { tokensIn, tokensOut, cost, unpriced };
}

/** Sessions, live ones first, then the most recently active. */
export function sessionList(model) {
  return [...model.sessions.values()].sort((a, b) => Number(a.ended) - Number(b.ended) || (b.lastAt ?? 0) - (a.lastAt ?? 0) || (a.id < b.id ? -1 : 1));
}

/** The session shown when none was chosen (or the chosen one is gone): the first live one, else the first. */
export function defaultSelection(model, chosen) {
  if (chosen !== undefined && model.sessions.has(chosen)) return chosen;
  return sessionList(model)[0]?.id;
}

/** The turn to draw for a session: the one in flight, else the last one. */
export function currentRun(s) {
  let last;
  for (const r of s.runs.values()) {
    if (r.state === 'running') return r;
    last = r;
  }
  return last;
}

/** Ended runs of a session, newest first. */
export function finishedTurns(s) {
  return [...s.runs.values()].filter((r) => r.state !== 'running').reverse();
}

/** Cards still waiting on a human, oldest first: not answered, their session and turn not over, not long expired. */
export function pendingCards(model, now) {
  const out = [];
  for (const u of model.cards.values()) {
    if (u.state !== 'running') continue;
    const s = model.sessions.get(u.session);
    if (s === undefined || s.ended) continue;
    if (u.run !== undefined && s.runs.get(u.run)?.state !== 'running') continue;
    if (u.expiresAt !== undefined && now - u.expiresAt > EXPIRED_GRACE_MS) continue;
    out.push(u);
  }
  return out.sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0));
}
