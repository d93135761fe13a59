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


def _worker(kind: str, config: ModelConfig, weights: Optional[bytes], token_ids: np.ndarray, cfg: TrainConfig,
            threads: int, nice: int, out, stop) -> None:
    """The child process: rebuild the model, run the engine, send ``("step", placement, StepInfo)`` per update and
    ``("done", result, weights)`` or ``("error", message, None)`` at the end. Plain data only crosses the pipe."""
    try:
        if nice:
            os.nice(nice)
        torch.set_num_threads(threads)
        ids = torch.from_numpy(token_ids)
        if kind == "train":
            model = CausalLM(config)
            model.load_state_dict(torch.load(io.BytesIO(weights), weights_only=True))
            result = train(model, ids, cfg, callback=lambda info: out.put(("step", None, info)), stop=stop.is_set)
            out.put(("done", result, weights_bytes(model)))
        else:
            result = race_pre_post(config, ids, cfg, callback=lambda p, info: out.put(("step", p, info)),
                                   stop=stop.is_set)
            out.put(("done", result, None))
    except BaseException as err:  # noqa: BLE001 (reported to the page, never a silent death)
        out.put(("error", f"{type(err).__name__}: {err}", None))


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
                   on_start: Callable[[int], None] = lambda pid: None) -> tuple[Any, Optional[bytes]]:
    """Run :func:`_worker` in a child process, calling ``on_step`` for each update it reports, and pass ``stop``
    on to it; return ``(result, trained weights or None)``. The child is gone when this returns."""
    ctx = _context()
    out, child_stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_worker, daemon=True, name=f"explorer-{kind}",
                       args=(kind, config, weights, np.ascontiguousarray(token_ids.numpy()), cfg, torch_threads(),
                             job_nice(), out, child_stop))
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
            elif what == "done":
                return a, b
            else:
                raise WorkerError(a)
    finally:
        child_stop.set()
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join()
        out.close()
