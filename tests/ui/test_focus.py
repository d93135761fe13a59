"""Which chart the focus view shows (ui.focus.in_focus): the lesson step's chart on its page, else the chart
chosen on its page, else the page's main chart; nothing while the view is off. Session state and the open lesson
step are stand-ins (a dict and a fake step)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import ui.focus as focus


@pytest.fixture
def state(monkeypatch):
    session: dict = {}
    monkeypatch.setattr(focus.st, "session_state", session)
    step = {"found": None}
    monkeypatch.setattr(focus, "active_step", lambda: step["found"])

    def lesson_chart(key: str | None) -> None:
        step["found"] = None if key is None else (object(), SimpleNamespace(chart=[key]))

    return session, lesson_chart


def test_off_by_default_and_after_close(state):
    session, _ = state
    assert not focus.in_focus("attn.heatmap", main=True)
    focus._open("attn.heatmap")
    assert focus.in_focus("attn.heatmap", main=True)
    focus.close()
    assert not focus.in_focus("attn.heatmap", main=True) and focus.chosen() == ""


def test_the_chart_chosen_on_its_page(state):
    focus._open("attn.entropy")  # a chart that is not the page's main one
    assert focus.in_focus("attn.entropy", main=False)
    assert not focus.in_focus("attn.heatmap", main=True)  # its page's main chart stays on the page


def test_another_page_shows_its_main_chart(state):
    focus._open("attn.heatmap")
    assert focus.in_focus("lens.heatmap", main=True)
    assert not focus.in_focus("lens.other", main=False)


def test_a_lesson_step_shows_its_chart(state):
    _, lesson_chart = state
    focus._open("lens.heatmap")
    lesson_chart("attn.entropy")  # PageDown moved the lesson to a step about the attention page's entropy chart
    assert focus.in_focus("attn.entropy", main=False)
    assert not focus.in_focus("attn.heatmap", main=True)
    lesson_chart("norms.residual")  # a step on another page: this page falls back to the chosen / main rule
    assert focus.in_focus("lens.heatmap", main=True)
