"""SmolLM2's cache is converted in the background from the server's first run: the first page does not wait for
it, the conversion starts once, and the model picker waits on that job with its progress instead of starting a
second one. The conversion itself is replaced by a fake that reports progress and waits for the test."""

from __future__ import annotations

import threading

import pytest

from engine.checkpoints import CheckpointError
from tests.page_helpers import open_page
from ui import smollm2
from ui.i18n import t

NAME = "smollm2-135m"


class FakeConversion:
    """Stands in for ``ensure_converted``: reports a stage, then waits for ``gate`` (or fails with ``error``)."""

    def __init__(self, error: Exception | None = None):
        self.calls = 0
        self.gate = threading.Event()
        self.reported = threading.Event()  # the stage was reported (a loaded machine starts the thread late)
        self.error = error

    def __call__(self, name, progress=None, cache_root=None):
        assert name == NAME
        self.calls += 1
        progress(3, 8, "tensors")
        self.reported.set()
        assert self.gate.wait(120), "the test never released the conversion"
        if self.error is not None:
            raise self.error


@pytest.fixture
def fake(monkeypatch):
    conversion = FakeConversion()
    monkeypatch.setattr(smollm2, "ensure_converted", conversion)
    monkeypatch.setattr(smollm2, "gguf_model_available", lambda name: True)
    monkeypatch.setattr(smollm2, "cache_ready", lambda name: True)
    monkeypatch.setattr(smollm2, "_CONVERSIONS", {})
    monkeypatch.setattr(smollm2, "_started", False)
    yield conversion
    conversion.gate.set()  # never leave a thread waiting


class RecordingBar:
    """``st.progress`` stand-in: records every text it shows; its first update releases the fake conversion."""

    def __init__(self, gate: threading.Event):
        self.texts, self.gate, self.emptied = [], gate, False

    def __call__(self, value, text=""):
        self.texts.append(text)
        return self

    def progress(self, value, text=""):
        self.texts.append(text)
        self.gate.set()

    def empty(self):
        self.emptied = True


def test_the_picker_waits_on_the_one_background_conversion(fake, monkeypatch):
    smollm2.start_background_conversions()
    smollm2.start_background_conversions()  # app.py calls it on every run
    job = smollm2.background_conversion(NAME)
    assert not job.done.is_set()  # still converting: the caller was not made to wait
    assert fake.reported.wait(30)  # the job has said where it is (the bar below must show it)
    bar = RecordingBar(fake.gate)
    monkeypatch.setattr(smollm2.st, "progress", bar)
    smollm2.prepare_with_progress(NAME, poll_s=0.01)  # a user picks SmolLM2 meanwhile: waits with the bar
    assert job.done.is_set() and fake.calls == 1  # the job the server started, not a second conversion
    assert t("smollm2.stage.tensors", done=3, total=8) in bar.texts and bar.emptied
    shown = len(bar.texts)  # the bar, then one update per poll until the job ends (more than one on a slow machine)
    smollm2.prepare_with_progress(NAME)  # converted: returns at once, no bar, no new conversion
    assert fake.calls == 1 and len(bar.texts) == shown


def test_a_failed_conversion_is_reported_to_the_picker_and_retried(fake, monkeypatch):
    fake.error = CheckpointError("disk full")
    monkeypatch.setattr(smollm2.st, "progress", RecordingBar(fake.gate))
    with pytest.raises(CheckpointError, match="disk full"):
        smollm2.prepare_with_progress(NAME, poll_s=0.01)
    fake.error = None
    smollm2.prepare_with_progress(NAME, poll_s=0.01)  # the next pick starts a fresh conversion
    assert fake.calls == 2


def test_the_first_page_does_not_wait_for_the_conversion(fake):
    at = open_page()  # app.py, the Overview on the random-init model, while the fake conversion is blocked
    assert not at.exception, at.exception
    assert at.get("plotly_chart")
    job = smollm2._CONVERSIONS[NAME]
    assert fake.calls == 1 and not job.done.is_set()  # started by the first run, still running after the page
    fake.gate.set()
    assert job.done.wait(30) and job.error is None
