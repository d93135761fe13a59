"""The step pointer's moves (teaching/course.py), without Streamlit: a link, a button, the back button across
pages, leaving, and a class's step, on lesson 1 (steps 1-3 on Overview, 4 on Norm placement, 5 on Layer norms,
11 steps, the summary on the Lessons page)."""

from __future__ import annotations

from teaching.course import LESSONS_PAGE, Move, Pointer, clamp, lesson_move, page_of
from teaching.lessons import by_id

L1 = "minimind_block"
N = len(by_id(L1).steps)


def at(n: int) -> Pointer:
    return Pointer(L1, n)


def test_pages_of_steps_and_the_summary():
    assert [page_of(at(n)) for n in (1, 3, 4, 5)] == ["overview", "overview", "pre-vs-post", "norms"]
    assert page_of(at(N + 1)) == LESSONS_PAGE
    assert page_of(Pointer("no_such_lesson", 1)) is None
    assert clamp(at(99)) == at(N + 1) and clamp(at(-3)) == at(1) and clamp(Pointer("nope", 1)) is None


def test_a_link_opens_its_step_on_its_page():
    # a fresh session opens step 4 by its link while the app starts on Overview: open it, switch to its page
    assert lesson_move(None, at(4), None, False, "overview") == Move(go=at(4), page="pre-vs-post")
    # ... and the run on that page writes the address (no second go: the session is there)
    assert lesson_move(at(4), at(4), None, False, "pre-vs-post") == Move(address=at(4))
    # a link past the end opens the summary
    assert lesson_move(None, at(40), None, False, "overview") == Move(go=at(N + 1), page=LESSONS_PAGE)
    # a link to a step on this page: opened here, the address kept
    assert lesson_move(at(5), at(2), None, False, "overview") == Move(go=at(2), address=at(2))


def test_a_button_move_stands_over_the_address():
    # Next from step 3 (Overview) to step 4: the session moved, the address still names step 3
    assert lesson_move(at(4), at(3), at(3), True, "overview") == Move(page="pre-vs-post")
    # Next within one page: the address follows
    assert lesson_move(at(3), at(2), at(2), True, "overview") == Move(address=at(3))


def test_the_back_button_across_pages_goes_to_the_previous_step():
    # at step 4 (Norm placement), Back in the browser: Streamlit reruns Overview with step 4 in its address
    assert lesson_move(at(4), at(4), at(3), False, "overview") == Move(go=at(3), address=at(3))
    # the same address on another page without a previous step there: nothing moves
    assert lesson_move(at(4), at(4), at(1), False, "norms") == Move()


def test_leaving_clears_the_address_and_nothing_else_moves():
    assert lesson_move(None, None, at(3), True, "overview") == Move(clear_address=True)
    assert lesson_move(None, None, None, False, "overview") == Move()
    assert lesson_move(Pointer("gone_lesson", 2), None, None, True, "overview") == Move(clear_address=True)
