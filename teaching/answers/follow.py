"""Answer keys of the "Follow a token" page (lesson 4's steps on it): at which depth the answer appears in the
followed token's stream, and which part of the model writes the largest share of its logit.

Both call what the page draws (:func:`analysis.follow.follow_steps`, :func:`analysis.follow.logit_attribution`), at
the page's own position (``follow.position``, default the last token), so a key and its chart cannot disagree.
Blocks are numbered from 1 in the options (as the page shows them); depth 0 = the embedding.
"""

from __future__ import annotations

from analysis.follow import first_top_step, follow_steps, logit_attribution
from teaching.answers.core import Answer, StepInputs, answer
from teaching.answers.real import pick_distinct


def _position(s: StepInputs) -> int:
    T = int(s.input_ids.shape[1])
    p = s.setting("follow.position", T - 1)
    return p if isinstance(p, int) and 0 <= p < T else T - 1


def _token(s: StepInputs, ids: list[int], position: int, token: int) -> str:
    if s.tokenizer is None:
        return f"#{token}"
    return s.tokenizer.pieces_after(ids[: position + 1], [token])[0].label


@answer("follow_depth")
def follow_depth(s: StepInputs) -> Answer:
    """The block after which the model's own answer becomes the lens's top token for good at the followed position
    (:func:`analysis.follow.first_top_step`; its row's block, 0 = already the embedding). Distractors: the block
    where the answer first enters the lens's top 10 (a weaker reading), the middle of the model, the first block."""
    position = _position(s)
    steps = follow_steps(s.model, s.trace(), position, top=10)
    L = s.config.num_hidden_layers
    at = first_top_step(steps)
    row = steps.iloc[at]
    depth = int(row["layer"]) + 1 if row["kind"] != "logits" else L
    stream = steps[steps["rank_final"] >= 0]
    top10 = stream[stream["rank_final"] < 10]
    entered = int(top10["layer"].iloc[0]) + 1 if len(top10) else L // 2
    final_id = int(steps["top_ids"].iloc[-1][0])
    wrong = pick_distinct(depth, [entered, L // 2, 1, L // 4, 3 * L // 4], 3)
    return Answer(correct=depth, distractors=wrong,
                  values={"depth": depth, "L": L, "step": at + 1, "n": len(steps), "entered": entered,
                          "final": _token(s, s.input_ids[0].tolist(), position, final_id),
                          "p": round(float(steps["top_probs"].iloc[-1][0]), 3)},
                  highlight={"x": at}, option_labels={"en": "block {}", "zh": "第 {} 层"},
                  scores=[-abs(depth - depth)] + [-abs(w - depth) for w in wrong])


def part_option(component: str, layer: int) -> dict:
    """A part of the model as an option: ``{"en": "block 30's FFN", "zh": ...}`` (blocks from 1)."""
    names = {"attn": ("block {}'s attention", "第 {} 层的注意力"), "mlp": ("block {}'s FFN", "第 {} 层的前馈网络"),
             "embed": ("the embedding", "词嵌入"), "pos_embed": ("the position embedding", "位置嵌入"),
             "norm_bias": ("the final norm's bias", "最后归一化的偏置")}
    en, zh = names[component]
    return {"en": en.format(layer + 1), "zh": zh.format(layer + 1)}


@answer("follow_top_part")
def follow_top_part(s: StepInputs) -> Answer:
    """The part of the model (the embedding, one attention layer, one FFN) with the largest share of the predicted
    token's logit at the followed position, the final norm frozen (direct logit attribution, as the page's bars).
    Distractors: the next three largest shares."""
    position = _position(s)
    out = s.trace()
    token = int(out.logits[0, position].argmax())
    attr = logit_attribution(s.model, out, position, token)
    parts = attr.table.reset_index(drop=True)  # the page's bar order
    ranked = parts.sort_values("contribution", ascending=False)
    best, *others = [(i, r) for i, r in ranked.iterrows()][:4]
    total = float(parts["contribution"].sum())
    return Answer(correct=part_option(best[1]["component"], int(best[1]["layer"])),
                  distractors=[part_option(r["component"], int(r["layer"])) for _, r in others],
                  values={"value": round(float(best[1]["contribution"]), 2), "total": round(total, 2),
                          "share": round(100 * float(best[1]["contribution"]) / total) if total else 0,
                          "second": round(float(others[0][1]["contribution"]), 2),
                          "token": _token(s, s.input_ids[0].tolist(), position, token)},
                  highlight={"x": int(best[0])},
                  scores=[float(best[1]["contribution"])] + [float(r["contribution"]) for _, r in others],
                  runner_up=float(ranked["contribution"].iloc[4]) if len(ranked) > 4 else None)
