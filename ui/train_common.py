"""What the Training lab's two sections share: session keys, number formats, the job's place in
the server's line, its live progress bar (with the time left measured from the run's own steps and phases:
:func:`analysis.training.time_left`), and what became of a run named in the address that this session does not
hold (:func:`lost_run_note`: a server restart, a closed tab).

The sections themselves are :mod:`ui.train_panel` (train a copy of the sidebar model) and :mod:`ui.race_panel`
(Pre-Norm vs Post-Norm race); ``app_pages/train.py`` wires them. Jobs run in background threads held in this browser
session's ``st.session_state`` (:mod:`server.jobs`); a ``st.fragment(run_every=LIVE_EVERY_S)`` redraws a live panel.
"""

from __future__ import annotations

import time
from typing import Callable

import plotly.graph_objects as go
import streamlit as st

import analysis.training
from engine.config import ModelConfig
from engine.train import StepInfo, TrainConfig
from server import jobs, runs
from server.admission import admission
from ui.format import duration, number as num, percent as pct  # noqa: F401  (the panels import them from here)
from ui.i18n import current_lang, t
from ui.presenter import presenter_mode
from ui.sidebar import MAX_TOKENS, TRAINED_KEY
from ui.state import sync_url, unlink

JOB_KEY = "train.job"  # the session's latest training job (server.jobs.TrainJob)
RACE_KEY = "train.race_job"  # the session's latest race (server.jobs.RaceJob)
CORPORA = ("zh", "en", "all")
LR_OPTIONS = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2]
MIN_STEPS = 10
DEFAULT = TrainConfig()  # defaults of the controls (steps 300, lr 3e-3, warmup 30, batch 16, seq 64)
LIVE_EVERY_S = 1.0  # the live panels' progress bar and numbers
CHARTS_EVERY_S = 3.0  # the live panels' charts (see live_figures)
LIVE_FIGURES_KEY = "train.live_figures"
RUN_URL = {"train": "train.run", "race": "train.race_run"}  # the address names the session's latest job by id


def token_limit(config: ModelConfig) -> int:
    """The longest training window the model takes: its position limit, at most the app's token limit."""
    return min(MAX_TOKENS, config.max_position_embeddings) if config.has_position_limit else MAX_TOKENS


def placement_names() -> dict[str, str]:
    return {k: t(f"cfg.norm_position.{k}") for k in ("pre", "post", "sandwich", "post_sublayer")}


def nearest(options: list, key: str, default) -> None:
    """Move a select_slider's stale value (one its options no longer have) to the nearest option, with a note."""
    value = st.session_state.get(key, default)
    if value not in options:
        try:
            new = min(options, key=lambda o: abs(o - value))
        except TypeError:
            new = default if default in options else options[-1]
        st.session_state[key] = new
        st.caption("⚠️ " + t("common.clamped", name=t(f"{key}.label"), old=value, new=new))


# ---- jobs ------------------------------------------------------------------------------------------------------
def publish_finished_job() -> None:
    """Hand a finished run's model to the sidebar, once; before ``explorer()`` so the sidebar shows it now.

    A run stopped before its first update, or one that failed, publishes nothing.
    """
    job = st.session_state.get(JOB_KEY)
    if job is None or not job.done or job.published:
        return
    job.published = True
    learn_after_cost(job)
    if job.error is None and job.result is not None and job.result.steps_done > 0:
        st.session_state[TRAINED_KEY] = {"model": job.model, "id": job.id, "source": job.source_key}
        st.session_state["model.source"] = "trained"


def busy() -> bool:
    """A training run or a race of this session is running (one at a time: they share the CPU)."""
    return any(j is not None and j.running for j in (st.session_state.get(JOB_KEY), st.session_state.get(RACE_KEY)))


def stop_job(key: str) -> None:
    job = st.session_state.get(key)
    if job is not None:
        job.stop()


def start_stop(job_key: str, start_label: str, start_key: str, stop_key: str, can_start: bool, on_start, args: tuple,
               other_key: str, other_note: str) -> None:
    """Start and Stop of the job in ``job_key``; while this session's other job (``other_key``) runs, say so and
    follow its progress bar (it reruns the page when that job ends, so Start comes back)."""
    job = st.session_state.get(job_key)
    b1, b2, _ = st.columns([1, 1, 3])
    b1.button(start_label, key=start_key, type="primary", disabled=busy() or not can_start, on_click=on_start,
              args=args)
    b2.button(t("train.stop"), key=stop_key, disabled=not (job is not None and job.running), on_click=stop_job,
              args=(job_key,))
    other = st.session_state.get(other_key)
    if other is not None and other.running:
        st.caption(other_note)
        live_progress(other_key)


def queue_note(job: jobs.BackgroundJob) -> bool:
    """While ``job`` waits for a slot of the server's heavy-job line: say how many runs are ahead; True then."""
    if not job.queued:
        return False
    line, ahead = admission(), job.ahead
    if ahead is None:  # admitted between the two reads
        return False
    key = "queue.next" if ahead == 0 else "queue.waiting_one" if ahead == 1 else "queue.waiting"
    st.info(t(key, ahead=ahead, running=line.running, limit=line.limit))
    return True


# measured / estimated seconds of the latest runs' measurements after their steps, in this server process
AFTER_RATIOS: list[float] = []
AFTER_RATIOS_KEPT = 5


def after_scale() -> float:
    """How much longer than estimated the latest measurements after the steps took (median; 1 before any)."""
    ratios = sorted(AFTER_RATIOS[-AFTER_RATIOS_KEPT:])
    return ratios[len(ratios) // 2] if ratios else 1.0


def learn_after_cost(job: jobs.BackgroundJob) -> None:
    """Once a run with a measurement after its steps has ended: what it took against its estimate."""
    tokens = getattr(job, "after_tokens", 0)
    if not (tokens and job.done and job.phase == "after" and job.error is None):
        return
    estimate = analysis.training.time_left(list(job.progress_history), job.cfg, after_tokens=tokens, phase="after")
    if estimate:
        AFTER_RATIOS.append((job.finished - job.phase_started) / estimate)
        del AFTER_RATIOS[:-AFTER_RATIOS_KEPT]


def time_left(job: jobs.BackgroundJob, hist: list[StepInfo]) -> float | None:
    """:func:`analysis.training.time_left` of ``job`` now: its steps so far, its phase, its measurement after
    (corrected by what the latest ones took: :func:`after_scale`)."""
    phase_s = time.perf_counter() - job.phase_started if job.phase is not None else 0.0
    return analysis.training.time_left(hist, job.cfg, after_tokens=getattr(job, "after_tokens", 0), phase=job.phase,
                                       phase_elapsed=phase_s, after_scale=after_scale())


def progress_text(job: jobs.BackgroundJob, hist: list[StepInfo]) -> str:
    """The progress bar's words for the job's state (running, stopping, a phase after the steps)."""
    step, left = len(hist), time_left(job, hist)
    if job.phase is not None:
        stopped = "_stopped" if job.stop_event.is_set() and job.phase == "after" else ""
        late = left is not None and left <= 0  # the phase has run past its estimate: never "0 s left" for long
        words = (t("train.left_late", over=duration(time.perf_counter() - job.phase_started)) if late
                 else t("train.left", eta=duration(left)))
        return t(f"train.phase.{job.phase}{stopped}", done=step, total=job.total, left=words)
    return t("train.progress", step=step, total=job.total, elapsed=duration(time.perf_counter() - job.started),
             eta=duration(left))


def progress(job: jobs.BackgroundJob | None) -> list[StepInfo] | None:
    """The live progress of ``job``: its place in line while it waits (None), else the progress bar with the time
    left (:func:`time_left`) and the steps so far; "stopping" from the moment Stop was pressed.

    Reruns the whole page once the job has ended or left the line (so it shows the results, publishes the
    trained model, or says it stopped before it started).
    """
    if job is None:
        return None
    if job.done or job.cancelled:
        st.rerun()
    if queue_note(job):
        return None
    hist = list(job.progress_history)
    st.progress(min(1.0, len(hist) / job.total), text=progress_text(job, hist))
    if job.status == "stopping":
        st.caption(t("train.stopping", step=len(hist)))
    return hist


def link_job(kind: str, job: jobs.BackgroundJob | None) -> None:
    """Keep the id of the session's latest job of ``kind`` in the address, so a session that lost it (the server
    restarted, the tab was reloaded) can still say what became of it (:func:`lost_run_note`)."""
    if job is not None:
        sync_url(RUN_URL[kind], job.id, None)


def restore_settings(settings: dict, keys: dict[str, str]) -> None:
    """Button callback: a lost job's ``settings`` back into the controls (``keys``: setting -> control key),
    before the controls are drawn."""
    for name, key in keys.items():
        if name in settings:
            st.session_state[key] = settings[name]


def lost_run_note(kind: str, keys: dict[str, str]) -> bool:
    """This session has no job of ``kind``, but the address names one: say what became of it (lost with a server
    that ended, ended with a closed tab, or ended in a session that has gone), with a button that puts its
    settings back into the controls (``keys``: see :func:`restore_settings`). An id with nothing to say about it
    is taken out of the address. True when a note was shown."""
    key = RUN_URL[kind]
    run_id = st.query_params.get(key)
    if run_id is None:
        return False
    record = runs.read(run_id)
    fate = runs.fate(record) if record is not None and record.get("kind") == kind else None
    if fate is None or jobs.active(run_id):
        if fate is None:
            unlink(key)
        return False
    ago = duration(max(0.0, time.time() - float(record.get("created", time.time()))))
    st.warning(t(f"train.run_{fate}", ago=ago, step=f"{int(record.get('step', 0)):,}",
                 total=f"{int(record.get('total', 0)):,}"))
    if record.get("settings"):
        st.button(t("train.run_restore"), key=f"train.{kind}_restore", on_click=restore_settings,
                  args=(record["settings"], keys))
    return True


def live_figures(job: jobs.BackgroundJob, build: Callable[[], tuple[go.Figure, ...]]) -> tuple[go.Figure, ...]:
    """The live charts of ``job``: ``build()`` at most every :data:`CHARTS_EVERY_S`, the same figures in between.

    Building a Plotly figure costs the server process, which also runs every student's page, about 0.05 s of a
    core; two charts rebuilt every second in four open training tabs were a measurable share of the server's CPU
    (``bench/bench_load.py``, isolation). The progress bar and the numbers above the charts still move every
    second. Another language or presenter mode builds at once."""
    key = (job.id, current_lang(), presenter_mode())
    now = time.monotonic()
    built = st.session_state.get(LIVE_FIGURES_KEY)
    if built is None or built[0] != key or now - built[1] >= CHARTS_EVERY_S:
        built = (key, now, build())
        st.session_state[LIVE_FIGURES_KEY] = built
    return built[2]


@st.fragment(run_every=LIVE_EVERY_S)
def live_progress(key: str) -> None:
    """The progress bar alone of the job in ``st.session_state[key]`` (shown in the other section, so a run that
    ends there is still published and the Start buttons come back)."""
    progress(st.session_state.get(key))
