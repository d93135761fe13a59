"""The lesson check's question-quality rules: a question a careful student cannot argue with.

Three rules, each run on a computed key by :func:`question_problems` (``python -m teaching.lessons check`` names the file
and step of every problem; docs/lessons.md explains them to lesson writers):

- **separated options** (kind "choice"): when the answer function gives ``scores`` (one per option, higher
  wins), the key must beat every other option, and the best candidate not offered (``runner_up``), by more than
  the margin the question states (``margin``, relative to the key's score, or ``margin_abs``) and by more than
  the last printed digit of the key's score at the app's precision (3 significant digits). An answer with
  scores needs a stated margin; a stated margin needs scores.
- **a band that excludes wrong models** (kind "number"): every value a wrong model of the concept gives (the
  question's ``wrong = {name = value}`` and the answer's ``wrong``) must fall outside the accepted band.
- **printed arithmetic closes**: every chain ``a + b − c = d``, ``a × b = c``, ``a / b = c`` in the rendered
  explanation (both languages), and every relation the question declares in ``arithmetic`` (a template such as
  ``"{total} = {blocks} + {embed} + {embed} + {final_norm}"`` for a sum the prose states in words, or
  ``"{ratio} = {last} / {second}"`` for an "N×"), is recomputed from its printed terms. Each printed number
  stands for the interval its last digit allows (``3.99`` is 3.985 .. 3.995, ``12 %`` is 0.115 .. 0.125, an
  integer is exact); the result's interval, computed from the terms' with interval arithmetic, must
  meet the printed result's.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from teaching.answers.core import format_value

if TYPE_CHECKING:  # the loader imports this module; the types only for readers
    from teaching.lessons import Key, Question

LANGS = ("en", "zh")
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?(?:\s?%)?"
_OP = r"(?:\+|−|×|·|\*|/|÷|\s-\s)"
# a chain: number (op number)+ = number; not part of a word, a formula (√16, x^2, T-1) or a longer expression
_CHAIN = re.compile(rf"(?<![\w.^√/×*·(+−-])\s*({_NUM}(?:\s*{_OP}\s*{_NUM})+)\s*=\s*({_NUM})(?![\w.(]|\s*{_OP}\s*\d)")
_CHAIN_BACK = re.compile(rf"(?<![\w.^√/×*·(+−-])\s*({_NUM})\s*=\s*({_NUM}(?:\s*{_OP}\s*{_NUM})+)(?![\w.(]|\s*{_OP}\s*\d)")
_TOKEN = re.compile(rf"{_NUM}|{_OP}")


def printed_number(text: str) -> tuple[float, float]:
    """``(value, half_unit)`` of a printed number: ``"3.99"`` -> (3.99, 0.005), ``"1.2e+03"`` -> (1200, 50),
    ``"12 %"`` -> (0.12, 0.005); an integer (not a percentage) is exact (``"8,752"`` -> (8752, 0): the app prints counts as integers
    and any other number with a decimal point or an exponent, :func:`teaching.answers.core.format_value`)."""
    t = text.replace(",", "").strip()
    scale = 1.0
    if t.endswith("%"):
        t, scale = t[:-1].strip(), 0.01
    mantissa, _, exp = t.lower().partition("e")
    if "." not in mantissa and not exp and scale == 1.0:
        return float(t), 0.0
    decimals = len(mantissa.partition(".")[2])
    unit = 10.0 ** (-decimals) * 10.0 ** int(exp or 0)
    return float(t) * scale, unit * scale / 2


def _interval(text: str) -> tuple[float, float]:
    v, h = printed_number(text)
    return v - h, v + h


def _combine(a: tuple[float, float], op: str, b: tuple[float, float]) -> tuple[float, float] | None:
    """Interval arithmetic; None when a divisor's interval holds 0."""
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op in ("−", "-"):
        return a[0] - b[1], a[1] - b[0]
    if op in ("/", "÷"):
        if b[0] <= 0 <= b[1]:
            return None
        b = (1 / b[1], 1 / b[0])
    corners = [x * y for x in a for y in b]
    return min(corners), max(corners)


def evaluate(expression: str) -> tuple[float, float] | None:
    """The interval of a printed ``a op b op c`` (× and / before + and −); None if it cannot be bounded."""
    tokens = [t.strip() for t in _TOKEN.findall(expression)]
    terms: list[tuple[str, tuple[float, float]]] = []  # (sign, product interval)
    sign, current, pending = "+", _interval(tokens[0]), None
    for tok in tokens[1:]:
        if pending is None:
            pending = tok
            continue
        value = _interval(tok)
        if pending in ("+", "−", "-"):
            terms.append((sign, current))
            sign, current = pending, value
        else:
            current = _combine(current, pending, value)
            if current is None:
                return None
        pending = None
    terms.append((sign, current))
    total = (0.0, 0.0)
    for s, iv in terms:
        total = _combine(total, s, iv)
    return total


def chains(text: str) -> list[tuple[str, str]]:
    """Every printed ``expression = result`` (or ``result = expression``) of a text, as ``(expression, result)``."""
    return [(m.group(1), m.group(2)) for m in _CHAIN.finditer(text)] + \
        [(m.group(2), m.group(1)) for m in _CHAIN_BACK.finditer(text)]


def chain_closes(expression: str, result: str) -> bool:
    got = evaluate(expression)
    if got is None:
        return True
    lo, hi = _interval(result)
    eps = 1e-9 * max(abs(lo), abs(hi), 1.0)
    return got[0] <= hi + eps and lo <= got[1] + eps


def arithmetic_problems(question: "Question", key: "Key") -> list[str]:
    """The printed sums, products and ratios (and the declared ones) that do not close, per language."""
    out = []
    for lang in LANGS:
        text = key.explanation(question, lang)
        found = [(e, r, "") for e, r in chains(text)]
        for template in question.arithmetic:
            rendered = template.format(**key.values[lang])
            got = chains(rendered)
            if len(got) != 1:
                out.append(f"declared arithmetic {template!r} reads {rendered!r} ({lang}): not one `a op b = c`")
                continue
            found.append((*got[0], " (declared)"))
        for expression, result, how in found:
            if not chain_closes(expression, result):
                iv = evaluate(expression)
                out.append(f"explanation ({lang}) prints {expression} = {result}{how}, but its terms give "
                           f"{_show(iv)}")
    return out


def _show(iv: tuple[float, float] | None) -> str:
    if iv is None:
        return "no bound"
    return f"{iv[0]:.6g}" if math.isclose(iv[0], iv[1]) else f"{iv[0]:.6g} .. {iv[1]:.6g}"


def display_unit(value: float) -> float:
    """The last digit the app prints of ``value`` (3 significant digits): two values closer than this may read
    the same on the chart."""
    return 0.0 if value == 0 or not math.isfinite(value) else 10.0 ** (math.floor(math.log10(abs(value))) - 2)


def choice_problems(question: "Question", key: "Key") -> list[str]:
    """The options the key does not beat by the stated margin and the display precision."""
    scores = key.raw.scores if key.raw is not None else None
    stated = question.margin is not None or question.margin_abs is not None
    if scores is None:
        return ["the question states a margin but its answer function gives no scores"] if stated else []
    if not stated:
        return ["the answer function scores its options: the question must state `margin` or `margin_abs`"]
    options = [key.raw.correct, *key.raw.distractors]
    if len(scores) != len(options):
        return [f"the answer gives {len(scores)} scores for {len(options)} options"]
    best = float(scores[0])
    need = max(abs(best) * (question.margin or 0.0), question.margin_abs or 0.0, display_unit(best))
    rivals = [(format_value(o, "en"), float(s)) for o, s in zip(options[1:], scores[1:])]
    if key.raw.runner_up is not None:
        rivals.append(("the best option not offered", float(key.raw.runner_up)))
    return [f"the key {format_value(options[0], 'en')!r} ({best:.6g}) does not beat {name!r} ({score:.6g}) by more "
            f"than {need:.3g}" for name, score in rivals if not best - score > need]


def band_problems(question: "Question", key: "Key") -> list[str]:
    """The wrong models' values the number question's band accepts."""
    wrong = {**question.wrong, **(key.raw.wrong if key.raw is not None else {})}
    if key.kind != "number":
        return [f"`wrong` values are for number questions ({sorted(wrong)})"] if wrong else []
    return [f"the band accepts {value:.6g}, what {name!r} gives (key {key.correct:.6g})"
            for name, value in wrong.items() if key.grade(question, value)]


def question_problems(question: "Question", key: "Key") -> list[str]:
    """Every quality problem of one computed question (empty when it is watertight)."""
    return [*(choice_problems(question, key) if key.kind == "choice" else []), *band_problems(question, key),
            *arithmetic_problems(question, key)]
