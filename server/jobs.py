"""Background training jobs of the Training lab (plain Python, threading and multiprocessing; no Streamlit calls).

A job object lives in one browser session's ``st.session_state`` (never in a shared cache). Its thread waits for
a slot, then runs :func:`engine.train.train` or :func:`engine.train.race_pre_post` **in a child process** and
appends every ``StepInfo`` the child sends to the job's history; the page polls that history from a
``st.fragment(run_every=...)``. ``stop()`` sets the job's ``threading.Event``; the thread passes it on to the
child's ``multiprocessing`` Event, which the engine checks as ``stop``: no new update starts after it, so a run
ends within one step. The thread never touches Streamlit: it only writes attributes of the job.

Why a process: a run is thousands of small torch operations whose Python side holds the interpreter lock that
every session's page script of the same server needs; in a thread, two runs made a small page view 5-18x slower
(``bench/bench_load.py``, isolation phase). In its own process, at a lower CPU priority (``EXPLORER_JOB_NICE``,
default 10), a run takes only the CPU that page views leave over. Children are forked from a server process
that has torch and the engine imported already (``forkserver``), so a run starts in well under a second after
the first; the trained weights come back as bytes (``torch.save``) once the run ended.
``EXPLORER_JOB_PROCESSES=0`` runs jobs in the server's own threads instead (the old way, kept for comparison).
The child's side, the fork server and the relay are in :mod:`server.job_process`.

Every job first waits for a slot of the server's heavy-job line (:mod:`server.admission`): at most N run at once, the
others see their place in line (``job.ahead``). A watchdog polls ``alive`` (the session's liveness, from
:func:`server.admission.session_liveness`) once a second and stops the job when the browser tab is gone, whether it is
running or still waiting.

List appends and attribute assignments are atomic under the GIL, so the page can read ``history`` at any time
(take ``list(job.history)`` for a consistent snapshot).
"""

from __future__ import annotations

import io
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import torch

from engine import CausalLM, ModelConfig
from engine.train import RaceResult, StepInfo, TrainConfig, TrainResult, clone_model, race_pre_post, train
from server import runs
from server.admission import Ticket, admission, torch_threads
from server.job_process import (WorkerError, _stop_signal, in_processes, prepare, run_after,  # noqa: F401 (re-exported)
                                run_in_process, weights_bytes)

WATCH_EVERY_S = 1.0  # how often a job checks that its browser session is still there
_LIVE: "weakref.WeakValueDictionary[str, BackgroundJob]" = weakref.WeakValueDictionary()  # this process's jobs


def active(job_id: str) -> bool:
    """A job with this id was started by this server process and has not ended (whichever session holds it)."""
    job = _LIVE.get(job_id)
    return job is not None and not job.done
@dataclass(kw_only=True)
class BackgroundJob:
    """What every job shares: an id, a stop event, a daemon thread, and how the thread ended.

    Subclasses implement :meth:`_work` (the engine call); :meth:`start` runs it in a thread.

    Fields:
        id: a fresh ``uuid4().hex`` (cache keys; for training also the trained model's id).
        cfg: the :class:`TrainConfig`; corpus: the bundled corpus name the token ids came from.
        error: the message of an exception raised by the work (shown on the page), else None.
        submitted / started / finished: ``time.perf_counter()`` stamps: Start pressed, slot obtained (0.0 while
            waiting in line), thread ended (None until then).
        ticket: the job's place in the server's heavy-job line.
        alive: ``() -> bool``, False once the job's browser session is gone (None: never checked).
        pid: the id of the child process that runs the work, once started (None in thread mode).
        cancelled: stopped while it waited in line: it left the line at once and never started.
        closed: stopped because its browser session was gone (tab closed or reloaded).
        phase: None while it steps; then the phase after the steps it is in (:data:`server.job_process.PHASES`).
        phase_started: ``time.perf_counter()`` when that phase began.
        record: keep a record of the job on disk (:mod:`server.runs`), with ``settings`` in it.
    """

    cfg: TrainConfig
    corpus: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    stop_event: threading.Event = field(default_factory=threading.Event)
    error: Optional[str] = None
    submitted: float = 0.0
    started: float = 0.0
    finished: Optional[float] = None
    thread: Optional[threading.Thread] = None
    ticket: Optional[Ticket] = None
    alive: Optional[Callable[[], bool]] = None
    pid: Optional[int] = None  # the child process running the work (None: not started, or run in a thread)
    cancelled: bool = False
    closed: bool = False
    phase: Optional[str] = None
    phase_started: float = 0.0
    record: bool = False
    settings: dict = field(default_factory=dict)
    _recorded: float = 0.0
    kind = "job"

    @property
    def total(self) -> int:
        return self.cfg.steps

    @property
    def done(self) -> bool:
        """The thread has ended (finished, stopped or failed)."""
        return self.finished is not None

    @property
    def running(self) -> bool:
        """Started and not ended (waiting in line counts: the session has a job in progress); a job taken out of
        the line by its Stop is not running from that moment on, even before its thread noticed."""
        return self.thread is not None and not self.done and not self.cancelled

    @property
    def status(self) -> str:
        """What the page says about the job, as a code: ``queued``, ``running``, ``stopping`` (Stop pressed, the
        step in progress finishing), ``ending`` (the steps are over: the phases after them), then one of
        ``cancelled`` (stopped before it started), ``stopped``, ``finished``, ``failed``."""
        if self.cancelled:
            return "cancelled"
        if self.done:
            if self.error is not None:
                return "failed"
            if self.result is None:
                return "cancelled"
            return "stopped" if self._stopped_early() else "finished"
        if self.queued:
            return "queued"
        if self.phase is not None:
            return "ending"
        return "stopping" if self.stop_event.is_set() else "running"

    def _stopped_early(self) -> bool:
        raise NotImplementedError

    @property
    def queued(self) -> bool:
        """Waiting in the server's line for a slot."""
        return self.running and self.ticket is not None and self.ticket.admitted is None

    @property
    def ahead(self) -> Optional[int]:
        """Jobs ahead of this one in the line (0 = next); None once it runs."""
        return admission().ahead(self.ticket) if self.ticket is not None else None

    def stop(self) -> None:
        """Ask the run to end: the update in progress finishes, no further one starts. A job still waiting in
        line leaves it at once (``cancelled``): the next one moves up and this one never starts."""
        self.stop_event.set()
        if self.ticket is not None and self.ticket.admitted is None and admission().cancel(self.ticket):
            self.cancelled = True

    def _on_phase(self, phase: str) -> None:
        self.phase_started = time.perf_counter()
        self.phase = phase

    def _on_progress(self) -> None:
        """After each step: the record's progress, at most every :data:`server.runs.WRITE_EVERY_S`."""
        if self.record and time.perf_counter() - self._recorded >= runs.WRITE_EVERY_S:
            self._recorded = time.perf_counter()
            runs.write(self.id, step=len(self.progress_history))

    def _write_record(self, status: str) -> None:
        if self.record:
            runs.write(self.id, kind=self.kind, status=status, step=len(self.progress_history), total=self.total,
                       settings=self.settings)

    @property
    def progress_history(self) -> list[StepInfo]:
        """The StepInfo of the updates done so far, one per step of ``total`` (what the progress bar counts)."""
        raise NotImplementedError

    def _work(self, token_ids: torch.Tensor) -> None:
        """The engine call in this thread (``EXPLORER_JOB_PROCESSES=0``)."""
        raise NotImplementedError

    def _work_in_process(self, token_ids: torch.Tensor) -> None:
        """The engine call in a child process (:func:`run_in_process`)."""
        raise NotImplementedError

    def _run(self, token_ids: torch.Tensor) -> None:
        line = admission()
        try:
            admitted = line.wait(self.ticket, self.stop_event)  # False: stopped (or the tab closed) while waiting
            if admitted and self.alive is not None and not self.alive():  # closed since the watchdog last looked
                self.stop()
                admitted = False
            if admitted:
                self.started = time.perf_counter()
                if in_processes():
                    self._work_in_process(token_ids)
                else:
                    torch.set_num_threads(torch_threads())  # this thread's torch threads (see server/admission.py)
                    self._work(token_ids)
        except WorkerError as err:  # the child's own "Type: message"
            self.error = str(err)
        except Exception as err:  # shown on the page; the thread must never die silently
            self.error = f"{type(err).__name__}: {err}"
        finally:
            ended = time.perf_counter()  # read before the slot is freed: a run let in by the release starts after it
            line.release(self.ticket)
            self.finished = ended  # set after it: ``done`` means the slot is free again
            self._write_record("closed" if self.closed else self.status)

    def _watch(self) -> None:
        """Stop the job once its browser session is gone (checked every ``WATCH_EVERY_S``)."""
        while not self.done and not self.stop_event.wait(WATCH_EVERY_S):
            if self.alive is not None and not self.alive():
                self.closed = True
                self.stop()

    def start(self, token_ids: torch.Tensor, name: str) -> "BackgroundJob":
        """Queue for a slot and run :meth:`_work` in a daemon thread; return at once."""
        self.submitted = time.perf_counter()
        self.ticket = admission().enqueue(name)
        _LIVE[self.id] = self
        self._write_record("running")
        self.thread = threading.Thread(target=self._run, args=(token_ids,), name=f"{name}-{self.id[:8]}", daemon=True)
        self.thread.start()
        if self.alive is not None:
            threading.Thread(target=self._watch, name=f"{name}-watch-{self.id[:8]}", daemon=True).start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the thread ends (tests); returns ``done``."""
        if self.thread is not None:
            self.thread.join(timeout)
        return self.done


@dataclass(kw_only=True)
class TrainJob(BackgroundJob):
    """One training run of a clone of a model (:func:`engine.train.train`).

    Fields (besides :class:`BackgroundJob`'s):
        model: the clone being trained (its weights change while the thread runs; read it only when done).
        init: a second, untouched clone taken before training: the "before" of the before/after view.
        source_key: the sidebar model key of the model cloned.
        history: the StepInfo of every update done so far.
        result: the :class:`TrainResult` once the run ended.
        published: set by the page once the trained model was handed to the sidebar.
        after: a picklable ``(trained, init) -> value`` measured right after the steps, in the run's own process
            (its phase "after"), so its result is there when the run ends; ``after_result`` holds it
            (``{"error": ...}`` when it raised). ``after_tokens``: its forward tokens, for the time left.
    """

    model: CausalLM
    init: CausalLM
    source_key: str
    history: list[StepInfo] = field(default_factory=list)
    result: Optional[TrainResult] = None
    published: bool = False
    after: Optional[Callable[[CausalLM, CausalLM], Any]] = None
    after_result: Any = None
    after_tokens: int = 0
    kind = "train"

    @property
    def progress_history(self) -> list[StepInfo]:
        return self.history

    def _stopped_early(self) -> bool:
        return self.result.stopped

    def _step(self, info: StepInfo) -> None:
        self.history.append(info)
        self._on_progress()

    def _work(self, token_ids: torch.Tensor) -> None:
        self.result = train(self.model, token_ids, self.cfg, callback=self._step,
                            stop=_stop_signal(self.stop_event.is_set, self._on_phase))
        if self.after is not None and self.result.steps_done > 0:
            self._on_phase("after")
            self.after_result = run_after(self.after, self.model, self.init)

    def _work_in_process(self, token_ids: torch.Tensor) -> None:
        result, extra, weights = run_in_process(
            "train", self.model.config, weights_bytes(self.model), token_ids, self.cfg, self.stop_event,
            lambda _, info: self._step(info), on_start=lambda pid: setattr(self, "pid", pid),
            on_phase=self._on_phase, after=self.after)
        self.model.load_state_dict(torch.load(io.BytesIO(weights), weights_only=True))  # tied weights stay tied
        self.after_result = extra
        self.result = result


def start_training(model: CausalLM, token_ids: torch.Tensor, cfg: TrainConfig, corpus: str, source_key: str,
                   alive: Optional[Callable[[], bool]] = None,
                   after: Optional[Callable[[CausalLM, CausalLM], Any]] = None, after_tokens: int = 0,
                   record: bool = False, settings: Optional[dict] = None) -> TrainJob:
    """Clone ``model`` twice (the trained copy and the frozen "before"), start training the first in a daemon
    thread and return the job at once. ``model`` itself is only read (``copy.deepcopy``), never trained.
    ``alive``: the session's liveness; the run stops when it turns False. ``after``/``after_tokens``: see
    :class:`TrainJob`. ``record``: keep a record on disk (:mod:`server.runs`) with ``settings``."""
    job = TrainJob(model=clone_model(model), init=clone_model(model), cfg=cfg, corpus=corpus, source_key=source_key,
                   alive=alive, after=after, after_tokens=after_tokens, record=record,
                   settings=dict(settings or {}, corpus=corpus))
    job.init.eval()
    return job.start(token_ids, "train")


@dataclass(kw_only=True)
class RaceJob(BackgroundJob):
    """A Pre-Norm vs Post-Norm race (:func:`engine.train.race_pre_post`) running in a thread.

    ``histories["pre"]`` and ``histories["post"]`` grow by one StepInfo per update, in turn.
    """

    config: ModelConfig
    histories: dict[str, list[StepInfo]] = field(default_factory=lambda: {"pre": [], "post": []})
    result: Optional[RaceResult] = None
    kind = "race"

    @property
    def progress_history(self) -> list[StepInfo]:
        """Post-Norm's updates: it moves second in each step, so its count is the race's completed steps."""
        return self.histories["post"]

    def _stopped_early(self) -> bool:
        return self.result.post.stopped

    def _callback(self, placement: str, info: StepInfo) -> None:
        self.histories[placement].append(info)
        if placement == "post":
            self._on_progress()

    def _work(self, token_ids: torch.Tensor) -> None:
        self.result = race_pre_post(self.config, token_ids, self.cfg, callback=self._callback,
                                    stop=_stop_signal(self.stop_event.is_set, self._on_phase))

    def _work_in_process(self, token_ids: torch.Tensor) -> None:
        self.result, _, _ = run_in_process("race", self.config, None, token_ids, self.cfg, self.stop_event,
                                           self._callback, on_start=lambda pid: setattr(self, "pid", pid),
                                           on_phase=self._on_phase)


def start_race(config: ModelConfig, token_ids: torch.Tensor, cfg: TrainConfig, corpus: str,
               alive: Optional[Callable[[], bool]] = None, record: bool = False,
               settings: Optional[dict] = None) -> RaceJob:
    """Start :func:`engine.train.race_pre_post` on ``config`` in a daemon thread; return the job at once."""
    return RaceJob(config=config, cfg=cfg, corpus=corpus, alive=alive, record=record,
                   settings=dict(settings or {}, corpus=corpus)).start(token_ids, "race")
