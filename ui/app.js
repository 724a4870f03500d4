/**
 * The live view's entry: takes the token, reads `/ui/state`, follows the
 * stream into the model (state.js), and draws it (render.js) at most once a
 * frame; one clock ticks every running time. Answers and instructions go
 * through `POST /ui/command` (api.js).
 */
import { authHeaders, fetchState, sendCommand, takeToken } from './api.js';
import { renderCards, renderFinished, renderSessions, renderTree, tick } from './render.js';
import { follow } from './sse.js';
import { apply, createModel, currentRun, defaultSelection, finishedTurns, pendingCards, sessionList } from './state.js';
import { setText } from './dom.js';

const $ = (id) => document.getElementById(id);
const el = {
  connection: $('connection'),
  daemon: $('daemon'),
  notice: $('notice'),
  sessions: $('session-list'),
  caption: $('turn-caption'),
  tree: $('turn-tree'),
  finished: $('finished'),
  cards: $('cards'),
  result: $('answer-result'),
  steerText: $('steer-text'),
  steerSend: $('steer-send'),
  steerWhy: $('steer-why'),
};

const NEEDS_TOKEN = 'answering needs AEP_TOKEN: start the daemon with it and open the page with hermes-aep ui --url';
const GATE_OFF = 'the control gate is off: start the daemon with AEP_HERMES_CONTROL=1 and install the hooks with hermes-aep install --control';
const STEER_OFF = 'steering is off: start the daemon with AEP_INSTRUCT=1 and install the hooks with hermes-aep install --instruct';

const token = takeToken(location, sessionStorage, history);
const model = createModel();
/** the daemon's settings (`/ui/state`), and its clock's lead over ours */
let ctl;
let skew = 0;
let chosen;
let drawn = '';
let scheduled = false;

const now = () => Date.now() + skew;

function notice(text) {
  setText(el.notice, text);
  el.notice.hidden = text === '';
}

/** Why answering (or steering) is not possible now, in words; undefined when it is. */
function blocked(gate) {
  if (ctl === undefined) return 'waiting for the daemon (/ui/state)';
  if (ctl.canAnswer !== true) return token === undefined ? NEEDS_TOKEN : `this page's token can read, not answer: ${NEEDS_TOKEN}`;
  if (gate === 'control' && ctl.gates?.control !== true) return GATE_OFF;
  if (gate === 'instruct' && ctl.gates?.instruct !== true) return STEER_OFF;
  return undefined;
}

function showResult(what, r) {
  setText(el.result, `${what}: ${r.text}`);
  el.result.dataset.outcome = r.accepted ? 'accepted' : 'rejected';
}

async function answer(card, option, reason, node) {
  node.dataset.busy = '1';
  draw();
  const r = await sendCommand(token, { action: 'answer', session: card.session, card: card.id, option, ...(reason.trim() !== '' ? { reason } : {}) });
  showResult(`${option === 'allow' ? 'Allow' : 'Deny'} (card ${card.id})`, r);
  // accepted: the card goes when its outcome arrives on the stream
  if (!r.accepted) delete node.dataset.busy;
  draw();
}

async function steer() {
  const session = defaultSelection(model, chosen);
  const text = el.steerText.value;
  if (session === undefined || text.trim() === '' || blocked('instruct') !== undefined) return;
  el.steerSend.disabled = true;
  const r = await sendCommand(token, { action: 'instruct', session, text });
  showResult(`Instruction (session ${session})`, r);
  if (r.accepted) el.steerText.value = '';
  el.steerSend.disabled = false;
  draw();
}

function select(id) {
  chosen = id;
  draw();
}

function draw() {
  scheduled = false;
  const t = now();
  const sel = defaultSelection(model, chosen);
  const s = sel !== undefined ? model.sessions.get(sel) : undefined;
  const key = `${model.version}|${sel}`;
  if (key !== drawn) {
    drawn = key;
    renderSessions(el.sessions, sessionList(model), sel, t, select);
    renderTree(el.tree, el.caption, s !== undefined ? currentRun(s) : undefined, t);
    renderFinished(el.finished, s !== undefined ? finishedTurns(s) : [], ctl?.jaegerUrl);
  }
  renderCards(el.cards, pendingCards(model, t), t, blocked('control'), answer);
  const why = s === undefined ? 'no session selected' : s.ended ? 'this session has ended' : blocked('instruct');
  el.steerText.disabled = why !== undefined;
  el.steerSend.disabled = why !== undefined;
  setText(el.steerWhy, why ?? `steers session ${s.id}`);
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => scheduled && draw());
  // a hidden tab gets no frames: draw anyway, less often
  setTimeout(() => scheduled && draw(), 250);
}

async function loadState() {
  const r = await fetchState(token);
  if (r.ok) {
    ctl = r.state;
    const d = Date.parse(ctl.now);
    if (Number.isFinite(d)) skew = d - Date.now();
    setText(el.daemon, `hermes-aep ${ctl.version ?? ''} · capture ${ctl.capture ?? 'metadata'}`);
  } else if (r.status === 401 || r.status === 403) {
    notice(`The daemon refused this page (${r.error}): run hermes-aep ui --url and open the address it prints.`);
  }
  drawn = '';
  schedule();
}

function setConnection(state, refusal) {
  setText(el.connection, state);
  el.connection.dataset.state = state;
  if (state === 'live') {
    notice(
      token === undefined ? 'No token: reading works only when the daemon allows it (AEP_STREAM_READ=open). Run hermes-aep ui --url for the full address.' : '',
    );
    void loadState();
  }
  if (refusal !== undefined) notice(`The stream was refused (${refusal.status} ${refusal.error}): run hermes-aep ui --url and open the address it prints.`);
}

el.steerSend.addEventListener('click', () => void steer());
el.steerText.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) {
    e.preventDefault();
    void steer();
  }
});
setInterval(() => {
  tick(document.body, now());
  renderCards(el.cards, pendingCards(model, now()), now(), blocked('control'), answer);
}, 1000);

draw();
void loadState();
void follow({
  url: '/stream',
  headers: () => authHeaders(token),
  // every (re)connect asks for the whole replay buffer: the model drops what it has (dedupe by source + id), and a
  // session that began while the page was cut off is replayed too (a position list names only sessions seen)
  query: () => 'from=all&capture=metadata',
  signal: new AbortController().signal,
  on: {
    state: setConnection,
    message: (m) => {
      let ev;
      try {
        ev = JSON.parse(m.data);
      } catch {
        return;
      }
      if (apply(model, ev)) schedule();
    },
  },
});
