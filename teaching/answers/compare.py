"""The answer functions of the steps that compare two views, A and B (a step's ``compare`` table): the question is
about the difference, graded from the two models (``StepInputs.other`` is side B, built as the step's own side A).

Each function reads what the compared page draws (``analysis.compare``, the numbers of the page's sentence), so the
key and the page cannot disagree. Registered with :func:`teaching.answers.core.answer` when ``teaching.lessons`` is
imported.
"""

from __future__ import annotations

import math

from teaching.answers.core import Answer, StepInputs, answer, bi, interval_scores

# B / A after each side's last block: three readings, each a range of the ratio
NORM_CHANGES = {
    "smaller": (bi("B's is smaller (under 0.9× A's)", "B 的更小（不到 A 的 0.9 倍）"), (0.0, 0.9)),
    "same": (bi("about the same (0.9× to 1.1× A's)", "差不多一样（A 的 0.9 到 1.1 倍）"), (0.9, 1.1)),
    "larger": (bi("B's is larger (over 1.1× A's)", "B 的更大（超过 A 的 1.1 倍）"), (1.1, math.inf)),
}


def _sides(s: StepInputs) -> StepInputs:
    if s.other is None:
        raise ValueError("this answer compares two views: the step needs a `compare` table (side B's settings)")
    return s.other


@answer("compare_last_norm")
def compare_last_norm(s: StepInputs) -> Answer:
    """B's mean residual norm after its last block over A's (the Layer norms page's compared sentence,
    :func:`analysis.compare.last_block_norms`): smaller, about the same or larger, scored by the ratio's distance
    to each reading's range. The highlight is the last block on the B / A chart (both sides as deep)."""
    from analysis.compare import last_block_norms
    from analysis.norms import residual_norms

    b_side = _sides(s)
    a, b = last_block_norms(residual_norms(s.trace(), s.tokens), residual_norms(b_side.trace(), b_side.tokens))
    ratio = b / a
    scores = {k: interval_scores(ratio, [rng])[0] for k, (_, rng) in NORM_CHANGES.items()}
    order = sorted(NORM_CHANGES, key=lambda k: -scores[k])
    la, lb = s.config.num_hidden_layers, b_side.config.num_hidden_layers
    return Answer(correct=NORM_CHANGES[order[0]][0], distractors=[NORM_CHANGES[k][0] for k in order[1:]],
                  values={"a": a, "b": b, "ratio": ratio, "la": la, "lb": lb,
                          "sqrt_h": math.sqrt(b_side.config.hidden_size)},
                  highlight={"x": min(la, lb)} if la == lb else {}, scores=[scores[k] for k in order])
