"""hermes-aep's zero-spawn transport: a forwarder, not an observer.

Each of the twelve hooks becomes the very envelope Hermes's shell-hook path writes to a hook's stdin (same
bytes), queued for one background thread that POSTs it to the hermes-aep daemon over a kept-alive connection,
as the shim (src/shim/hook.cts) would. Observation hooks never wait. pre_tool_call and pre_llm_call wait for the
daemon's reply only while AEP_HERMES_CONTROL is on (read per call), within AEP_SHIM_TIMEOUT_MS, and fail open.
What the daemon provably did not take goes to the shim's spool, in the shim's format. All logic stays in the
daemon. Standard library only; nothing is printed, and no log message carries content.
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
DROPPED_HEADER = "X-Hermes-Aep-Dropped"
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
    """The daemon's reply as agent/shell_hooks.py `_parse_response` reads a hook's stdout (one JSON object only)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None

    def message(a, b):
        raw = a or b
        return raw if isinstance(raw, str) and raw else "Blocked by shell hook."
    if event == "pre_tool_call":
        if data.get("action") == "block":
            return {"action": "block", "message": message(data.get("message"), data.get("reason"))}
        if data.get("decision") == "block":
            return {"action": "block", "message": message(data.get("reason"), data.get("message"))}
        return None
    context = data.get("context")
    return {"context": context} if isinstance(context, str) and context.strip() else None


def _env_int(name, default):
    """The shim's reading of a non-negative integer setting (unset, empty or malformed: the default)."""
    try:
        n = float(os.environ.get(name, "").strip() or "nan")
        return int(n) if n.is_integer() and n >= 0 else default
    except ValueError:
        return default


def _timeout_s():
    n = _env_int("AEP_SHIM_TIMEOUT_MS", 0)
    return n / 1000 if n > 0 else 5.0


def _gate_on():
    return os.environ.get("AEP_HERMES_CONTROL", "").lower() in ("1", "true", "yes", "on")


def resolve(args, env):
    """(state dir, target) as the shim's resolveTarget: argv (from hermes-aep.json), then the environment."""
    opts = dict(zip(args[::2], args[1::2]))
    state = opts.get("--state-dir") or env.get("AEP_STATE_DIR") or os.path.expanduser("~/.aep/state/hermes-aep")
    token_file = state + "/hook-token" if opts.get("--state-dir") else env.get("AEP_TOKEN_FILE") or state + "/hook-token"
    url = None
    if "--url" in opts or "--socket" in opts:
        conn = [(k, v) for k, v in zip(args[::2], args[1::2]) if k in ("--url", "--socket")][-1]
        if conn[0] == "--socket":
            return state, ("unix", conn[1])
        url = conn[1]
    elif opts.get("--state-dir"):
        return state, ("unix", state + "/hook.sock")
    elif env.get("AEP_SOCKET") and env.get("AEP_SOCKET") != "off":
        return state, ("unix", env["AEP_SOCKET"])
    elif env.get("AEP_HOOK_URL"):
        url = env["AEP_HOOK_URL"]
    elif env.get("AEP_PORT"):
        host = env.get("AEP_HOST") if env.get("AEP_HOST") not in (None, "", "0.0.0.0") else "127.0.0.1"
        url = "http://%s:%s/hook" % ("[%s]" % host if ":" in host else host, env["AEP_PORT"])
    elif env.get("AEP_SOCKET") == "off":
        return state, None
    else:
        return state, ("unix", state + "/hook.sock")
    return state, ("tcp", url, token_file)


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
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


class Forwarder:
    def __init__(self, state_dir, target):
        self.state_dir, self.target = state_dir, target
        self.queue = queue.Queue(QUEUE_MAX)
        self.lock = threading.Lock()  # one delivery at a time: the worker's, or a caller's once closing
        self.dropped = 0  # only grows (agent threads, under `counted`); reported is the worker's share
        self.reported = 0
        self.counted = threading.Lock()
        self.conn, self.used_at, self.worker, self.closing = None, 0.0, None, False

    def put(self, body, slot):
        """Queue one envelope (never blocks). False: dropped, counted."""
        item = (body, time.time_ns() // 1000000, time.monotonic_ns(), slot)
        if self.closing:
            self.deliver(item)
            return True
        if self.worker is None or not self.worker.is_alive():
            with self.counted:
                if self.worker is None or not self.worker.is_alive():
                    self.worker = threading.Thread(target=self.run, name="hermes-aep-forwarder", daemon=True)
                    self.worker.start()
        try:
            self.queue.put_nowait(item)
            return True
        except queue.Full:
            with self.counted:
                self.dropped += 1
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
            outcome, status, reply = self.post(body, bool(slot))
        if outcome == "spool":
            self.spool(body, arrival_ms, arrival_ns)
        if slot is not None:
            slot["reply"] = reply if outcome == "delivered" else None
            slot["done"].set()

    def connection(self, timeout):
        if self.conn is not None and time.monotonic() - self.used_at > IDLE_RECONNECT_S:
            self.close()
        if self.conn is None:
            if self.target[0] == "unix":
                self.conn = _UnixConnection(self.target[1], timeout)
            else:
                u = urlsplit(self.target[1])
                self.conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)
        self.conn.timeout = timeout
        if self.conn.sock is not None:
            self.conn.sock.settimeout(timeout)
        return self.conn

    def close(self):
        if self.conn is not None:
            self.conn.close()
        self.conn = None

    def post(self, body, want_reply):
        """POST once. ("delivered"|"spool"|"lost", status, reply text): spool only what the daemon provably did not take."""
        if self.target is None:
            return "lost", 0, None
        headers = {"Content-Type": "application/json"}
        pending = self.dropped - self.reported
        if pending > 0:
            headers[DROPPED_HEADER] = str(pending)
        sent = False
        try:
            conn = self.connection(_timeout_s())
            path = "/hook"
            if self.target[0] == "tcp":
                u = urlsplit(self.target[1])
                path = u.path or "/"
                token = self.token()
                if token:
                    headers["Authorization"] = "Bearer " + token
            conn.request("POST", path, body, headers)
            sent = True
            resp = conn.getresponse()
            text = resp.read(MAX_REPLY + 1)
            self.used_at = time.monotonic()
            if resp.status >= 500:
                self.close()
                return "spool", resp.status, None
            if resp.status != 200:
                return "lost", resp.status, None
            self.reported += pending
            if len(text) > MAX_REPLY:
                self.close()  # the rest of the reply is left unread
            return "delivered", 200, text.decode("utf-8", "replace") if want_reply and len(text) <= MAX_REPLY else "{}"
        except Exception as exc:
            self.close()
            log.debug("hermes-aep: the daemon was not reached (%s)", type(exc).__name__)
            return ("lost" if sent else "spool"), 0, None

    def token(self):
        try:
            t = Path(self.target[2]).read_text(encoding="utf-8").strip()
            return t if re.fullmatch("[0-9a-f]{64}", t) else None
        except OSError:
            return None

    def spool(self, body, arrival_ms, arrival_ns):
        """The shim's spoolEnvelope: `{state}/spool/<key>.hook` (header line + envelope), tmp + rename, capped by the ledgers."""
        d = self.state_dir + "/spool"
        tmp = None
        try:
            iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(arrival_ms // 1000)) + ".%03dZ" % (arrival_ms % 1000)
            header = (json.dumps({"spool": 1, "arrival": iso, "arrival_ms": arrival_ms, "bytes": len(body)}, separators=(",", ":")) + "\n").encode()
            kib = math.ceil((len(header) + len(body)) / 1024)
            size = lambda name: os.path.getsize(d + "/" + name) if os.path.exists(d + "/" + name) else 0  # noqa: E731
            files = max(0, size("in.files") - size("out.files"))
            used = max(0, size("in.kib") - size("out.kib"))
            if files + 1 > _env_int("AEP_SPOOL_MAX_FILES", 100000) or (used + kib) * 1024 > _env_int("AEP_SPOOL_MAX_BYTES", 268435456):
                return self.count_drop(d)
            key = "%015d-%020d-%d-%s" % (arrival_ms, arrival_ns, os.getpid(), "".join(random.choices(string.ascii_lowercase + string.digits, k=8)))
            os.makedirs(d, 0o700, exist_ok=True)
            tmp = "%s/.%s.tmp" % (d, key)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                data = memoryview(header + body)
                while data:
                    data = data[os.write(fd, data):]
            finally:
                os.close(fd)
            os.rename(tmp, "%s/%s.hook" % (d, key))
        except Exception:
            if tmp:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            return self.count_drop(d)
        try:
            self.append(d + "/in.files", b".")
            self.append(d + "/in.kib", b"." * kib)
        except OSError:
            pass

    @staticmethod
    def append(path, data):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def count_drop(self, d):
        try:
            os.makedirs(d, 0o700, exist_ok=True)
            self.append(d + "/dropped", b".")
        except OSError:
            pass

    def flush(self, bound_s=EXIT_FLUSH_S):
        """At exit: deliver what is queued within the bound, spool the rest; later hooks are delivered inline."""
        self.closing = True
        deadline = time.monotonic() + bound_s
        with self.queue.all_tasks_done:
            while self.queue.unfinished_tasks and self.worker is not None and self.worker.is_alive():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.queue.all_tasks_done.wait(left)
        while True:
            try:
                body, arrival_ms, arrival_ns, slot = self.queue.get_nowait()
            except queue.Empty:
                return
            self.spool(body, arrival_ms, arrival_ns)


def make_callback(fwd, event):
    def callback(**kwargs):
        try:
            slot = {"done": threading.Event()} if event in GATED and _gate_on() else None
            if not fwd.put(envelope(event, kwargs), slot) or slot is None:
                return None
            if not slot["done"].wait(_timeout_s()) or slot.get("reply") is None:
                return None
            return translate(event, slot["reply"])
        except Exception as exc:
            log.debug("hermes-aep: a %s hook was not forwarded (%s)", event, type(exc).__name__)
            return None
    callback.__name__ = "hermes_aep[%s]" % event
    return callback


def register(ctx):
    try:
        conf = json.loads((Path(__file__).parent / "hermes-aep.json").read_text(encoding="utf-8"))
        args = [str(a) for a in conf.get("args", [])]
    except (OSError, ValueError, AttributeError):
        args = []
    fwd = Forwarder(*resolve(args, os.environ))
    for event in HOOKS:
        ctx.register_hook(event, make_callback(fwd, event))
    atexit.register(fwd.flush)
    return fwd
