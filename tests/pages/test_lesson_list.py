"""The Lessons list says where each lesson stands: a lesson whose summary was reached reads as done, with its score
and a way back to the summary, not as "continue at step 11"."""

from __future__ import annotations

from teaching.lessons import ROOT, load
from tests.page_helpers import open_page
from ui.strings.lesson_steps import EN, ZH
from ui.teaching.steps import SEAT_KEY, LessonSeat, Progress


def test_a_finished_lesson_reads_as_done_with_its_score():
    lesson = load(ROOT / "teaching/lessons/010_minimind_block.toml")
    asked = [s.number for s in lesson.steps if s.question]
    answers = {str(n): {"picked": 0, "right": i < 3} for i, n in enumerate(asked)}  # 3 right
    done = {lesson.id: Progress(len(lesson.steps), answers, done=True)}
    for lang, strings in (("en", EN), ("zh", ZH)):
        at = open_page("lesson_list", lang=lang, **{SEAT_KEY: LessonSeat(progress=done)})
        assert not at.exception
        labels = [b.label for b in at.button if str(b.key) == f"lessons.open.{lesson.id}"]
        assert labels == [strings["lessons.see_summary"]]
        done_line = strings["lessons.done"].format(right=3, questions=lesson.questions)
        assert done_line in [c.value for c in at.caption]
