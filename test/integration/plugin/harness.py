"""Drives plugin/hermes-aep as Hermes's plugin manager would (a fake ctx), for test/integration/plugin/*.test.ts.

stdin: one JSON spec {plugin_dir, cwd?, env?, queue_max?, hold_lock?, hard_exit?, before?, calls: [{exec?, hook, kwargs, drain?,
background?}], out}.
before: a Python statement run before register() (e.g. a stand-in for a Hermes module the plugin looks at).
exec: a Python statement run just before that call (e.g. a logging.config.dictConfig() in mid-run).
background: the call runs on a thread of its own (as a parallel tool call or another session would) and the next call
starts once it has queued its hook; every background call is joined before the results are written.
hard_exit: leave as Hermes 0.19.0's `hermes -z` does (`_exit_after_oneshot`): logging.shutdown(), then os._exit(0), no atexit.
A kwarg value {"$py": "<expr>"} is evaluated (non-JSON values: Decimal, Path, an object whose str() raises).
Results go to the `out` file, never stdout: the test checks the plugin itself prints nothing.
"""
import decimal
import importlib.util
import json
import logging
import logging.config
import os
import pathlib
import sys
import threading
import time
import types

spec = json.load(sys.stdin)
os.environ.update(spec.get("env", {}))
if spec.get("cwd"):
    os.chdir(spec["cwd"])


class Boom:
    def __str__(self):
        raise RuntimeError("no str for you")


def value(v):
    if isinstance(v, dict) and set(v) == {"$py"}:
        return eval(v["$py"], {"decimal": decimal, "pathlib": pathlib, "Boom": Boom})
    return v


if spec.get("before"):
    exec(spec["before"], {"sys": sys, "types": types})
mod_spec = importlib.util.spec_from_file_location("hermes_plugins.hermes_aep", os.path.join(spec["plugin_dir"], "__init__.py"))
mod = importlib.util.module_from_spec(mod_spec)
mod_spec.loader.exec_module(mod)
if spec.get("queue_max"):
    mod.QUEUE_MAX = spec["queue_max"]


class Ctx:
    def __init__(self):
        self.hooks = {}

    def register_hook(self, name, cb):
        self.hooks[name] = cb


ctx = Ctx()
fwd = mod.register(ctx)
results = [None] * len(spec["calls"])
threads = []
queued = threading.Condition()
puts = [0]
real_put = fwd.put


def counting_put(body, slot):
    try:
        return real_put(body, slot)
    finally:
        with queued:
            puts[0] += 1
            queued.notify_all()


fwd.put = counting_put
if spec.get("hold_lock"):
    fwd.lock.acquire()  # the worker stalls on its first delivery: the queue fills


def fire(i, call, kwargs):
    t0 = time.perf_counter()
    try:
        ret, raised = ctx.hooks[call["hook"]](**kwargs), None
    except BaseException as exc:  # the plugin must never let one through
        ret, raised = None, type(exc).__name__
    results[i] = {"ret": ret, "ms": (time.perf_counter() - t0) * 1000, "raised": raised}


for i, call in enumerate(spec["calls"]):
    if call.get("exec"):
        exec(call["exec"], {"logging": logging, "mod": mod, "fwd": fwd})
    kwargs = {k: value(v) for k, v in call["kwargs"].items()}
    if call.get("background"):
        with queued:
            before = puts[0]
            t = threading.Thread(target=fire, args=(i, call, kwargs))
            t.start()
            threads.append(t)
            queued.wait_for(lambda: puts[0] > before, timeout=10)  # until its hook is queued
    else:
        fire(i, call, kwargs)
    if call.get("drain"):
        fwd.queue.join()
for t in threads:
    t.join()
if spec.get("hold_lock"):
    fwd.lock.release()
    fwd.queue.join()
with open(spec["out"], "w") as f:
    json.dump({"results": results, "hooks": sorted(ctx.hooks), "dropped": fwd.dropped, "worker_alive": fwd.worker is not None and fwd.worker.is_alive()}, f)
if spec.get("hard_exit"):
    logging.shutdown()
    os._exit(0)
