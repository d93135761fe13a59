"""Background training jobs of the Training lab (plain Python + threading; no Streamlit calls).

A job object lives in one browser session's ``st.session_state`` (never in a shared cache). Its thread runs
:func:`engine.train.train` or :func:`engine.train.race_pre_post` and appends every ``StepInfo`` to the job's
history through the callback; the page polls that history from a ``st.fragment(run_every=...)``. ``stop()``
sets the ``threading.Event`` passed to the engine as ``stop``: no new update starts after it, so a run ends
within one step. The thread never touches Streamlit: it only writes attributes of the job.

List appends and attribute assignments are atomic under the GIL, so the page can read ``history`` at any time
(take ``list(job.history)`` for a consistent snapshot).
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Optional

import torch

from engine import CausalLM, ModelConfig
from engine.train import RaceResult, StepInfo, TrainConfig, TrainResult, clone_model, race_pre_post, train


@dataclass
class TrainJob:
    """One training run of a clone of a model.

    Fields:
        id: a fresh ``uuid4().hex``; becomes the trained model's id (cache keys, sidebar model key).
        model: the clone being trained (its weights change while the thread runs; read it only when done).
        init: a second, untouched clone taken before training: the "before" of the before/after view.
        cfg, corpus, source_key: what was trained on, and the sidebar model key of the model cloned.
        history: the StepInfo of every update done so far.
        result / error: set by the thread when it ends (``error`` is the message of an exception).
        published: set by the page once the trained model was handed to the sidebar.
    """

    model: CausalLM
    init: CausalLM
    cfg: TrainConfig
    corpus: str
    source_key: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    history: list[StepInfo] = field(default_factory=list)
    stop_event: threading.Event = field(default_factory=threading.Event)
    result: Optional[TrainResult] = None
    error: Optional[str] = None
    started: float = 0.0
    finished: Optional[float] = None
    published: bool = False
    thread: Optional[threading.Thread] = None

    @property
    def total(self) -> int:
        return self.cfg.steps

    @property
    def done(self) -> bool:
        """The thread has ended (finished, stopped or failed)."""
        return self.finished is not None

    @property
    def running(self) -> bool:
        return self.thread is not None and not self.done

    def stop(self) -> None:
        """Ask the run to end: the update in progress finishes, no further one starts."""
        self.stop_event.set()

    def _run(self, token_ids: torch.Tensor) -> None:
        try:
            self.result = train(self.model, token_ids, self.cfg, callback=self.history.append, stop=self.stop_event)
        except Exception as err:  # shown on the page; the thread must never die silently
            self.error = f"{type(err).__name__}: {err}"
        finally:
            self.finished = time.perf_counter()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the thread ends (tests); returns ``done``."""
        if self.thread is not None:
            self.thread.join(timeout)
        return self.done


def start_training(model: CausalLM, token_ids: torch.Tensor, cfg: TrainConfig, corpus: str, source_key: str) -> TrainJob:
    """Clone ``model`` twice (the trained copy and the frozen "before"), start training the first in a daemon
    thread and return the job at once. ``model`` itself is only read (``copy.deepcopy``), never trained."""
    job = TrainJob(model=clone_model(model), init=clone_model(model), cfg=cfg, corpus=corpus, source_key=source_key)
    job.init.eval()
    job.started = time.perf_counter()
    job.thread = threading.Thread(target=job._run, args=(token_ids,), name=f"train-{job.id[:8]}", daemon=True)
    job.thread.start()
    return job


@dataclass
class RaceJob:
    """A Pre-Norm vs Post-Norm race (:func:`engine.train.race_pre_post`) running in a thread.

    ``histories["pre"]`` and ``histories["post"]`` grow by one StepInfo per update, in turn.
    """

    config: ModelConfig
    cfg: TrainConfig
    corpus: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    histories: dict[str, list[StepInfo]] = field(default_factory=lambda: {"pre": [], "post": []})
    stop_event: threading.Event = field(default_factory=threading.Event)
    result: Optional[RaceResult] = None
    error: Optional[str] = None
    started: float = 0.0
    finished: Optional[float] = None
    thread: Optional[threading.Thread] = None

    @property
    def total(self) -> int:
        return self.cfg.steps

    @property
    def done(self) -> bool:
        return self.finished is not None

    @property
    def running(self) -> bool:
        return self.thread is not None and not self.done

    def stop(self) -> None:
        self.stop_event.set()

    def _callback(self, placement: str, info: StepInfo) -> None:
        self.histories[placement].append(info)

    def _run(self, token_ids: torch.Tensor) -> None:
        try:
            self.result = race_pre_post(self.config, token_ids, self.cfg, callback=self._callback, stop=self.stop_event)
        except Exception as err:
            self.error = f"{type(err).__name__}: {err}"
        finally:
            self.finished = time.perf_counter()

    def wait(self, timeout: float | None = None) -> bool:
        if self.thread is not None:
            self.thread.join(timeout)
        return self.done


def start_race(config: ModelConfig, token_ids: torch.Tensor, cfg: TrainConfig, corpus: str) -> RaceJob:
    """Start :func:`engine.train.race_pre_post` on ``config`` in a daemon thread; return the job at once."""
    job = RaceJob(config=config, cfg=cfg, corpus=corpus)
    job.started = time.perf_counter()
    job.thread = threading.Thread(target=job._run, args=(token_ids,), name=f"race-{job.id[:8]}", daemon=True)
    job.thread.start()
    return job


def eta_from_history(history: list[StepInfo], total_steps: int, window: int = 20) -> float | None:
    """Seconds left at the pace of the last ``window`` steps (their ``elapsed_s`` spacing, validation included).

    The start-up (the validation loss before the first step) is left out of the pace, so the estimate does not
    overshoot at the beginning. None before the second step.
    """
    if len(history) < 2:
        return None
    recent = history[-window:]
    per_step = (recent[-1].elapsed_s - recent[0].elapsed_s) / (len(recent) - 1)
    return max(0.0, per_step * (total_steps - history[-1].step))
