"""`python -m teaching.lessons check`: every lesson file valid, every answer key computed; a broken file is named with its
step; `--json` has the shape the issue specifies."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from teaching import lessons

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def check_json():
    run = subprocess.run([sys.executable, "-m", "teaching.lessons", "check", "--json"], cwd=ROOT, capture_output=True,
                         text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=2400)  # SmolLM2 keys on 2 busy cores
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_every_lesson_passes_and_json_has_the_issue_shape(check_json):
    assert [d["id"] for d in check_json] == [lesson.id for lesson in lessons.load_all()]
    for d in check_json:
        assert set(d) == {"id", "title", "steps"} and set(d["title"]) == {"en", "zh"}
        for s in d["steps"]:
            assert set(s) == {"page", "question", "options", "answer"}
            if s["question"] is None:
                assert s["options"] is None and s["answer"] is None
            elif s["options"] is not None:  # a choice: the index of exactly one option
                assert 2 <= len(s["options"]) <= 5 and 0 <= s["answer"] < len(s["options"])
                assert len({o["en"] for o in s["options"]}) == len(s["options"])


def _write(tmp_path, body: str) -> Path:
    path = tmp_path / "090_broken.toml"
    path.write_text('id = "broken"\ntitle = {en = "T", zh = "标题"}\nsummary = {en = "S", zh = "摘要"}\ndraft = true\n'
                    + body, encoding="utf-8")
    return path


STEP = '[[steps]]\npage = "{page}"\ntext = {{en = "{en}", zh = "看这里"}}\n'
QUESTION = ('[steps.question]\nprompt = {{en = "Q", zh = "问"}}\nanswer = "{answer}"\n'
            'explain = {{en = "{explain}", zh = "省下 {{saved}}"}}\nconcept = {{en = "c", zh = "概念"}}\n')


@pytest.mark.parametrize("body, message", [
    (STEP.format(page="nowhere", en="x"), "step 1: page 'nowhere'"),
    (STEP.format(page="overview", en="x") + '[steps.settings]\n"attn.layer" = 1\n', "control 'attn.layer' does not exist on page 'overview'"),
    (STEP.format(page="overview", en="x") + QUESTION.format(answer="no_such", explain="saved {saved}"), "step 1: LessonError: no answer function 'no_such'"),
    (STEP.format(page="overview", en="x") + QUESTION.format(answer="tying_savings", explain="saved {savings}"), "placeholders differ"),
    (STEP.format(page="overview", en="x {n}"), "step 1 text: en and zh placeholders differ"),
])
def test_a_broken_lesson_is_named_with_file_and_step(tmp_path, body, message):
    path = _write(tmp_path, body)
    try:
        lesson = lessons.load(path)
    except lessons.LessonError as err:
        problems = [str(err)]
    else:
        problems, _ = lessons.check_lesson(lesson)
    assert any(message in p and "090_broken.toml" in p for p in problems), problems


def test_cli_exits_non_zero_on_a_problem(tmp_path, monkeypatch):
    from teaching.lessons.__main__ import main

    _write(tmp_path, STEP.format(page="nowhere", en="x"))
    monkeypatch.setattr(lessons, "lesson_files", lambda folder=None: [tmp_path / "090_broken.toml"])
    assert main(["check"]) == 1


def test_step_identity_is_a_plain_value():
    lesson = lessons.load_all()[0]
    ref = lessons.step_ref(lesson, 1)
    assert json.loads(json.dumps(ref)) == ref and ref["lesson"] == lesson.id and ref["step"] == 1
    assert lessons.settings_digest(ref["settings"]) == lessons.settings_digest(dict(ref["settings"]))
