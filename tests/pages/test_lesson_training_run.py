"""Lesson 5 in the app (AppTest): a question about the Training lab's run is asked before the run exists; the
learner's pick is kept, the banner says to press Start, and once the session has a finished run the pick is graded
against the key computed from that run (not from a reference run, not by the option's position)."""

from __future__ import annotations

import time

import pytest

from teaching.answers.core import REGISTRY, StepInputs
from teaching.answers.training import LOSS_BANDS, reference_run
from teaching.lessons import build_parts
from server.jobs import TrainJob
from tests.page_helpers import open_page
from ui.strings.lesson_steps import EN
from teaching.course import Pointer
from ui.teaching.steps import SEAT_KEY, LessonSeat

SHORT = {"train.steps": 20, "train.warmup": 2, "train.batch": 4, "train.seq_len": 32}


@pytest.fixture(scope="module")
def job():
    """A finished run as the lab keeps it (server.jobs.TrainJob, JOB_KEY), with a real short run inside."""
    run = reference_run(StepInputs(SHORT, lambda: build_parts(SHORT)))
    done = TrainJob(cfg=run.result.config, corpus="zh", model=run.model, init=run.init, source_key="random:lesson-test",
                    history=list(run.result.history), result=run.result)
    done.finished = done.started = time.perf_counter()  # ended
    return done


def texts(at, kind: str) -> list[str]:
    return [e.value for e in getattr(at, kind)]


def test_pick_before_the_run_is_graded_on_the_run(job):
    at = open_page("train", **{SEAT_KEY: LessonSeat(active=Pointer("training_lab", 2))}, timeout=300)
    assert not at.exception
    options = [b for b in at.button if str(b.key).startswith("lessons.option.")]
    assert [b.label for b in options] == [v["en"] for v in LOSS_BANDS.values()]  # every option, before any run
    picked = options[1]
    picked.click().run()
    assert not at.exception
    assert EN["lessons.needs_run.train"] in texts(at, "info")
    assert not any(str(b.key).startswith("lessons.option.") for b in at.button)  # the pick is kept

    at.session_state["train.job"] = job  # the run ends
    at.run()
    assert not at.exception
    key = REGISTRY["run_final_loss"](StepInputs({}, lambda: build_parts({}), session={"train.job": job}))
    right = key.correct["en"] == picked.label
    expected = (EN["lessons.right"] if right else EN["lessons.wrong"]).format(answer=key.correct["en"], picked=picked.label)
    assert expected in texts(at, "success" if right else "error")
    drop = round(100 * (1 - job.result.final_val_loss / job.result.initial_val_loss), 1)
    assert any(f"{drop:g} %" in m for m in texts(at, "markdown"))  # the explanation quotes this run's numbers
