"""hermes-aep's zero-spawn transport: a forwarder, not an observer (installed by `hermes-aep install --transport plugin`).

Each of the thirteen hooks becomes the very envelope Hermes's shell-hook path writes to a hook's stdin (same bytes,
but for post_api_request's raw `assistant_message`, left out: see DROPPED), queued for one background thread that
POSTs it to the hermes-aep daemon over a kept-alive connection, as the shim (src/shim/hook.cts) would. Observation
hooks never wait. Two opt-in gates, read at each call from hermes-aep.json's args (--control, --instruct) or else from
Hermes's environment (AEP_HERMES_CONTROL, AEP_INSTRUCT): under control a pre_tool_call is held until the daemon
answers (at most AEP_ATTENTION_TIMEOUT_MS + 3 s) and may come back as a block; under instruct a pre_llm_call waits
AEP_SHIM_TIMEOUT_MS for a context reply. `--no-model-calls` in the args (install's opt-out) leaves post_api_request
unsubscribed. Every failure fails open. What the daemon provably did not take goes to the shim's spool, in the shim's
format. All logic stays in the daemon. Standard library only; nothing is printed, and no log message carries content.
"""

import atexit
import http.client
import importlib.util
import json
import logging
import math
import os
import queue
import random
import re
import socket
import string
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

HOOKS = ("pre_tool_call", "post_tool_call", "pre_llm_call", "on_session_start", "on_session_end", "on_session_finalize",
         "on_session_reset", "subagent_start", "subagent_stop", "pre_approval_request", "post_approval_response",
         "api_request_error", "post_api_request")
MODEL_CALL_HOOK = "post_api_request"  # one call per model call; not subscribed with --no-model-calls in the args
NO_MODEL_CALLS = "--no-model-calls"
# kwargs left out of the envelope. post_api_request's `assistant_message` is the provider SDK's raw response object:
# the shell transport writes its str() (json default=str), but the daemon never reads extra.assistant_message, only
# extra.response.assistant_message (Hermes's sanitized copy of the same message), so the plugin drops it: fewer bytes
# per model call, and no str() of a foreign object on the agent's thread.
DROPPED = {"post_api_request": ("assistant_message",),
           # the aux call's request (messages, system prompt, body) is content the daemon never reads; a stream's text
           # too (it times the stream, docs/hermes-drift.md "After 0.19")
           "post_auxiliary_call": ("request_messages", "system_prompt", "request"),
           "on_stream_delta": ("delta",), "on_stream_end": ("final_text",)}
# Hooks of later Hermes builds (issue 25), subscribed only where the running Hermes fires them (newer_hooks): the stream
# hooks when its VALID_HOOKS lists them, the auxiliary call when it has agent/auxiliary_hooks.py. A plugin, not a shell
# hook: on_stream_delta fires per chunk, and only its first text chunk per model call is forwarded.
STREAM_HOOKS = ("on_stream_start", "on_stream_delta", "on_stream_end")
AUX_CALL_HOOK = "post_auxiliary_call"
FIRST_TEXT_KEYS_MAX = 1024
TOP_LEVEL = ("tool_name", "args", "session_id", "parent_session_id")
QUEUE_MAX = 10000
IDLE_RECONNECT_S = 2.0  # under the daemon's 5 s keep-alive: never reuse a connection it may be closing
EXIT_FLUSH_S = 2.0
MAX_REPLY = 1048576
DEFAULT_ATTENTION_MS = 55000  # the daemon's hold window unless AEP_ATTENTION_TIMEOUT_MS / --attention-timeout-ms say otherwise
HOLD_MARGIN_MS = 3000  # a held pre_tool_call waits this much longer than the window (the shim's rule)
HOLD_HEADER = "x-hermes-aep-hold-ms"
SPOOL_KEY_HEADER = "x-hermes-aep-spool-key"  # the spool key, chosen before sending: a hook the daemon held after a failed write is recognised
STEER_HEADER = "x-hermes-aep-steer"  # a pre_llm_call under instruct: its context reply reaches Hermes, so steering may ride it
HERMES_MARGIN_MS = 2000  # under a Hermes that bounds plugin callbacks, the wait ends this long before Hermes would give up on us
HOLD_FLOOR_MS = 2000  # the daemon holds at most (the announced wait - 2000): with no more left than this, nothing is held
VALUE_OPTIONS = ("--socket", "--url", "--state-dir", "--attention-timeout-ms")
log = logging.getLogger(__name__)


def envelope(event, kwargs):
    """agent/shell_hooks.py `_serialize_payload`, byte for byte, as UTF-8 (without the kwargs DROPPED names)."""
    try:
        cwd = str(Path.cwd())
    except OSError:
        cwd = ""
    args = kwargs.get("args")
    dropped = DROPPED.get(event, ())
    return json.dumps({
        "hook_event_name": event,
        "tool_name": kwargs.get("tool_name"),
        "tool_input": args if isinstance(args, dict) else None,
        "session_id": kwargs.get("session_id") or kwargs.get("parent_session_id") or "",
        "cwd": cwd,
        "extra": {k: v for k, v in kwargs.items() if k not in TOP_LEVEL and k not in dropped},
    }, ensure_ascii=False, default=str).encode("utf-8")


def translate(event, text):
    """The daemon's reply read as agent/shell_hooks.py `_parse_response` reads a hook's stdout (one JSON object only)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if event == "pre_tool_call":
        for key, first, second in (("action", "message", "reason"), ("decision", "reason", "message")):
            if data.get(key) == "block":
                raw = data.get(first) or data.get(second)
                return {"action": "block", "message": raw if isinstance(raw, str) and raw else "Blocked by shell hook."}
        return None
    context = data.get("context")
    return {"context": context} if isinstance(context, str) and context.strip() else None


def _env_number(name, default, ok):
    """A setting read as the shim reads it: a number (unset, empty or malformed: the default)."""
    try:
        n = float(os.environ.get(name, "").strip() or "nan")
    except ValueError:
        return default
    return n if math.isfinite(n) and ok(n) else default


def _timeout_s():
    return _env_number("AEP_SHIM_TIMEOUT_MS", 5000, lambda n: n > 0) / 1000


def parse_args(args):
    """hermes-aep.json's args as the shim reads its argv: (the value options in order as pairs, the flags given)."""
    pairs, flags, i = [], set(), 0
    while i < len(args):
        a = args[i]
        if a in ("--control", "--instruct", NO_MODEL_CALLS):
            flags.add(a)
        name, eq, value = a.partition("=")
        if name in VALUE_OPTIONS:
            if not eq:
                i += 1
                value = args[i] if i < len(args) else ""
            if value:
                pairs.append((name, value))
        i += 1
    return pairs, flags


def _truthy(v):
    return (v or "").lower() in ("1", "true", "yes", "on")


def gates(args, env):
    """(control, instruct, hold ms) as the shim's shimGates: the args first, then the environment; hold = window + 3 s."""
    pairs, flags = parse_args(args)
    raw = dict(pairs).get("--attention-timeout-ms", env.get("AEP_ATTENTION_TIMEOUT_MS", ""))
    try:
        n = float(raw.strip() or "nan")
    except ValueError:
        n = math.nan
    window = int(n) if math.isfinite(n) and n > 0 and n.is_integer() else DEFAULT_ATTENTION_MS
    control = "--control" in flags or _truthy(env.get("AEP_HERMES_CONTROL"))
    instruct = "--instruct" in flags or _truthy(env.get("AEP_INSTRUCT"))
    return control, instruct, window + HOLD_MARGIN_MS


HERMES_DEFAULT_BUDGET_S = 30.0  # plugins.hook_callback_timeout's default where Hermes bounds callbacks (hermes_cli/plugins.py, 0.21.3)


def hermes_callback_budget_ms():
    """How long this Hermes lets a plugin callback run before abandoning it, or None: 0.18.2 and 0.19.0 have no bound;
    later releases (hermes_cli/plugins_dispatch.py, `plugins.hook_callback_timeout`, default 30 s) abandon a callback
    past it and BLOCK the tool when it was a pre_tool_call, so a held call must end first. Read from the module that is
    calling us (never imported here). A Hermes that bounds callbacks (it has the resolver, or the dispatch module) but
    whose bound cannot be read is taken at the default 30 s, never as unbounded; 0 (Hermes's own "no bound") is None."""
    bounded = "hermes_cli.plugins_dispatch" in sys.modules
    for name in ("hermes_cli.plugins", "hermes_cli.plugins_dispatch"):
        fn = getattr(sys.modules.get(name), "_resolve_hook_callback_timeout", None)
        if callable(fn):
            try:
                secs = float(fn())
            except Exception:
                return HERMES_DEFAULT_BUDGET_S * 1000
            if secs == 0:
                return None
            return secs * 1000 if math.isfinite(secs) and secs > 0 else HERMES_DEFAULT_BUDGET_S * 1000
    return HERMES_DEFAULT_BUDGET_S * 1000 if bounded else None


def callback_wait_ms(event, args, env, budget_ms):
    """How long a callback of `event` may keep Hermes's thread (ms), or None when it never waits (an observation hook:
    it queues and returns). A held pre_tool_call (control) waits the hold window + 3 s, an instruct pre_llm_call
    AEP_SHIM_TIMEOUT_MS; under a Hermes that bounds callbacks either ends HERMES_MARGIN_MS before that bound. None too
    when too little is left to wait for (a pre_tool_call with no more than HOLD_FLOOR_MS)."""
    if event not in ("pre_tool_call", "pre_llm_call"):
        return None
    control, instruct, hold_ms = gates(args, env)
    if event == "pre_tool_call":
        if not control:
            return None
        wait, floor = hold_ms, HOLD_FLOOR_MS
    else:
        if not instruct:
            return None
        wait, floor = _env_number("AEP_SHIM_TIMEOUT_MS", 5000, lambda n: n > 0), 0
    if budget_ms is not None:
        wait = min(wait, budget_ms - HERMES_MARGIN_MS)
    return wait if wait > floor else None


def resolve(args, env):
    """(state dir, target) as the shim's resolveTarget: argv (from hermes-aep.json) first, then the environment."""
    pairs = parse_args(args)[0]
    opts = dict(pairs)
    state = opts.get("--state-dir") or env.get("AEP_STATE_DIR") or os.path.expanduser("~/.aep/state/hermes-aep")
    token_file = state + "/hook-token" if opts.get("--state-dir") else env.get("AEP_TOKEN_FILE") or state + "/hook-token"
    conn = [(k, v) for k, v in pairs if k in ("--url", "--socket")]
    url = None
    if conn:
        if conn[-1][0] == "--socket":
            return state, ("unix", conn[-1][1])
        url = conn[-1][1]
    elif opts.get("--state-dir"):
        return state, ("unix", state + "/hook.sock")
    elif env.get("AEP_SOCKET") not in (None, "", "off"):
        return state, ("unix", env["AEP_SOCKET"])
    elif env.get("AEP_HOOK_URL"):
        url = env["AEP_HOOK_URL"]
    elif env.get("AEP_PORT"):
        host = env.get("AEP_HOST") if env.get("AEP_HOST") not in (None, "", "0.0.0.0") else "127.0.0.1"
        url = "http://%s:%s/hook" % ("[%s]" % host if ":" in host else host, env["AEP_PORT"])
    elif env.get("AEP_SOCKET") != "off":
        return state, ("unix", state + "/hook.sock")
    return state, ("tcp", urlsplit(url), token_file) if url and url.startswith("http://") else None


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)  # Host: localhost, as the shim sends
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(self.timeout)
            s.connect(self.unix_path)
        except BaseException:
            s.close()
            raise
        self.sock = s


def _append(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def spool_key(arrival_ms, arrival_ns):
    """The shim's spoolKey: the hook's spool file name stem, chosen before sending (sent as x-hermes-aep-spool-key)."""
    return "%015d-%020d-%d-%s" % (arrival_ms, arrival_ns, os.getpid(), "".join(random.choices(string.ascii_lowercase + string.digits, k=8)))


def _count_drop(d, key):
    """A lost hook, counted as the shim counts it: a byte on `dropped`, else (a full disk) an empty `dropped.<key>`."""
    try:
        os.makedirs(d, 0o700, exist_ok=True)
        _append(d + "/dropped", b".")
    except OSError:
        try:
            os.close(os.open("%s/dropped.%s" % (d, key), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError:
            pass


def spool(state_dir, body, arrival_ms, arrival_ns, key=None):
    """The shim's spoolEnvelope: `{state}/spool/<key>.hook` (header line + envelope), tmp + rename, capped by the ledgers."""
    d, tmp = state_dir + "/spool", None
    key = key or spool_key(arrival_ms, arrival_ns)
    size = lambda name: os.path.getsize(d + "/" + name) if os.path.exists(d + "/" + name) else 0  # noqa: E731
    try:
        iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(arrival_ms // 1000)) + ".%03dZ" % (arrival_ms % 1000)
        head = json.dumps({"spool": 1, "arrival": iso, "arrival_ms": arrival_ms, "bytes": len(body)}, separators=(",", ":"))
        data = memoryview(head.encode() + b"\n" + body)
        kib = math.ceil(len(data) / 1024)
        full = max(0, size("in.files") - size("out.files")) + 1 > _env_number("AEP_SPOOL_MAX_FILES", 100000, lambda n: n >= 0 and n.is_integer())
        if full or (max(0, size("in.kib") - size("out.kib")) + kib) * 1024 > _env_number("AEP_SPOOL_MAX_BYTES", 268435456, lambda n: n >= 0 and n.is_integer()):
            raise OSError("spool full")
        os.makedirs(d, 0o700, exist_ok=True)
        tmp = "%s/.%s.tmp" % (d, key)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
        os.rename(tmp, "%s/%s.hook" % (d, key))
    except Exception:
        try:
            if tmp:
                os.unlink(tmp)
        except OSError:
            pass
        _count_drop(d, key)
        return
    try:  # after the rename: a crash before these lines only makes the cap a little lenient
        _append(d + "/in.files", b".")
        _append(d + "/in.kib", b"." * kib)
    except OSError:
        pass


class _ExitFlush(logging.Handler):
    """Handles no records. Hermes 0.19.0's `hermes -z` leaves by logging.shutdown() then os._exit(), skipping atexit;
    logging.shutdown() closes every live handler, so closing this one delivers (or spools) what is still queued."""

    def __init__(self, fwd):
        super().__init__()
        self.fwd = fwd

    def emit(self, record):
        pass

    def close(self):
        try:
            self.fwd.drain()
        except Exception:
            pass
        super().close()


class Slot:
    """A gated call's wait, shared by the agent's thread (which waits) and the worker (which sends).

    `deadline`: when the agent's thread gives up (monotonic). `hold`: a pre_tool_call under the control gate; the worker
    then sends it on a connection of its own, with the hold header, and leaves the answer to the waiting thread (`conn`),
    so a hold never stalls the worker. Otherwise the worker delivers it as any hook and leaves the reply in `reply`."""

    def __init__(self, wait_ms, hold):
        self.deadline = time.monotonic() + wait_ms / 1000
        self.hold = hold
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.reply, self.conn, self.abandoned = None, None, False
        self.arrival = (0, 0)  # the hook's arrival (wall ms, monotonic ns), set when it is queued
        self.key = None  # its spool key, chosen when it is queued

    def remaining_s(self):
        return self.deadline - time.monotonic()

    def abandon(self):
        """The waiting thread gives up: a request already sent is hung up on (the daemon sees the hold dismissed); one
        not yet sent goes as an ordinary hook, never held."""
        with self.lock:
            self.abandoned, conn, self.conn = True, self.conn, None
        if conn is not None:
            conn.close()

    def take(self):
        with self.lock:
            conn, self.conn = self.conn, None
        return conn


class Forwarder:
    """One worker thread sends the queue in order. What a held pre_tool_call does to it: nothing lasting. The worker
    only SENDS a held request (on its own connection, header and body) and goes on with the queue; the agent's thread,
    blocked in Hermes's pre_tool_call anyway, reads the daemon's answer. So while one call is held, the hooks of other
    sessions, subagents and parallel tool calls keep flowing (each parallel pre_tool_call gets its own hold), and the
    queue stays bounded at QUEUE_MAX: past it a hook is dropped and counted, a gated one failing open. A gated call
    that waited in the queue past its deadline is abandoned by its thread and then sent as an ordinary hook, unheld;
    one with no more than HOLD_FLOOR_MS left is not held either."""

    def __init__(self, state_dir, target, args=()):
        self.state_dir, self.target, self.args = state_dir, target, list(args)
        self.queue = queue.Queue(QUEUE_MAX)
        self.lock = threading.Lock()  # one delivery at a time: the worker's, or a caller's once closing
        self.counted = threading.Lock()
        self.dropped = 0  # only grows; the worker reports the difference to `reported` with its next delivery
        self.reported = 0
        self.conn, self.used_at, self.worker, self.closing = None, 0.0, None, False
        self.exit_hook = _ExitFlush(self)  # logging keeps only a weak reference
        self.budget_ms = None  # Hermes's bound on a plugin callback, if this Hermes has one (register() reads it)

    def drop(self):
        with self.counted:
            self.dropped += 1

    def put(self, body, slot):
        """Queue one envelope, never blocking (the agent's thread). False: dropped, counted."""
        ms, ns = time.time_ns() // 1000000, time.monotonic_ns()
        item = (body, ms, ns, slot, spool_key(ms, ns))
        if slot is not None:
            slot.arrival = item[1:3]
            slot.key = item[4]
        if self.closing:
            self.deliver(item)  # after the exit flush (Hermes's own exit handlers fire hooks): inline
            return True
        if self.worker is None or not self.worker.is_alive() or self.exit_hook is None:
            with self.counted:
                if self.exit_hook is None:
                    self.exit_hook = _ExitFlush(self)
                if self.worker is None or not self.worker.is_alive():
                    self.worker = threading.Thread(target=self.run, name="hermes-aep-forwarder", daemon=True)
                    self.worker.start()
        try:
            self.queue.put_nowait(item)
            return True
        except queue.Full:
            self.drop()
            return False

    def run(self):
        while True:
            item = self.queue.get()
            try:
                self.deliver(item)
            except Exception:
                log.debug("hermes-aep: a delivery failed unexpectedly")
            finally:
                self.queue.task_done()

    def deliver(self, item):
        body, arrival_ms, arrival_ns, slot, key = item
        try:
            if slot is not None and slot.hold and self.send_held(item):
                return
            with self.lock:
                outcome, reply = self.post(body, steer=slot is not None and not slot.hold, key=key)
            if outcome == "spool":
                spool(self.state_dir, body, arrival_ms, arrival_ns, key)
            if slot is not None:
                slot.reply = reply
        finally:
            if slot is not None:
                slot.done.set()

    def send_held(self, item):
        """Send a held pre_tool_call on a connection of its own, announcing how long its thread still waits, and hand
        that connection to the thread. False: its thread has given up, or too little time is left to hold (then it is
        delivered as any hook)."""
        body, arrival_ms, arrival_ns, slot, key = item
        ms = int(slot.remaining_s() * 1000)
        if self.target is None or slot.abandoned or ms <= HOLD_FLOOR_MS:
            return False
        conn, sent = None, False
        try:
            conn = self.connect(slot.remaining_s())
            path, headers = self.request_parts()
            headers[HOLD_HEADER] = str(ms)
            headers[SPOOL_KEY_HEADER] = key
            conn.request("POST", path, body, headers)
            sent = True
        except Exception as exc:
            if conn is not None:
                conn.close()
            conn = None
            log.debug("hermes-aep: a held hook was not sent (%s)", type(exc).__name__)
            if not sent:
                spool(self.state_dir, body, arrival_ms, arrival_ns, key)  # the daemon never had it
        with slot.lock:
            if slot.abandoned:
                late, conn = conn, None
            else:
                late, slot.conn = None, conn
        if late is not None:
            late.close()
        return True

    def connect(self, timeout):
        t = self.target
        return _UnixConnection(t[1], timeout) if t[0] == "unix" else http.client.HTTPConnection(t[1].hostname, t[1].port or 80, timeout=timeout)

    def request_parts(self):
        """The path and the headers every request carries (over TCP the URL's path and the token)."""
        headers = {"Content-Type": "application/json"}
        path = "/hook"
        if self.target[0] == "tcp":
            path = self.target[1].path or "/"
            token = self.token()
            if token:
                headers["Authorization"] = "Bearer " + token  # over TCP only, to the URL it was installed for
        return path, headers

    def post(self, body, steer=False, key=None):
        """POST once: ("delivered", reply) | ("spool", None) | ("lost", None). Spool only what the daemon provably did not take.
        steer: the waiting pre_llm_call of an instruct-gated forwarder, announced so the daemon may put steering in the reply."""
        if self.target is None:
            return "lost", None
        sent = False
        try:
            path, headers = self.request_parts()
            pending = self.dropped - self.reported
            if steer:
                headers[STEER_HEADER] = "1"
            if key:
                headers[SPOOL_KEY_HEADER] = key
            if pending > 0:
                headers["X-Hermes-Aep-Dropped"] = str(pending)
            if self.conn is not None and time.monotonic() - self.used_at > IDLE_RECONNECT_S:
                self.close()
            timeout = _timeout_s()
            if self.conn is None:
                self.conn = self.connect(timeout)
            self.conn.timeout = timeout
            if self.conn.sock is not None:
                self.conn.sock.settimeout(timeout)
            self.conn.request("POST", path, body, headers)
            sent = True
            resp = self.conn.getresponse()
            text = resp.read(MAX_REPLY + 1)
            self.used_at = time.monotonic()
            if resp.status >= 500:  # not processed (starting, draining its spool, closing, its log failing)
                self.close()
                return "spool", None
            if resp.status != 200:  # it will never take this body: neither spooled nor retried
                return "lost", None
            self.reported += pending
            if len(text) > MAX_REPLY:
                self.close()  # the rest of an oversized reply is left unread
                return "delivered", None
            return "delivered", text.decode("utf-8", "replace")
        except Exception as exc:
            self.close()
            log.debug("hermes-aep: the daemon was not reached (%s)", type(exc).__name__)
            return ("lost" if sent else "spool"), None  # after the whole request was sent it may have been taken

    def token(self):
        try:
            t = Path(self.target[2]).read_text(encoding="utf-8").strip()
            return t if re.fullmatch("[0-9a-f]{64}", t) else None
        except OSError:
            return None

    def close(self):
        if self.conn is not None:
            self.conn.close()
        self.conn = None

    def drain(self):
        """logging.shutdown(): the exit of `hermes -z` (0.19.0), or a logging.config.dictConfig() in a running process
        (uvicorn's, in the gateway), which closes every handler too: flush, then go on queueing with a new handler."""
        closing = self.closing
        self.flush()
        self.closing, self.exit_hook = closing, None

    def flush(self, bound_s=EXIT_FLUSH_S):
        """At exit (idempotent): deliver what is queued within the bound, spool the rest; later hooks are delivered inline."""
        self.closing = True
        deadline = time.monotonic() + bound_s
        with self.queue.all_tasks_done:
            while self.queue.unfinished_tasks and self.worker is not None and self.worker.is_alive() and time.monotonic() < deadline:
                self.queue.all_tasks_done.wait(deadline - time.monotonic())
        while True:
            try:
                body, arrival_ms, arrival_ns, slot, key = self.queue.get_nowait()
            except queue.Empty:
                return
            spool(self.state_dir, body, arrival_ms, arrival_ns, key)
            if slot is not None:
                slot.done.set()  # a thread still waiting fails open


def await_held(fwd, body, slot, event):
    """The waiting thread's half of a held pre_tool_call: read the daemon's answer on the connection the worker sent it
    on, within what is left of the wait. A 5xx means the daemon did not process it: spooled, as the worker would."""
    conn = slot.take()
    if conn is None:
        return translate(event, slot.reply) if slot.reply is not None else None  # delivered unheld, or not at all
    try:
        left = slot.remaining_s()
        if left <= 0:
            return None
        if conn.sock is not None:
            conn.sock.settimeout(left)
        resp = conn.getresponse()
        text = resp.read(MAX_REPLY + 1)
        if resp.status >= 500:
            spool(fwd.state_dir, body, *slot.arrival, key=slot.key)
            return None
        if resp.status != 200 or len(text) > MAX_REPLY:
            return None
        return translate(event, text.decode("utf-8", "replace"))
    except Exception as exc:  # the deadline passed, or the daemon went away: fail open (sent whole, so never spooled)
        log.debug("hermes-aep: a held hook got no answer (%s)", type(exc).__name__)
        return None
    finally:
        conn.close()


class FirstText:
    """Which streamed model calls (turn_id, iteration) already sent their first text chunk: bounded, oldest forgotten."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seen = {}

    def first(self, kwargs):
        if kwargs.get("kind") != "text":
            return False
        key = (str(kwargs.get("turn_id")), str(kwargs.get("iteration")))
        with self.lock:
            if key in self.seen:
                return False
            self.seen[key] = True
            if len(self.seen) > FIRST_TEXT_KEYS_MAX:
                del self.seen[next(iter(self.seen))]
            return True


def make_callback(fwd, event):
    first_text = FirstText() if event == "on_stream_delta" else None

    def callback(**kwargs):
        try:
            if first_text is not None and not first_text.first(kwargs):
                return None  # a reasoning chunk, or a later one: only the first text chunk times the call
        except Exception:
            return None
        try:
            body = envelope(event, kwargs)
        except Exception as exc:  # a value even str() cannot render: the hook cannot be forwarded
            fwd.drop()
            log.debug("hermes-aep: a %s hook could not be serialised (%s)", event, type(exc).__name__)
            return None
        try:
            wait_ms = callback_wait_ms(event, fwd.args, os.environ, fwd.budget_ms)
            slot = None if wait_ms is None else Slot(wait_ms, event == "pre_tool_call")
            if not fwd.put(body, slot) or slot is None:
                return None  # not gated (never waits), or dropped (fails open)
            if not slot.done.wait(max(0.0, slot.remaining_s())):
                slot.abandon()
                return None  # timed out: fail open
            if slot.hold:
                return await_held(fwd, body, slot, event)
            return translate(event, slot.reply) if slot.reply is not None else None
        except Exception as exc:
            log.debug("hermes-aep: a %s hook was not forwarded (%s)", event, type(exc).__name__)
            return None
    callback.__name__ = "hermes_aep[%s]" % event
    return callback


def newer_hooks():
    """The later hooks the running Hermes fires (read, never imported: its modules are loaded by the time it loads us)."""
    out = []
    try:
        valid = getattr(sys.modules.get("hermes_cli.plugins"), "VALID_HOOKS", None) or ()
        out.extend(h for h in STREAM_HOOKS if h in valid)
    except Exception:
        pass
    try:
        if "agent" in sys.modules and importlib.util.find_spec("agent.auxiliary_hooks") is not None:
            out.append(AUX_CALL_HOOK)
    except (ImportError, ValueError, AttributeError):
        pass
    return tuple(out)


def hooks_for(args):
    """The hooks to subscribe to: HOOKS and the later ones this Hermes fires; --no-model-calls (install's opt-out) leaves
    out every model-call hook: post_api_request, the auxiliary call, and the stream hooks that time them."""
    model_calls = (MODEL_CALL_HOOK, AUX_CALL_HOOK) + STREAM_HOOKS
    hooks = HOOKS + newer_hooks()
    return tuple(h for h in hooks if not (h in model_calls and NO_MODEL_CALLS in parse_args(args)[1]))


def register(ctx):
    try:
        args = [str(a) for a in json.loads((Path(__file__).parent / "hermes-aep.json").read_text(encoding="utf-8")).get("args", [])]
    except (OSError, ValueError, AttributeError, TypeError):
        args = []
    fwd = Forwarder(*resolve(args, os.environ), args=args)
    fwd.budget_ms = hermes_callback_budget_ms()
    for event in hooks_for(args):
        ctx.register_hook(event, make_callback(fwd, event))
    atexit.register(fwd.flush)
    return fwd
