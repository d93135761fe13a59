"""The heavy-job line (server/admission.py) and the jobs that wait in it (server/jobs.py): at most N at once, first come
first served, a visible place in line, leaving the line on stop, and a run that stops when its session is gone;
runs train in their own processes, exactly what the engine trains in this one.
Synchronised with events, never with timing assertions."""

from __future__ import annotations

import os
import sys
import threading
import time
import types

import pytest
import torch

from engine import CausalLM, ModelConfig
from engine.train import TrainConfig, clone_model, race_pre_post, train
from tests.page_helpers import open_page
from server import admission as adm
from server import jobs

TINY = ModelConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                   max_position_embeddings=32)
IDS = torch.arange(2000) % 40


def test_at_most_limit_run_and_the_rest_keep_their_order():
    line = adm.Admission(limit=2)
    tickets = [line.enqueue(f"job{i}") for i in range(5)]
    assert [line.ahead(t) for t in tickets] == [0, 1, 2, 3, 4]
    assert line.wait(tickets[0]) and line.wait(tickets[1])
    assert line.running == 2 and [line.ahead(t) for t in tickets[2:]] == [0, 1, 2]
    admitted = threading.Event()
    waiter = threading.Thread(target=lambda: line.wait(tickets[2]) and admitted.set())
    waiter.start()
    assert not admitted.wait(0.5)  # both slots are taken: the third waits
    line.release(tickets[0])
    assert admitted.wait(30)  # a freed slot goes to the first in line
    waiter.join()
    assert line.running == 2 and [line.ahead(t) for t in tickets[3:]] == [0, 1]


def test_a_later_ticket_never_overtakes():
    line = adm.Admission(limit=1)
    first, second = line.enqueue("a"), line.enqueue("b")
    got = threading.Event()
    th = threading.Thread(target=lambda: line.wait(second) and got.set())
    th.start()
    assert not got.wait(0.5)  # a free slot, but "a" is ahead
    assert line.wait(first)
    line.release(first)
    assert got.wait(30)
    th.join()


def test_stop_while_waiting_leaves_the_line():
    line = adm.Admission(limit=1)
    holder, waiting, behind = line.enqueue("a"), line.enqueue("b"), line.enqueue("c")
    assert line.wait(holder)
    stop = threading.Event()
    result = {}
    th = threading.Thread(target=lambda: result.setdefault("admitted", line.wait(waiting, stop)))
    th.start()
    stop.set()
    th.join(30)
    assert result == {"admitted": False} and waiting.left
    assert line.ahead(behind) == 0  # moved up


@pytest.fixture()
def one_slot():
    line = adm.reset(limit=1)
    yield line
    adm.reset()


def _job(steps: int, alive=None) -> jobs.TrainJob:
    torch.manual_seed(0)
    return jobs.start_training(CausalLM(TINY), IDS, TrainConfig(steps=steps, batch_size=2, seq_len=8, warmup_steps=0,
                                                                eval_every=steps), "zh", "k", alive=alive)


def _first_step(job: jobs.BackgroundJob, timeout: float = 120.0) -> None:
    """Wait until ``job`` reported its first step; fail with the job's own error if it ended (or hung) before."""
    deadline = time.monotonic() + timeout
    while not job.progress_history:
        assert not job.done, f"the run ended before its first step: {job.error}"
        assert time.monotonic() < deadline, f"no step in {timeout:.0f} s (error: {job.error})"
        job.thread.join(0.1)


def _ended_cleanly(*done: jobs.BackgroundJob) -> str:
    return "; ".join(f"{j.id[:8]}: error={j.error!r} result={j.result!r:.80}" for j in done)


def test_second_run_waits_for_the_first_and_shows_its_place(one_slot):
    first = _job(5000)
    second = _job(20)
    assert second.queued and second.ahead == 0 and second.started == 0.0
    third = _job(20)
    assert third.ahead == 1
    first.stop()
    assert second.wait(120) and third.wait(120)
    assert second.error is None and third.error is None, _ended_cleanly(first, second, third)
    assert second.result.steps_done == 20 and third.result.steps_done == 20
    assert second.started >= first.finished  # it only started once the first one had ended
    assert one_slot.running == 0 and one_slot.waiting == 0


def test_closed_session_stops_a_running_job_and_a_waiting_one(one_slot):
    gone = threading.Event()
    running = _job(5000, alive=lambda: not gone.is_set())
    waiting = _job(5000, alive=lambda: not gone.is_set())
    _first_step(running)  # let it take a step
    gone.set()  # the browser tab closed
    assert running.wait(60) and waiting.wait(60)
    assert running.result.stopped and 0 < running.result.steps_done < 5000
    assert waiting.result is None and waiting.error is None and waiting.started == 0.0  # never ran
    assert one_slot.running == 0 and one_slot.waiting == 0


def test_a_run_in_its_own_process_trains_what_the_engine_trains_here():
    torch.manual_seed(0)
    model = CausalLM(TINY)
    cfg = TrainConfig(steps=12, batch_size=2, seq_len=8, warmup_steps=2, eval_every=6)
    job = jobs.start_training(model, IDS, cfg, "zh", "k")
    race = jobs.start_race(TINY, IDS, cfg, "zh")
    assert job.wait(300) and race.wait(300) and job.error is None and race.error is None
    assert job.pid not in (None, os.getpid()) and race.pid not in (None, os.getpid())
    reference = clone_model(model)  # the same run, in this process
    ref = train(reference, IDS, cfg)
    assert [h.loss for h in job.history] == [h.loss for h in ref.history] == [h.loss for h in job.result.history]
    mine, theirs = job.model.state_dict(), reference.state_dict()
    assert all(torch.equal(mine[k], theirs[k]) for k in theirs)  # the trained weights came back, bit for bit
    assert job.model.lm_head.weight is job.model.embed_tokens.weight  # still tied after loading them
    assert not torch.equal(job.model.embed_tokens.weight, job.init.embed_tokens.weight)
    ref_race = race_pre_post(TINY, IDS, cfg)
    for placement in ("pre", "post"):
        assert [h.loss for h in race.histories[placement]] == [h.loss for h in ref_race.results()[placement].history]


def test_a_run_starts_while_a_page_script_is_the_main_module(one_slot, tmp_path, monkeypatch):
    """Streamlit makes the running page script ``__main__`` (AppTest too, and it stays after the run);
    multiprocessing would have the child re-run it outside Streamlit, where it fails before the first step."""
    script = tmp_path / "page.py"
    script.write_text("raise SystemExit(3)  # what a page script run outside Streamlit amounts to\n")
    page = types.ModuleType("__main__")
    page.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", page)
    job = _job(4)
    assert job.wait(120) and job.error is None, job.error
    assert job.result.steps_done == 4 and len(job.history) == 4
    assert sys.modules["__main__"] is page  # put back once the child started


def test_a_run_process_ends_when_its_session_is_gone(one_slot):
    gone = threading.Event()
    job = _job(5000, alive=lambda: not gone.is_set())
    _first_step(job)  # it is training in its own process
    assert job.pid is not None and job.pid != os.getpid()
    os.kill(job.pid, 0)  # alive (raises if not)
    gone.set()  # the browser tab closed
    assert job.wait(60) and job.result.stopped and job.error is None
    assert 0 < job.result.steps_done < 5000 and len(job.history) == job.result.steps_done
    with pytest.raises(ProcessLookupError):  # the child ended and was reaped
        os.kill(job.pid, 0)
    assert one_slot.running == 0


def test_train_page_shows_the_place_in_line(one_slot):
    blocker = _job(5000)  # another student's run holds the only slot
    try:
        at = open_page("train", **{"train.steps": 20})
        at.button(key="train.start").click().run()
        texts = [i.value for i in at.info]
        assert any("you are next" in x for x in texts), texts
        assert not at.exception
    finally:
        blocker.stop()
        blocker.wait(60)
        job = at.session_state["train.job"]
        job.stop()
        job.wait(60)


def test_stop_takes_a_queued_run_out_of_the_line_at_once(one_slot):
    blocker = _job(5000)
    waiting = [_job(20) for _ in range(3)]
    try:
        assert [j.ahead for j in waiting] == [0, 1, 2]
        waiting[1].stop()
        # at once, whatever its thread is doing: out of the line, not running, and it says so
        assert waiting[1].status == "cancelled" and not waiting[1].running and not waiting[1].queued
        assert waiting[2].ahead == 1 and one_slot.waiting == 2
    finally:
        blocker.stop()
    assert waiting[1].wait(60) and waiting[1].started == 0.0 and waiting[1].pid is None  # it never started
    assert all(j.wait(120) for j in (blocker, waiting[0], waiting[2])), _ended_cleanly(*waiting)
    assert [j.status for j in waiting] == ["finished", "cancelled", "finished"]
    assert waiting[0].result.steps_done == waiting[2].result.steps_done == 20


def test_stop_of_a_running_run_says_stopping_then_the_step_it_stopped_at(one_slot):
    job = _job(5000)
    _first_step(job)
    assert job.status == "running"
    job.stop()
    assert job.status in ("stopping", "ending")  # from the click on, never "running" again
    assert job.wait(60) and job.error is None
    assert job.status == "stopped" and job.phase == "final_eval"  # its steps ended, then its last validation
    assert job.result.stopped and 0 < job.result.steps_done < 5000


def test_a_queued_runs_stop_on_the_page_says_it_stopped_before_it_started(one_slot):
    blocker = _job(5000)
    try:
        at = open_page("train", **{"train.steps": 20})
        at.button(key="train.start").click().run()
        assert any("you are next" in i.value for i in at.info)
        at.button(key="train.stop").click().run()
        texts = [i.value for i in at.info]
        assert any("Stopped before it started" in x for x in texts), texts
        assert not at.button(key="train.start").disabled and not at.exception
        assert one_slot.waiting == 0
    finally:
        blocker.stop()
        blocker.wait(60)


def test_train_page_refuses_a_run_over_the_budget(monkeypatch):
    monkeypatch.setenv("EXPLORER_MAX_TRAIN_GFLOP", "100")
    at = open_page("train")
    errors = [e.value for e in at.error]
    assert any("Not started" in e and "GFLOP" in e and "steps" in e for e in errors), errors
    assert at.button(key="train.start").disabled
