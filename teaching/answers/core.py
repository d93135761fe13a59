"""The answer keys of the lessons: one registered function per kind of question (the lesson files name them).

A lesson step (``teaching/lessons/*.toml``) asks a question whose answer is computed from the model at the step's
settings: ``answer = "tying_savings"`` names a function registered here with :func:`answer`. It takes a
:class:`StepInputs` (the step's config, model, input, tokens; built by the caller: the app hands over the very
model the page shows, ``python -m teaching.lessons check`` builds the same one) and the step's ``args``, and returns an
:class:`Answer`: the correct option, distractors (each from a plausible wrong formula or a neighbouring value),
the numbers the explanation quotes, and what to highlight in the chart. The functions are thin: they call the
analysis functions the pages use, so the key and the chart cannot disagree.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping

import torch

from engine import CausalLM, ModelConfig
from engine.model import CausalLMOutput
from engine.tokenizer import TextTokenizer

Option = int | float | str | dict  # a dict is {"en": ..., "zh": ...}
REGISTRY: dict[str, Callable[..., "Answer"]] = {}


def answer(name: str) -> Callable:
    """Register an answer function under ``name`` (the ``answer =`` of a lesson step)."""

    def register(fn: Callable[..., Answer]) -> Callable[..., Answer]:
        if name in REGISTRY:
            raise ValueError(f"answer function {name!r} registered twice")
        REGISTRY[name] = fn
        return fn

    return register


@dataclass(frozen=True)
class Answer:
    """A question's key at one step's settings.

    ``correct``: the right option (kind "choice") or the number (kind "number"); ``distractors``: wrong options;
    ``values``: the numbers the explanation's ``{placeholders}`` quote; ``highlight``: ``{"x": ...}``, ``{"y": ...}``
    or both, the part of the step's chart to mark after the answer; ``option_labels``: a ``{"en", "zh"}`` template
    with one ``{}`` applied to every option (e.g. "layer {}").

    What the lesson check's quality rules read (docs/lessons.md, :mod:`lessons.quality`): ``scores``, one number per
    option in the order ``[correct, *distractors]``, what the chart measures for it, higher wins (a "smallest"
    question negates; a classification gives ``-distance`` of the measured value to each option's interval,
    :func:`interval_scores`); ``runner_up``, the best score among candidates that are not offered; ``wrong``
    (number questions), ``{name: value}`` that a wrong model of the concept would give.
    """

    correct: Option
    distractors: list = field(default_factory=list)
    values: dict = field(default_factory=dict)
    highlight: dict = field(default_factory=dict)
    option_labels: dict | None = None
    scores: list | None = None
    runner_up: float | None = None
    wrong: dict = field(default_factory=dict)


def interval_scores(measured: float, intervals: list[tuple[float, float]]) -> list[float]:
    """``-distance`` of ``measured`` to each ``(low, high)`` interval (0 inside): the scores of a classification's
    options, so the key beats a neighbour by how far the measured value is from their shared boundary."""
    return [-max(low - measured, measured - high, 0.0) for low, high in intervals]


def nearest_scores(measured: float, opts: list[float]) -> list[float]:
    """``-|option - measured|``: the scores of numeric options when the key is the one nearest the measurement."""
    return [-abs(float(o) - measured) for o in opts]


class StepInputs:
    """What an answer function reads: the step's effective settings and, built on first use, its model and input.

    ``build`` is the caller's: a function returning ``(config, model, input_ids, tokens, tokenizer)`` for the
    settings. ``other``: side B's inputs, built the same way, where the step compares two views (A is this one).
    ``session`` holds read-only things only the running app has (the Training lab's run); it is empty outside the
    app.
    """

    def __init__(self, settings: Mapping[str, Any], build: Callable[[], tuple], session: Mapping | None = None,
                 other: "StepInputs | None" = None):
        self.settings = dict(settings)
        self._build = build
        self.session = dict(session or {})
        self.other = other  # side B of a step that compares (its ``compare`` settings); None otherwise

    @cached_property
    def _parts(self) -> tuple:
        return self._build()

    @property
    def config(self) -> ModelConfig:
        return self._parts[0]

    @property
    def model(self) -> CausalLM:
        return self._parts[1]

    @property
    def input_ids(self) -> torch.Tensor:
        return self._parts[2]

    @property
    def tokens(self) -> list[str]:
        return self._parts[3]

    @property
    def tokenizer(self) -> TextTokenizer | None:
        return self._parts[4]

    @cached_property
    def _trace(self) -> CausalLMOutput:
        from analysis.trace import run_trace

        return run_trace(self.model, self.input_ids)

    def trace(self) -> CausalLMOutput:
        """The forward with every activation and attention pattern (what the pages' ``trace(ctx)`` shows)."""
        return self._trace

    def setting(self, key: str, default: Any) -> Any:
        return self.settings.get(key, default)


# ---- formatting (the same in the app and in ``python -m teaching.lessons check --json``) --------------------------------
def format_value(value: Any, lang: str) -> str:
    """An option or an explanation value as text: ints with thousands separators, floats to 3 significant
    digits, a ``{"en", "zh"}`` dict in ``lang``."""
    if isinstance(value, dict):
        return str(value.get(lang, value.get("en", "")))
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "—"
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:.3g}"
    return str(value)


def format_option(value: Any, lang: str, labels: dict | None = None) -> str:
    text = format_value(value, lang)
    return labels[lang].replace("{}", text) if labels else text


def options(key: Answer, seed: str) -> tuple[list, int]:
    """The options in the order shown and the index of the correct one: ascending when every option is a
    number, else a fixed shuffle seeded by ``seed`` (the lesson and step), so the right one is not always first.
    Duplicates (after formatting) are kept here: the lesson check reports them."""
    opts = [key.correct, *key.distractors]
    if all(isinstance(o, (int, float)) and not isinstance(o, bool) for o in opts):
        order = sorted(range(len(opts)), key=lambda i: (opts[i], i))
    else:
        order = list(range(len(opts)))
        random.Random(seed).shuffle(order)
    return [opts[i] for i in order], order.index(0)


def distinct(opts: list, labels: dict | None = None) -> bool:
    """Whether every option reads differently in both languages."""
    return all(len({format_option(o, lang, labels) for o in opts}) == len(opts) for lang in ("en", "zh"))


class NeedsRun(Exception):
    """Raised by an answer function whose key comes from a run this session has not finished yet (the Training
    lab's lesson: predict, then start the run). ``what`` is ``"train"`` or ``"race"``; ``options`` are every
    option of the question (the key's, once the run is there: the same set, so the learner can pick before it
    exists), ``option_labels`` as in :class:`Answer`."""

    def __init__(self, what: str, options: list | tuple = (), option_labels: dict | None = None):
        super().__init__(f"needs a finished {what} run")
        self.what = what
        self.options = list(options)
        self.option_labels = option_labels


# ---- option helpers shared by the answer modules ---------------------------------------------------------------
def bi(en: str, zh: str) -> dict:
    """An option or a value in both languages: ``{"en": en, "zh": zh}``."""
    return {"en": en, "zh": zh}


def others(correct, candidates, n: int = 3) -> list:
    """Up to ``n`` distinct candidates other than ``correct`` (in order)."""
    out = []
    for c in candidates:
        if c != correct and c not in out:
            out.append(c)
    return out[:n]
