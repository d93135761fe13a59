"""Lessons: ordered steps that set the app up, ask the learner to predict, then reveal the chart with the answer.

A lesson is one TOML file in this folder (``NNN_<id>.toml``, English and Chinese side by side); this module
loads and validates them (no Streamlit at run time). The file format, the settings rules and the answer
functions' interface are described in docs/lessons.md; the answer functions live in :mod:`teaching.answers`
(the registry in ``core``).

A step's identity is a plain value (:func:`step_ref`: lesson id, step number, effective settings), so it can be
stored and sent; :func:`settings_digest` keys the frozen answer key of a step.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from teaching.answers.core import REGISTRY, Answer, StepInputs, distinct, format_option, format_value, options
from teaching.answers import attention, block  # noqa: F401,E402  (lessons 1 to 3's answers)
from teaching.answers import real, training  # noqa: F401,E402  (lessons 4 and 5 register their answers here)
from teaching.answers import interventions  # noqa: F401,E402  (lesson 6's answers)
from teaching.answers import variants  # noqa: F401,E402  (lesson 7's answers)
from teaching.answers import follow  # noqa: F401,E402  (lesson 4's steps on the Follow a token page)
from teaching.answers import compare  # noqa: F401,E402  (the steps that compare two views, A and B)
from teaching.lessons.quality import question_problems
from settings.build import build_parts  # a step's model, as the sidebar builds it
from settings.schema import DEFAULTS, all_presets

FOLDER = Path(__file__).resolve().parent
ROOT = FOLDER.parents[1]  # the repository (teaching/lessons/ -> .)
LANGS = ("en", "zh")
MIN_STEPS, MAX_STEPS, MIN_QUESTIONS = 8, 15, 6
LESSON_KEYS = {"id", "title", "source", "summary", "settings", "steps", "draft"}
STEP_KEYS = {"page", "text", "chart", "show", "settings", "question", "compare"}
QUESTION_KEYS = {"kind", "prompt", "answer", "args", "explain", "concept", "tolerance", "tolerance_abs", "margin",
                 "margin_abs", "wrong", "arithmetic"}
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class LessonError(ValueError):
    """A lesson file that cannot be used; the message names the file and the step."""


@dataclass(frozen=True)
class Question:
    kind: str  # "choice" or "number"
    prompt: dict
    answer: str
    args: dict
    explain: dict
    concept: dict
    tolerance: float | None = None
    tolerance_abs: float | None = None
    margin: float | None = None  # how far (relative) the key's score must beat every other option's
    margin_abs: float | None = None
    wrong: dict = field(default_factory=dict)  # {name: value} a wrong model gives: outside the band
    arithmetic: tuple[str, ...] = ()  # relations the explanation states in words: "{total} = {a} + {b}"

    @property
    def within(self) -> str:
        """A number question's tolerance as every screen states it ("10%" or "0.3"), the same in both languages."""
        return f"{self.tolerance:.0%}" if self.tolerance is not None else f"{self.tolerance_abs:g}"


@dataclass(frozen=True)
class Step:
    number: int  # 1-based
    page: str
    text: dict
    settings: dict  # effective: the lesson's settings with the step's own over them
    chart: tuple[str, ...] = ()  # the charts the question is about: a placeholder until the answer, then the first highlighted
    question: Question | None = None
    show: tuple[str, ...] = ()  # charts (or gated blocks) drawn while the question is open; the rest of the page waits
    compare: dict | None = None  # side B's effective settings (the step's with its ``compare`` table over them): the
    # step opens comparing, A in the sidebar; its question is about the difference (``StepInputs.other``)


@dataclass(frozen=True)
class Lesson:
    id: str
    path: str  # relative to the repository
    title: dict
    source: dict | None  # the tutorial it follows, {en, zh}, or None
    summary: dict
    steps: tuple[Step, ...]
    draft: bool = False

    def step(self, n: int) -> Step:
        return self.steps[min(max(n, 1), len(self.steps)) - 1]

    @property
    def questions(self) -> int:
        return sum(s.question is not None for s in self.steps)


# ---- loading -------------------------------------------------------------------------------------------------
def _text(value: Any, where: str) -> dict:
    if not isinstance(value, dict) or set(value) != set(LANGS) or not all(isinstance(value[k], str) and value[k].strip()
                                                                          for k in LANGS):
        raise LessonError(f"{where}: needs both en and zh text, non-empty (got {value!r:.80})")
    a, b = (set(_FIELD.findall(value[k])) for k in LANGS)
    if a != b:
        raise LessonError(f"{where}: en and zh placeholders differ: {sorted(a ^ b)}")
    return dict(value)


def _unknown(table: dict, allowed: set[str], where: str) -> None:
    extra = set(table) - allowed
    if extra:
        raise LessonError(f"{where}: unknown field(s) {sorted(extra)} (allowed: {sorted(allowed)})")


def _wrong(table: Any, where: str) -> dict:
    if not isinstance(table, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                              for v in table.values()):
        raise LessonError(f"{where}: `wrong` must map names to numbers (got {table!r:.80})")
    return {str(k): float(v) for k, v in table.items()}


def load(path: Path) -> Lesson:
    """Parse and shape-check one lesson file; raises :class:`LessonError` naming the file and step."""
    rel = str(Path(path).resolve().relative_to(ROOT)) if Path(path).resolve().is_relative_to(ROOT) else str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise LessonError(f"{rel}: not valid TOML: {err}") from None
    _unknown(data, LESSON_KEYS, rel)
    lesson_id = data.get("id")
    stem = Path(path).stem.split("_", 1)[-1] if re.match(r"\d+_", Path(path).stem) else Path(path).stem
    if lesson_id != stem:
        raise LessonError(f"{rel}: id {lesson_id!r} must be the file name without its number prefix ({stem!r})")
    base = data.get("settings", {})
    steps = []
    for i, raw in enumerate(data.get("steps", []), 1):
        where = f"{rel} step {i}"
        _unknown(raw, STEP_KEYS, where)
        if "page" not in raw:
            raise LessonError(f"{where}: no page")
        q = raw.get("question")
        question = None
        if q is not None:
            _unknown(q, QUESTION_KEYS, where + " question")
            kind = q.get("kind", "choice")
            if kind not in ("choice", "number"):
                raise LessonError(f"{where}: question kind {kind!r} is not choice or number")
            if "answer" not in q:
                raise LessonError(f"{where}: the question names no answer function")
            if kind == "number" and q.get("tolerance") is None and q.get("tolerance_abs") is None:
                raise LessonError(f"{where}: a number question needs tolerance or tolerance_abs")
            question = Question(kind=kind, prompt=_text(q.get("prompt"), where + " prompt"), answer=q["answer"],
                                args=dict(q.get("args", {})), explain=_text(q.get("explain"), where + " explain"),
                                concept=_text(q.get("concept"), where + " concept"), tolerance=q.get("tolerance"),
                                tolerance_abs=q.get("tolerance_abs"), margin=q.get("margin"),
                                margin_abs=q.get("margin_abs"), wrong=_wrong(q.get("wrong", {}), where),
                                arithmetic=tuple(q.get("arithmetic", ())))
        chart, show = raw.get("chart", ()), raw.get("show", ())
        settings = {**base, **raw.get("settings", {})}
        compare = raw.get("compare")
        if compare is not None and (not isinstance(compare, dict) or not compare):
            raise LessonError(f"{where}: `compare` must be a table of B's settings (got {compare!r:.80})")
        steps.append(Step(number=i, page=raw["page"], text=_text(raw.get("text"), where + " text"),
                          settings=settings, chart=(chart,) if isinstance(chart, str) else tuple(chart),
                          question=question, show=(show,) if isinstance(show, str) else tuple(show),
                          compare={**settings, **compare} if compare else None))
    return Lesson(id=lesson_id, path=rel, title=_text(data.get("title"), rel + " title"), source=_text(data["source"], rel + " source") if "source" in data else None,
                  summary=_text(data.get("summary"), rel + " summary"), steps=tuple(steps),
                  draft=bool(data.get("draft", False)))


def lesson_files(folder: Path = FOLDER) -> list[Path]:
    return sorted(folder.glob("*.toml"))


@lru_cache(maxsize=1)
def load_all() -> tuple[Lesson, ...]:
    """Every lesson of this folder, in file-name order (a broken file raises; ``python -m teaching.lessons check`` names it)."""
    return tuple(load(p) for p in lesson_files())


def by_id(lesson_id: str) -> Lesson | None:
    return next((lesson for lesson in load_all() if lesson.id == lesson_id), None)


# ---- a step's identity -------------------------------------------------------------------------------------------
def step_ref(lesson: Lesson, n: int) -> dict:
    """A plain, JSON-serialisable identity of step ``n`` (1-based): ``{"lesson", "step", "settings"}``."""
    return {"lesson": lesson.id, "step": n, "settings": dict(lesson.step(n).settings)}


def settings_digest(settings: dict) -> str:
    return hashlib.sha1(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:12]


# ---- what the app knows: pages and control keys (read from the source, so a renamed key fails the check) ------
def _pages_list() -> list[tuple[str, str]]:
    """``(url_path, script)`` of every page in explorer.py's PAGES."""
    tree = ast.parse((ROOT / "explorer.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == "PAGES" for t in getattr(node, "targets", [getattr(node, "target", None)])):
            return [(e.elts[2].value, e.elts[0].value) for e in node.value.elts]
    raise LessonError("explorer.py: no PAGES list")


_KEY_ARG = {"control": 2, "translated_choice": 2, "index_slider": 3, "linked_int": 0}


def _keys_in(path: Path) -> set[str]:
    """Control keys drawn in a source file: the key argument of control / translated_choice / index_slider /
    linked_int, and every ``key="..."`` keyword."""
    keys = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", ""))
        pos = _KEY_ARG.get(name)
        if pos is not None and len(node.args) > pos and isinstance(node.args[pos], ast.Constant):
            keys.add(node.args[pos].value)
        if name == "setdefault" and node.args and isinstance(node.args[0], ast.Constant):  # session_state.setdefault
            keys.add(node.args[0].value)
        for kw in node.keywords:
            if kw.arg == "key" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                keys.add(kw.value.value)
    return keys


@lru_cache(maxsize=1)
def app_keys() -> tuple[dict[str, str], set[str], dict[str, set[str]]]:
    """``(pages: url_path -> script, sidebar keys, page keys: url_path -> keys)``."""
    pages = dict(_pages_list())
    sidebar = set(DEFAULTS) | {"cfg.preset", "model.source", "model.checkpoint"}
    for path in (ROOT / "ui").glob("*.py"):
        sidebar |= {k for k in _keys_in(path) if k.split(".")[0] in ("cfg", "input", "model")}
    per_page = {url: set().union(*(_keys_in(f) for f in page_files(script))) for url, script in pages.items()}
    return pages, sidebar, per_page


def page_files(script: str) -> list[Path]:
    """A page's script and the ``ui/`` modules it imports by name (``from ui.train_panel import lab_view``): a page
    may draw its controls and charts there (the Training lab's two panels)."""
    files = [ROOT / script]
    for node in ast.walk(ast.parse(files[0].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ui."):
            path = ROOT / (node.module.replace(".", "/") + ".py")
            if path.exists() and path not in files:
                files.append(path)
    return files


# ---- the answer key --------------------------------------------------------------------------------------------
@dataclass
class Key:
    """A step's question key in both languages: what the app shows and the CLI prints."""

    kind: str
    options: list[dict]  # [{"en": ..., "zh": ...}] (empty for kind "number")
    correct: int | float  # the index of the right option, or the number
    values: dict  # {"en": {placeholder: text}, "zh": {...}}
    highlight: dict = field(default_factory=dict)
    raw: Answer | None = None

    def explanation(self, question: Question, lang: str) -> str:
        return question.explain[lang].format(**self.values[lang])

    def grade(self, question: Question, picked: Any) -> bool:
        """The one grader: the learner's banner, a phone in class and the lecturer's table all call it."""
        if self.kind == "choice":
            return picked == self.correct
        tol = abs(self.correct) * question.tolerance if question.tolerance is not None else question.tolerance_abs
        return picked is not None and abs(float(picked) - self.correct) <= tol

    def to_json(self) -> dict:
        return {"kind": self.kind, "options": self.options, "correct": self.correct, "values": self.values,
                "highlight": self.highlight}


def compute_key(lesson: Lesson, step: Step, inputs: StepInputs) -> Key:
    """Run the step's answer function and shape its result (raises on a broken answer: check reports it)."""
    q = step.question
    fn = REGISTRY.get(q.answer)
    if fn is None:
        raise LessonError(f"no answer function {q.answer!r} (registered: {', '.join(sorted(REGISTRY))})")
    ans = fn(inputs, **q.args)
    if not isinstance(ans, Answer):
        raise LessonError(f"answer function {q.answer!r} returned {type(ans).__name__}, not Answer")
    values = {lang: {k: format_value(v, lang) for k, v in ans.values.items()} for lang in LANGS}
    if q.kind == "number":
        if not isinstance(ans.correct, (int, float)):
            raise LessonError(f"answer function {q.answer!r}: a number question needs a number, got {ans.correct!r}")
        for lang in LANGS:
            values[lang].setdefault("answer", format_value(ans.correct, lang))
        return Key("number", [], float(ans.correct), values, dict(ans.highlight), ans)
    opts, correct = options(ans, f"{lesson.id}:{step.number}")
    labels = ans.option_labels
    for lang in LANGS:
        values[lang].setdefault("answer", format_option(ans.correct, lang, labels))
    shown = [{lang: format_option(o, lang, labels) for lang in LANGS} for o in opts]
    key = Key("choice", shown, correct, values, dict(ans.highlight), ans)
    if not 2 <= len(opts) <= 5:
        raise LessonError(f"answer function {q.answer!r} gave {len(opts)} options (2-5 allowed)")
    if not distinct(opts, labels):
        dup = [o["en"] for o in shown]
        raise LessonError(f"answer function {q.answer!r}: options are not distinct, so not exactly one is correct: {dup}")
    return key


def inputs_for(step: Step, session: dict | None = None, **builders) -> StepInputs:
    """A step's inputs (``builders``: ``settings.build.build_parts``'s, the app passes its caches), and side B's
    (``other``) where the step compares."""
    other = StepInputs(step.compare, lambda: build_parts(step.compare, **builders)) if step.compare else None
    return StepInputs(step.settings, lambda: build_parts(step.settings, **builders), session=session, other=other)


# ---- the check -------------------------------------------------------------------------------------------------
def check_lesson(lesson: Lesson, run_answers: bool = True) -> tuple[list[str], list[Key | None]]:
    """Problems of one lesson (each naming the file and step) and the computed keys (None without a question)."""
    problems: list[str] = []
    pages, sidebar, per_page = app_keys()
    PRESETS = all_presets()  # the tutorials' presets and the 2024-2026 variants (the sidebar's list)

    if not lesson.draft:
        if not MIN_STEPS <= len(lesson.steps) <= MAX_STEPS:
            problems.append(f"{lesson.path}: {len(lesson.steps)} steps ({MIN_STEPS}-{MAX_STEPS} required)")
        if lesson.questions < MIN_QUESTIONS:
            problems.append(f"{lesson.path}: {lesson.questions} questions (at least {MIN_QUESTIONS} required)")
    keys: list[Key | None] = []
    for step in lesson.steps:
        where = f"{lesson.path} step {step.number}"
        if step.page not in pages:
            problems.append(f"{where}: page {step.page!r} is not in explorer.py's PAGES ({', '.join(pages)})")
            keys.append(None)
            continue
        for k in step.compare or ():  # side B is a whole view: the sidebar's keys only
            if k not in step.settings and k not in sidebar:
                problems.append(f"{where}: compare {k!r} is not a sidebar setting (a side holds the sidebar's values)")
        for k in step.settings:
            if k == "preset":
                if step.settings[k] not in PRESETS:
                    problems.append(f"{where}: preset {step.settings[k]!r} is not one of {', '.join(PRESETS)}")
            elif k not in sidebar and k not in per_page[step.page]:
                elsewhere = [p for p, ks in per_page.items() if k in ks]
                hint = f" (it is a control of {', '.join(elsewhere)})" if elsewhere else ""
                problems.append(f"{where}: control {k!r} does not exist on page {step.page!r}{hint}")
        for c in (*step.chart, *step.show):
            if c not in per_page[step.page] and f"{c}.chart" not in per_page[step.page] and not _chart_named(step.page, c):
                problems.append(f"{where}: chart {c!r} is not drawn on page {step.page!r}")
        q = step.question
        if q is None or not run_answers:
            keys.append(None)
            continue
        try:
            key = compute_key(lesson, step, inputs_for(step))
            for lang in LANGS:
                missing = set(_FIELD.findall(q.explain[lang])) - set(key.values[lang])
                if missing:
                    raise LessonError(f"the explanation needs {sorted(missing)}, the answer gives {sorted(key.values[lang])}")
                key.explanation(q, lang)
            problems += [f"{where}: {p}" for p in question_problems(q, key)]
            keys.append(key)
        except Exception as err:  # noqa: BLE001 -- every failure is named with its file and step
            problems.append(f"{where}: {type(err).__name__}: {err}")
            keys.append(None)
    return problems, keys


@lru_cache(maxsize=None)
def _page_source(page: str) -> str:
    pages = dict(_pages_list())
    return "\n".join(f.read_text(encoding="utf-8") for f in page_files(pages[page]))


def _chart_named(page: str, chart: str) -> bool:
    """Whether the page's script (or a ``ui/`` module it imports, :func:`page_files`) names ``chart`` as a chart key
    (``chart(fig, df, "attn.heatmap")``) or a block's (``revealed("train.poem")``)."""
    return f'"{chart}"' in _page_source(page)


def summary_json(lesson: Lesson, keys: list[Key | None]) -> dict:
    steps = []
    for step, key in zip(lesson.steps, keys):
        q = step.question
        steps.append({"page": step.page, "question": dict(q.prompt) if q else None,
                      "options": (key.options or None) if key else None,
                      "answer": key.correct if key else None})
    return {"id": lesson.id, "title": dict(lesson.title), "steps": steps}
