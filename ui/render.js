/**
 * Drawing the model: the session list, the selected session's turn as a
 * tree, its finished turns, and the cards waiting on a human. Text goes in
 * as text nodes only. Elements that hold a person's input or focus (cards,
 * session buttons) are kept and updated by key, so a redraw never eats a
 * reason being typed; running times carry `data-tick` and are refreshed by
 * the page's one clock (`tick`).
 */
import { h, setText } from './dom.js';
import { count, duration, elapsed, shortId, timeLeft, tokens, usd } from './format.js';
import { sessionTotals } from './state.js';

/** Refresh every running time and time left on the page (one timer for all). */
export function tick(root, now) {
  for (const el of root.querySelectorAll('[data-tick]')) {
    const t = Number(el.dataset.at);
    if (el.dataset.tick === 'left') {
      const left = timeLeft(t, now);
      setText(el, left);
      el.classList.toggle('expired', left === 'expired');
    } else setText(el, elapsed(now - t));
  }
}

const ticking = (kind, at, now, cls) =>
  h('span', { 'data-tick': kind, 'data-at': String(at), class: cls }, kind === 'left' ? timeLeft(at, now) : elapsed(now - at));

function sessionLine(s, now) {
  const t = sessionTotals(s);
  const facts = [s.model, s.platform, tokens(t.tokensIn, t.tokensOut), usd(t.cost, t.unpriced)].filter((x) => x);
  const status = s.ended ? `ended${s.endReason ? ` (${s.endReason}${s.endedBy === 'idle' ? ', idle' : ''})` : ''}` : 'live';
  return [
    h('span', { class: `badge ${s.ended ? 'ended' : 'live'}` }, status),
    h('span', { class: 'who' }, `${s.agent ?? 'agent'} · ${shortId(s.id, 24)}`),
    h('span', { class: 'facts' }, facts.join(' · ')),
    h('span', { class: 'age' }, 'age ', s.firstAt !== undefined ? ticking('age', s.firstAt, now) : '?'),
  ];
}

/** The session list, keyed by session id: one button per session (click / Enter / Space selects). */
export function renderSessions(list, sessions, selected, now, onSelect) {
  const keep = new Map([...list.children].map((li) => [li.dataset.key, li]));
  let prev = null;
  for (const s of sessions) {
    let li = keep.get(s.id);
    keep.delete(s.id);
    if (li === undefined) {
      const button = h('button', { type: 'button', 'data-testid': 'session-item', 'data-session': s.id, onclick: () => onSelect(s.id) });
      li = h('li', {}, button);
      li.dataset.key = s.id;
    }
    const button = li.firstElementChild;
    button.replaceChildren(...sessionLine(s, now));
    button.setAttribute('aria-pressed', String(s.id === selected));
    button.classList.toggle('ended', s.ended);
    const want = prev === null ? list.firstElementChild : prev.nextElementSibling;
    if (want !== li) list.insertBefore(li, want);
    prev = li;
  }
  for (const li of keep.values()) li.remove();
}

function unitText(u, now) {
  const parts = [];
  switch (u.kind) {
    case 'run':
      parts.push(`turn${u.trigger ? ` (${u.trigger})` : ''}`);
      parts.push(tokens(u.tokensIn, u.tokensOut), usd(u.calls > 0 || u.cost > 0 ? u.cost : undefined, u.unpriced));
      break;
    case 'model':
      parts.push(`model ${u.name}${u.call !== undefined ? ` #${u.call}` : ''}`, tokens(u.tokensIn, u.tokensOut), usd(u.cost));
      break;
    case 'tool':
      parts.push(`tool ${u.name}`);
      break;
    case 'subagent':
      parts.push(`subagent ${u.name}${u.child ? ` ${shortId(u.child, 16)}` : ''}${u.role ? ` (${u.role})` : ''}`);
      break;
    case 'attention':
      parts.push(`asked a human: ${u.name}${u.answerable ? ' (gate card)' : ''}`);
      break;
  }
  const line = [h('span', { class: 'what' }, parts.filter((x) => x).join(' · '))];
  if (u.state === 'running' && u.startedAt !== undefined)
    line.push(h('span', { class: 'time' }, u.kind === 'attention' ? 'waiting ' : '', ticking('run', u.startedAt, now)));
  else if (u.durationMs !== undefined) line.push(h('span', { class: 'time' }, `${u.kind === 'attention' ? 'waited ' : ''}${duration(u.durationMs)}`));
  if (u.outcome !== undefined && u.state !== 'running') line.push(h('span', { class: 'outcome' }, u.outcome));
  return line;
}

function unitItem(u, now) {
  const li = h('li', { 'data-testid': 'unit', 'data-kind': u.kind, 'data-state': u.state, class: `unit ${u.state}` }, ...unitText(u, now));
  if (u.children.length > 0) li.append(h('ul', {}, ...u.children.map((c) => unitItem(c, now))));
  return li;
}

/** The turn's tree (redrawn whole: it holds no input). */
export function renderTree(el, caption, run, now) {
  if (run === undefined) {
    el.replaceChildren();
    setText(caption, 'No turn yet in this session.');
    return;
  }
  setText(caption, run.state === 'running' ? 'In flight:' : 'No turn in flight; the last one:');
  el.replaceChildren(unitItem(run, now));
}

/** Finished turns: outcome, duration, tokens, cost, and the trace in Jaeger. */
export function renderFinished(el, turns, jaegerUrl) {
  el.replaceChildren(
    ...turns.slice(0, 50).map((r) => {
      const facts = [
        r.outcome ?? r.state,
        duration(r.durationMs),
        tokens(r.tokensIn, r.tokensOut),
        usd(r.calls > 0 || r.cost > 0 ? r.cost : undefined, r.unpriced),
      ];
      const link =
        r.traceId !== undefined && jaegerUrl
          ? h(
              'a',
              {
                class: 'jaeger',
                'data-testid': 'jaeger',
                href: `${jaegerUrl.replace(/\/+$/, '')}/trace/${r.traceId}`,
                target: '_blank',
                rel: 'noreferrer noopener',
              },
              'trace in Jaeger',
            )
          : h('span', { class: 'muted' }, 'no trace id');
      return h(
        'li',
        { 'data-testid': 'finished-turn', 'data-run': r.id, 'data-state': r.state, class: `unit ${r.state}` },
        h('span', { class: 'what' }, facts.filter((x) => x).join(' · ')),
        ' ',
        link,
      );
    }),
  );
}

function optionsText(u) {
  if (u.options.length > 0) return `options: ${u.options.map((o) => (o.label && o.label !== o.id ? `${o.label} (${o.id})` : o.id)).join(' · ')}`;
  return u.fields > 0 ? `a form of ${count(u.fields)} field${u.fields === 1 ? '' : 's'}` : '';
}

function newCard(u, now, act) {
  const head = h('h3', {}, `${u.name} · ${shortId(u.session, 24)}${u.subject ? ` · ${u.subject}` : ''}`);
  const card = h('article', { 'data-testid': 'card', 'data-card': u.id, 'data-answerable': String(u.answerable), class: 'card' }, head);
  if (u.prompt) card.append(h('p', { class: 'prompt' }, u.prompt));
  card.append(h('p', { class: 'muted' }, 'waiting ', ticking('run', u.startedAt ?? now, now)));
  if (!u.answerable) {
    card.append(h('p', {}, optionsText(u)), h('p', { class: 'muted' }, 'answered in Hermes (observed here)'));
    return card;
  }
  const reason = h('input', { type: 'text', 'data-testid': 'card-reason', maxlength: '4000', autocomplete: 'off' });
  const allow = h('button', { type: 'button', 'data-testid': 'card-allow', class: 'allow' }, 'Allow');
  const deny = h('button', { type: 'button', 'data-testid': 'card-deny', class: 'deny' }, 'Deny');
  allow.addEventListener('click', () => act(u, 'allow', reason.value, card));
  deny.addEventListener('click', () => act(u, 'deny', reason.value, card));
  card.append(
    u.expiresAt !== undefined
      ? h('p', {}, h('span', { 'data-testid': 'card-time-left', 'data-tick': 'left', 'data-at': String(u.expiresAt) }, timeLeft(u.expiresAt, now)))
      : '',
    h('label', { class: 'reason' }, 'Reason (optional, sent with the answer) ', reason),
    h('div', { class: 'actions' }, allow, deny),
    h('p', { class: 'why muted' }),
  );
  return card;
}

/** Cards keyed by id: new ones added, answered ones removed, the rest (and what is typed in them) left alone. */
export function renderCards(box, cards, now, blocked, act) {
  const keep = new Map([...box.querySelectorAll('[data-testid="card"]')].map((c) => [c.dataset.card, c]));
  const empty = box.querySelector('.empty');
  if (cards.length > 0) empty?.remove();
  else if (empty === null) box.append(h('p', { class: 'muted empty' }, 'Nothing is waiting on a human.'));
  let prev = null;
  for (const u of cards) {
    let card = keep.get(u.id);
    keep.delete(u.id);
    card ??= newCard(u, now, act);
    const want = prev === null ? box.firstElementChild : prev.nextElementSibling;
    if (want !== card) box.insertBefore(card, want);
    prev = card;
    if (!u.answerable) continue;
    const busy = card.dataset.busy === '1';
    for (const sel of ['card-allow', 'card-deny', 'card-reason']) card.querySelector(`[data-testid="${sel}"]`).disabled = busy || blocked !== undefined;
    setText(card.querySelector('.why'), blocked ?? '');
  }
  for (const c of keep.values()) c.remove();
}
