"""hermes-aep's zero-spawn transport: a forwarder, not an observer (installed by `hermes-aep install --transport plugin`).

Each of the twelve hooks becomes the very envelope Hermes's shell-hook path writes to a hook's stdin (same bytes),
queued for one background thread that POSTs it to the hermes-aep daemon over a kept-alive connection, as the shim
(src/shim/hook.cts) would. Observation hooks never wait. pre_tool_call and pre_llm_call wait for the daemon's reply
only while AEP_HERMES_CONTROL is on (read at each call), within AEP_SHIM_TIMEOUT_MS, and fail open. What the daemon
provably did not take goes to the shim's spool, in the shim's format. All logic stays in the daemon. Standard library
only; nothing is printed, and no log message carries content.
"""

import atexit
import http.client
import json
import logging
import math
import os
import queue
import random
import re
import socket
import string
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

HOOKS = ("pre_tool_call", "post_tool_call", "pre_llm_call", "on_session_start", "on_session_end", "on_session_finalize",
         "on_session_reset", "subagent_start", "subagent_stop", "pre_approval_request", "post_approval_response",
         "api_request_error")
GATED = ("pre_tool_call", "pre_llm_call")
TOP_LEVEL = ("tool_name", "args", "session_id", "parent_session_id")
QUEUE_MAX = 10000
IDLE_RECONNECT_S = 2.0  # under the daemon's 5 s keep-alive: never reuse a connection it may be closing
EXIT_FLUSH_S = 2.0
MAX_REPLY = 1048576
log = logging.getLogger(__name__)


def envelope(event, kwargs):
    """agent/shell_hooks.py `_serialize_payload`, byte for byte, as UTF-8."""
    try:
        cwd = str(Path.cwd())
    except OSError:
        cwd = ""
    args = kwargs.get("args")
    return json.dumps({
        "hook_event_name": event,
        "tool_name": kwargs.get("tool_name"),
        "tool_input": args if isinstance(args, dict) else None,
        "session_id": kwargs.get("session_id") or kwargs.get("parent_session_id") or "",
        "cwd": cwd,
        "extra": {k: v for k, v in kwargs.items() if k not in TOP_LEVEL},
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


def resolve(args, env):
    """(state dir, target) as the shim's resolveTarget: argv (from hermes-aep.json) first, then the environment."""
    pairs = list(zip(args[::2], args[1::2]))
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


def spool(state_dir, body, arrival_ms, arrival_ns):
    """The shim's spoolEnvelope: `{state}/spool/<key>.hook` (header line + envelope), tmp + rename, capped by the ledgers."""
    d, tmp = state_dir + "/spool", None
    size = lambda name: os.path.getsize(d + "/" + name) if os.path.exists(d + "/" + name) else 0  # noqa: E731
    try:
        iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(arrival_ms // 1000)) + ".%03dZ" % (arrival_ms % 1000)
        head = json.dumps({"spool": 1, "arrival": iso, "arrival_ms": arrival_ms, "bytes": len(body)}, separators=(",", ":"))
        data = memoryview(head.encode() + b"\n" + body)
        kib = math.ceil(len(data) / 1024)
        full = max(0, size("in.files") - size("out.files")) + 1 > _env_number("AEP_SPOOL_MAX_FILES", 100000, lambda n: n >= 0 and n.is_integer())
        if full or (max(0, size("in.kib") - size("out.kib")) + kib) * 1024 > _env_number("AEP_SPOOL_MAX_BYTES", 268435456, lambda n: n >= 0 and n.is_integer()):
            raise OSError("spool full")
        key = "%015d-%020d-%d-%s" % (arrival_ms, arrival_ns, os.getpid(), "".join(random.choices(string.ascii_lowercase + string.digits, k=8)))
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
            os.makedirs(d, 0o700, exist_ok=True)
            _append(d + "/dropped", b".")  # lost: counted, as the shim counts it
        except OSError:
            pass
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


class Forwarder:
    def __init__(self, state_dir, target):
        self.state_dir, self.target = state_dir, target
        self.queue = queue.Queue(QUEUE_MAX)
        self.lock = threading.Lock()  # one delivery at a time: the worker's, or a caller's once closing
        self.counted = threading.Lock()
        self.dropped = 0  # only grows; the worker reports the difference to `reported` with its next delivery
        self.reported = 0
        self.conn, self.used_at, self.worker, self.closing = None, 0.0, None, False
        self.exit_hook = _ExitFlush(self)  # logging keeps only a weak reference

    def drop(self):
        with self.counted:
            self.dropped += 1

    def put(self, body, slot):
        """Queue one envelope, never blocking (the agent's thread). False: dropped, counted."""
        item = (body, time.time_ns() // 1000000, time.monotonic_ns(), slot)
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
        body, arrival_ms, arrival_ns, slot = item
        with self.lock:
            outcome, reply = self.post(body)
        if outcome == "spool":
            spool(self.state_dir, body, arrival_ms, arrival_ns)
        if slot is not None:
            slot["reply"] = reply
            slot["done"].set()

    def post(self, body):
        """POST once: ("delivered", reply) | ("spool", None) | ("lost", None). Spool only what the daemon provably did not take."""
        if self.target is None:
            return "lost", None
        headers = {"Content-Type": "application/json"}
        pending = self.dropped - self.reported
        if pending > 0:
            headers["X-Hermes-Aep-Dropped"] = str(pending)
        sent = False
        try:
            if self.conn is not None and time.monotonic() - self.used_at > IDLE_RECONNECT_S:
                self.close()
            timeout = _timeout_s()
            if self.conn is None:
                t = self.target
                self.conn = _UnixConnection(t[1], timeout) if t[0] == "unix" else http.client.HTTPConnection(t[1].hostname, t[1].port or 80, timeout=timeout)
            self.conn.timeout = timeout
            if self.conn.sock is not None:
                self.conn.sock.settimeout(timeout)
            path = "/hook"
            if self.target[0] == "tcp":
                path = self.target[1].path or "/"
                token = self.token()
                if token:
                    headers["Authorization"] = "Bearer " + token  # over TCP only, to the URL it was installed for
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
                body, arrival_ms, arrival_ns, _slot = self.queue.get_nowait()
            except queue.Empty:
                return
            spool(self.state_dir, body, arrival_ms, arrival_ns)


def make_callback(fwd, event):
    def callback(**kwargs):
        try:
            body = envelope(event, kwargs)
        except Exception as exc:  # a value even str() cannot render: the hook cannot be forwarded
            fwd.drop()
            log.debug("hermes-aep: a %s hook could not be serialised (%s)", event, type(exc).__name__)
            return None
        try:
            gate = event in GATED and os.environ.get("AEP_HERMES_CONTROL", "").lower() in ("1", "true", "yes", "on")
            slot = {"done": threading.Event(), "reply": None} if gate else None
            if not fwd.put(body, slot) or slot is None or not slot["done"].wait(_timeout_s()) or slot["reply"] is None:
                return None  # gate off, dropped, timed out (fail open), or not delivered
            return translate(event, slot["reply"])
        except Exception as exc:
            log.debug("hermes-aep: a %s hook was not forwarded (%s)", event, type(exc).__name__)
            return None
    callback.__name__ = "hermes_aep[%s]" % event
    return callback


def register(ctx):
    try:
        args = [str(a) for a in json.loads((Path(__file__).parent / "hermes-aep.json").read_text(encoding="utf-8")).get("args", [])]
    except (OSError, ValueError, AttributeError, TypeError):
        args = []
    fwd = Forwarder(*resolve(args, os.environ))
    for event in HOOKS:
        ctx.register_hook(event, make_callback(fwd, event))
    atexit.register(fwd.flush)
    return fwd
