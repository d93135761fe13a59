"""The step pointer: where a session is in a lesson, and the one rule that moves it (no Streamlit).

A session is at one :class:`Pointer` (a lesson and a step; ``step = N + 1`` is the lesson's summary on the
Lessons page) or at none. The address bar (a link, the browser's back button) or a button of the session can
ask it to move; :func:`lesson_move` decides what moves, as a pure function of what the session knows, so that the
rule is read (and tested) in one place. (A class's students are not sessions: their phones show the class's step
on the phone page; a second lecturer session takes the class's step through the same ``go``.)

``ui/teaching/`` carries a :class:`Move` out: it opens the step (``ui.teaching.steps.go``: the step's settings),
switches to the page and writes the address. Nothing here reads a session, a cookie or the store.
"""

from __future__ import annotations

from dataclasses import dataclass

from teaching import lessons

LESSONS_PAGE = "lessons"  # the Lessons page's url path: a lesson's summary (step N + 1) is shown there


@dataclass(frozen=True)
class Pointer:
    """A lesson (its id) and a step number (1..N; N + 1: the summary)."""

    lesson: str
    step: int

    @classmethod
    def of(cls, value: dict | None) -> Pointer | None:
        """From the session's ``{"lesson": id, "step": n}`` (or None)."""
        return cls(value["lesson"], int(value["step"])) if value else None

    def as_dict(self) -> dict:
        return {"lesson": self.lesson, "step": self.step}


@dataclass(frozen=True)
class Move:
    """What a run does to the session's place: open ``go`` (its settings applied before any widget), show
    ``page``, and write ``address`` into the address bar (``clear_address``: remove ``lesson``/``step``)."""

    go: Pointer | None = None
    page: str | None = None
    address: Pointer | None = None
    clear_address: bool = False


def page_of(pointer: Pointer) -> str | None:
    """The url path of the page that shows ``pointer``: the step's page, or the Lessons page for the summary."""
    lesson = lessons.by_id(pointer.lesson)
    if lesson is None:
        return None
    return LESSONS_PAGE if pointer.step > len(lesson.steps) else lesson.step(pointer.step).page


def clamp(pointer: Pointer) -> Pointer | None:
    """``pointer`` with its step in 1..N + 1, or None for an unknown lesson."""
    lesson = lessons.by_id(pointer.lesson)
    if lesson is None:
        return None
    return Pointer(lesson.id, min(max(1, pointer.step), len(lesson.steps) + 1))


def lesson_move(active: Pointer | None, url: Pointer | None, prev: Pointer | None, moved: bool,
                here: str) -> Move:
    """A run's move, from the session's step (``active``; ``prev``: the step before it), the address bar's
    (``url``: a known lesson, else None), whether a button of the session moved it this run (``moved``) and the
    page the run is on (``here``).

    - a button moved the session: its step stands; the run goes to that step's page;
    - the address names another step than the session's (a link, the back or forward button): go there;
    - the address names the session's step on another page: the back button from a step on another page
      (Streamlit wrote the new step into the old page's address before it switched), so the previous step;
    - no step open: a button that left the lesson clears the address.
    """
    if not moved and url is not None and url != active:
        return _settle(clamp(url), True, here, first_go=True)
    if not moved and url is not None and url == active and page_of(url) != here:
        if prev is not None and prev.lesson == url.lesson and page_of(prev) == here:
            return _settle(prev, True, here, first_go=True)
    if active is None or page_of(active) is None:
        return Move(clear_address=moved)
    return _settle(active, moved, here, address=url is not None)


def _settle(at: Pointer | None, moved: bool, here: str, first_go: bool = False, address: bool = False) -> Move:
    if at is None:
        return Move()
    page = page_of(at)
    return Move(go=at if first_go else None, page=page if moved and page != here else None,
                address=at if page == here and (moved or address) else None)
