"""The lesson check's question-quality rules (:mod:`lessons.quality`): small hand-made lessons that break each rule
are named with their file and step; the trend rule of :mod:`analysis.depth` on the issue's profiles."""

import numpy as np
import pytest

from teaching import lessons
from analysis import depth
from teaching.answers.core import REGISTRY, Answer, interval_scores, nearest_scores
from teaching.lessons import quality

HEAD = 'id = "broken"\ntitle = {en = "T", zh = "标题"}\nsummary = {en = "S", zh = "摘要"}\ndraft = true\n'
STEP = '[[steps]]\npage = "overview"\ntext = {en = "Look", zh = "看这里"}\n[steps.question]\n'


def _question(answer: str, explain_en: str, explain_zh: str, extra: str = "") -> str:
    return (STEP + f'prompt = {{en = "Q", zh = "问"}}\nanswer = "{answer}"\nconcept = {{en = "c", zh = "概念"}}\n'
            f'explain = {{en = "{explain_en}", zh = "{explain_zh}"}}\n' + extra)


@pytest.fixture
def answers():
    """Register tiny answer functions for the hand-made lessons (removed afterwards)."""
    made = {
        "q_tie": lambda s: Answer(correct="A", distractors=["B", "C"], scores=[0.0625164, 0.0625116, 0.01]),
        "q_clear": lambda s: Answer(correct="A", distractors=["B"], scores=[0.9, 0.3], runner_up=0.85),
        "q_runner": lambda s: Answer(correct="A", distractors=["B"], scores=[0.7855, 0.3], runner_up=0.7852),
        "q_rise": lambda s: Answer(correct=5.19, values={"other": 4.77}, wrong={"another head": 4.77}),
        "q_sum": lambda s: Answer(correct=8752, distractors=[7776],
                                  values={"total": 8752, "blocks": 7776, "embed": 480, "norm": 16}),
    }
    REGISTRY.update(made)
    yield made
    for name in made:
        REGISTRY.pop(name)


def _problems(tmp_path, body: str) -> list[str]:
    path = tmp_path / "090_broken.toml"
    path.write_text(HEAD + body, encoding="utf-8")
    problems, _ = lessons.check_lesson(lessons.load(path))
    return problems


def _named(problems: list[str], text: str) -> bool:
    return any(text in p and "090_broken.toml step 1:" in p for p in problems)


def test_a_tie_is_named(tmp_path, answers):
    problems = _problems(tmp_path, _question("q_tie", "A", "甲", "margin = 0.05\n"))
    assert _named(problems, "does not beat 'B'"), problems
    assert not _named(problems, "'C'"), problems  # 0.01 is far below: not a rival


def test_an_unoffered_runner_up_within_the_margin_is_named(tmp_path, answers):
    assert _named(_problems(tmp_path, _question("q_runner", "A", "甲", "margin_abs = 0.01\n")),
                  "does not beat 'the best option not offered'")
    assert _problems(tmp_path, _question("q_clear", "A", "甲", "margin = 0.05\n")) == []


def test_scores_need_a_stated_margin_and_a_margin_needs_scores(tmp_path, answers):
    assert _named(_problems(tmp_path, _question("q_clear", "A", "甲")), "must state `margin`")
    assert _named(_problems(tmp_path, _question("tying_savings", "{saved}", "{saved}", "margin = 0.1\n")),
                  "gives no scores")


def test_a_band_that_admits_a_listed_wrong_hypothesis_is_named(tmp_path, answers):
    number = 'kind = "number"\n'
    wide = _problems(tmp_path, _question("q_rise", "{answer}", "{answer}", number + "tolerance = 0.3\n"))
    assert _named(wide, "the band accepts 4.77, what 'another head' gives"), wide
    assert _problems(tmp_path, _question("q_rise", "{answer}", "{answer}", number + "tolerance = 0.05\n")) == []
    listed = _problems(tmp_path, _question("q_rise", "{answer}", "{answer}",
                                           number + "tolerance = 0.05\nwrong = {ln_v = 5.2}\n"))
    assert _named(listed, "what 'ln_v' gives"), listed


def test_an_explanation_whose_printed_arithmetic_does_not_close_is_named(tmp_path, answers):
    bad = _problems(tmp_path, _question("q_sum", "{blocks} + {embed} + {embed} = {total}",
                                        "{blocks} + {embed} + {embed} = {total}", "margin = 0.1\n"))
    assert _named(bad, "explanation (en) prints 7,776 + 480 + 480 = 8,752") and _named(bad, "explanation (zh)")
    declared = 'arithmetic = ["{total} = {blocks} + {embed} + {embed}"]\n'
    words = _problems(tmp_path, _question("q_sum", "{total}: blocks {blocks}, the rest {embed} each",
                                          "共 {total}：块 {blocks}，其余各 {embed}", declared))
    assert _named(words, "(declared)"), words
    fixed = 'arithmetic = ["{total} = {blocks} + {embed} + {embed} + {norm}"]\n'
    assert _problems(tmp_path, _question("q_sum", "{total} = {blocks} + {embed} + {embed} + {norm}",
                                         "{total} = {blocks} + {embed} + {embed} + {norm}", fixed)) == []


@pytest.mark.parametrize("text, closes", [
    ("7,776 + 480 + 480 = 8,736", True), ("7,776 + 480 + 480 = 8,752", False),
    ("8,752 = 7,776 + 480 + 480 + 16", True), ("5.19 + 1.78 = 6.97", True), ("5.19 + 1.78 = 7.01", False),
    ("0.0770 / 0.0745 = 1.03", True), ("0.0770 / 0.0745 = 1.05", False), ("30 × 16 = 480", True),
    ("9 / 36 = 25 %", True), ("9 / 36 = 38 %", False), ("2 + 3 × 4 = 14", True), ("6.75 − 5.19 = 1.56", True),
])
def test_printed_chains_are_recomputed_to_the_printed_precision(text, closes):
    (expression, result), = quality.chains(text)
    assert quality.chain_closes(expression, result) is closes


@pytest.mark.parametrize("text", ["√32 = 5.66", "ln 30 = 3.40", "T = 16", "x^2 + 1 = 5", "(1 + 2) × 3 = 9"])
def test_formulas_and_single_numbers_are_not_chains(text):
    assert quality.chains(text) == []


def test_interval_and_nearest_scores():
    assert interval_scores(0.968, [(0.0, 0.5), (0.85, 1.15), (2.0, 9.0)]) == pytest.approx([-0.468, 0.0, -1.032])
    assert nearest_scores(2.195, [2.2, 2.0]) == pytest.approx([-0.005, -0.195])


def _spearman(values) -> float:
    ranks = np.argsort(np.argsort(values))  # no ties in these profiles
    return float(np.corrcoef(np.arange(len(values)), ranks)[0, 1])


# blocks 2..12: a 27x rise whose only dip (1.4 %) is block 2 -> 3, so block 2 is not the minimum; a fall to
# 0.24x that wobbles on the way, its lowest at block 11 (the old rule asked for the ends to be the extremes)
RISE = [0.01, 0.00986, 0.019, 0.03, 0.04, 0.045, 0.06, 0.08, 0.11, 0.15, 0.27]
FALL = [1.0, 0.9, 0.95, 0.7, 0.78, 0.6, 0.5, 0.55, 0.3, 0.22, 0.24]


def test_trend_is_a_rank_correlation_with_a_stated_threshold():
    assert RISE[-1] / RISE[0] == pytest.approx(27) and RISE[1] / RISE[0] == pytest.approx(0.986)
    assert depth.rank_correlation(RISE) == pytest.approx(_spearman(RISE)) and depth.rank_correlation(RISE) > 0.95
    assert depth.trend_kind(RISE) == "grows"
    assert FALL[-1] / FALL[0] == pytest.approx(0.24) and min(FALL) < FALL[-1]
    assert depth.rank_correlation(FALL) == pytest.approx(_spearman(FALL)) and depth.rank_correlation(FALL) < -0.9
    assert depth.trend_kind(FALL) == "shrinks"
    assert depth.trend_kind([1.0, 3.0, 1.2, 2.8, 1.1, 3.1]) == "mixed"  # up and down: rho +0.49
    assert depth.trend_kind([3.0, 1.0, 2.0]) == "mixed"  # rho -0.5: three points must be monotone
    assert depth.trend_kind([1.0, 1.1, 1.2]) == "flat" and depth.trend_kind([1.0]) == ""
    assert depth.TREND_RHO == 0.8
