"""How a Training-lab job trains in a child process (see :mod:`server.jobs` for why): the child's entry point, the
fork server it is forked from, and the parent side that relays its steps and passes the stop event on.

Plain Python and multiprocessing; no Streamlit calls.
"""

from __future__ import annotations

import io
import multiprocessing
import multiprocessing.forkserver
import os
import queue
import sys
import threading
import types
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

import numpy as np
import torch

from engine import CausalLM, ModelConfig
from engine.train import StepInfo, TrainConfig, race_pre_post, train
from server.admission import torch_threads

POLL_S = 0.2  # how often the job's thread looks at its stop event while it waits for the child's next message
ENV_PROCESSES = "EXPLORER_JOB_PROCESSES"
ENV_NICE = "EXPLORER_JOB_NICE"


def in_processes() -> bool:
    """Jobs run in child processes (``EXPLORER_JOB_PROCESSES``, default 1; 0: in the server's threads)."""
    return os.environ.get(ENV_PROCESSES, "1").strip() != "0"


def job_nice() -> int:
    """How much lower a job process's CPU priority is than the server's (``EXPLORER_JOB_NICE``, default 10, 0-19)."""
    try:
        return min(19, max(0, int(os.environ.get(ENV_NICE, "10"))))
    except ValueError:
        return 10


class WorkerError(RuntimeError):
    """The child process raised (its message is the child's ``Type: message``) or ended without a result."""


def weights_bytes(model: CausalLM) -> bytes:
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.getvalue()


def end_with_server(poll_s: float = 1.0) -> threading.Thread:
    """In a job's child: end this process at once when the server that started it is gone (``kill -9`` included).

    The child is forked from the fork server, not from the server, and multiprocessing hands every child the
    write end of the fork server's "alive" pipe and the resource tracker's pipe: a child that outlived a killed
    server kept a core busy for the rest of its run, and kept the fork server and the resource tracker with it.
    So a daemon thread waits on multiprocessing's sentinel of the parent (the server's end of the pipe the child
    was started through: it reads as closed as soon as the server's process is gone) and, every ``poll_s``,
    also checks that the server's pid still exists; either ends the child with ``os._exit``. (``PR_SET_PDEATHSIG``
    would fire on the death of the fork server, which outlives the server while any child runs, so it is not
    used.) Returns the thread."""
    parent = multiprocessing.parent_process()
    server_pid = parent.pid if parent is not None else os.getppid()

    def gone() -> bool:
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # a process of another user has the pid now: ours is gone
            return True
        return parent is not None and not parent.is_alive()

    def watch() -> None:
        while True:
            if parent is not None:
                parent.join(poll_s)  # returns at once when the server's end of the pipe closed
            else:
                threading.Event().wait(poll_s)
            if gone():
                os._exit(EXIT_SERVER_GONE)

    thread = threading.Thread(target=watch, name="explorer-end-with-server", daemon=True)
    thread.start()
    return thread


EXIT_SERVER_GONE = 75  # the child's exit code when it ended because its server had gone


def _worker(kind: str, config: ModelConfig, weights: Optional[bytes], token_ids: np.ndarray, cfg: TrainConfig,
            threads: int, nice: int, out, stop, after: Optional[Callable[[CausalLM, CausalLM], Any]] = None) -> None:
    """The child process: rebuild the model, run the engine, send ``("step", placement, StepInfo)`` per update,
    ``("phase", name, None)`` when a phase after the steps begins (:data:`PHASES`), and ``("done", (result,
    after's result), weights)`` or ``("error", message, None)`` at the end. Plain data only crosses the pipe."""
    end_with_server()
    try:
        if nice:
            os.nice(nice)
        torch.set_num_threads(threads)
        ids = torch.from_numpy(token_ids)
        stop_now = _stop_signal(stop.is_set, lambda phase: out.put(("phase", phase, None)))
        if kind == "train":
            model = CausalLM(config)
            model.load_state_dict(torch.load(io.BytesIO(weights), weights_only=True))
            result = train(model, ids, cfg, callback=lambda info: out.put(("step", None, info)), stop=stop_now)
            extra = None
            if after is not None and result.steps_done > 0:
                out.put(("phase", "after", None))
                init = CausalLM(config)
                init.load_state_dict(torch.load(io.BytesIO(weights), weights_only=True))
                extra = run_after(after, model, init)
            out.put(("done", (result, extra), weights_bytes(model)))
        else:
            result = race_pre_post(config, ids, cfg, callback=lambda p, info: out.put(("step", p, info)),
                                   stop=stop_now)
            out.put(("done", (result, None), None))
    except BaseException as err:  # noqa: BLE001 (reported to the page, never a silent death)
        out.put(("error", f"{type(err).__name__}: {err}", None))


#: What a job does after its steps, in order: the validation loss of a run that was stopped between two
#: evaluations ("final_eval"), then the job's ``after`` measurement ("after"). A run that did all its steps has
#: its last validation loss with its last step, so it goes straight to "after".
PHASES = ("final_eval", "after")


def _stop_signal(stop: Callable[[], bool], on_phase: Callable[[str], None]) -> Callable[[], bool]:
    """The engine's ``stop`` check, saying "final_eval" the first time it answers True: the engine checks it
    before each step, so that is the moment the steps ended and the stopped run's last validation began."""
    said = []

    def check() -> bool:
        if stop():
            if not said:
                said.append(True)
                on_phase("final_eval")
            return True
        return False

    return check


def run_after(after: Callable[[CausalLM, CausalLM], Any], trained: CausalLM, init: CausalLM) -> Any:
    """``after(trained, init)``; an exception becomes ``{"error": "Type: message"}`` (the run itself is fine)."""
    try:
        return after(trained, init)
    except Exception as err:  # noqa: BLE001
        return {"error": f"{type(err).__name__}: {err}"}


def warm_up_worker() -> None:
    """Two training steps of a tiny model with a validation loss: every lazy import a run needs, done once
    (``server.job_preload`` calls this in the fork server)."""
    tiny = ModelConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                       intermediate_size=32, max_position_embeddings=32)
    train(CausalLM(tiny), torch.arange(400) % 40, TrainConfig(steps=2, batch_size=2, seq_len=8, warmup_steps=0,
                                                               eval_every=2))


def _context():
    """Children are forked from a fork server that imported torch and the engine and trained once
    (:mod:`server.job_preload`), so a run starts in a fraction of a second instead of seconds."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["server.job_preload"])
    return ctx


_FORK_SERVER_ASKED = threading.Event()


def prepare() -> None:
    """Start the fork server in the background, once per server process (the Training lab calls this on every
    visit), so the first run of the day does not wait the seconds its imports and warm-up take."""
    if in_processes() and not _FORK_SERVER_ASKED.is_set():
        _FORK_SERVER_ASKED.set()
        threading.Thread(target=lambda: (_context(), multiprocessing.forkserver.ensure_running()),
                         name="explorer-fork-server", daemon=True).start()


_START_LOCK = threading.Lock()


@contextmanager
def _bare_main() -> Iterator[None]:
    """While a child starts, ``__main__`` is a bare module.

    multiprocessing tells a new child to re-run the parent's ``__main__`` script ("preparation"), and Streamlit
    makes the page script that runs the ``__main__`` module; a child would re-run a page script outside Streamlit
    (it failed with exit code 1 before sending anything). The child needs nothing from ``__main__``: its target is
    :func:`_worker`, imported by name."""
    with _START_LOCK:
        saved = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if saved is not None:
                sys.modules["__main__"] = saved


def run_in_process(kind: str, config: ModelConfig, weights: Optional[bytes], token_ids: torch.Tensor,
                   cfg: TrainConfig, stop: threading.Event, on_step: Callable[[Optional[str], StepInfo], None],
                   on_start: Callable[[int], None] = lambda pid: None,
                   on_phase: Callable[[str], None] = lambda phase: None,
                   after: Optional[Callable[[CausalLM, CausalLM], Any]] = None) -> tuple[Any, Any, Optional[bytes]]:
    """Run :func:`_worker` in a child process, calling ``on_step`` for each update it reports and ``on_phase``
    when a phase after the steps begins, and pass ``stop`` on to it; return ``(result, after's result or None,
    trained weights or None)``. ``after``: a picklable ``(trained, init) -> value`` run in the child once the
    steps ended (train only). The child is gone when this returns."""
    ctx = _context()
    out, child_stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_worker, daemon=True, name=f"explorer-{kind}",
                       args=(kind, config, weights, np.ascontiguousarray(token_ids.numpy()), cfg, torch_threads(),
                             job_nice(), out, child_stop, after))
    with _bare_main():
        proc.start()
    on_start(proc.pid)
    try:
        while True:
            if stop.is_set():
                child_stop.set()
            try:
                what, a, b = out.get(timeout=POLL_S)
            except queue.Empty:
                if not proc.is_alive() and out.empty():
                    raise WorkerError(f"the run's process ended without a result (exit code {proc.exitcode})")
                continue
            if what == "step":
                on_step(a, b)
            elif what == "phase":
                on_phase(a)
            elif what == "done":
                return a[0], a[1], b
            else:
                raise WorkerError(a)
    finally:
        child_stop.set()
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join()
        out.close()
