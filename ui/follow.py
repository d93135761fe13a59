"""The words of the "Follow a token" page: each sub-step's label and its sentence, computed from that step's row of
:func:`analysis.follow.follow_steps` (so a sentence always says what the chart's numbers at the current settings
say), the attribution's bar labels and its sentence, and the one-click switch to SmolLM2 with the example.

Decision (SmolLM2 by default): the sidebar's model is every page's (the shared ``model.*`` controls), so this page
does not switch it on its own; when another model is on, it offers one button that sets SmolLM2 and the English
example :data:`EXAMPLE` (a lesson step sets them the same way).
"""

from __future__ import annotations

import json
from typing import Callable

import pandas as pd
import streamlit as st

from analysis.follow import Attribution, summed
from ui.format import number, percent
from ui.i18n import t
from ui.presenter import css_class
from ui.state import VALUES_KEY

SMOLLM2 = "smollm2-135m"
EXAMPLE = "The Eiffel Tower is in the city of"


def use_smollm2() -> None:
    """A button's callback (runs before the sidebar is drawn): SmolLM2 and the example text."""
    values = {"model.source": "checkpoint", "model.checkpoint": SMOLLM2, "input.text": EXAMPLE}
    store = st.session_state.setdefault(VALUES_KEY, {})
    for key, value in values.items():
        st.session_state[key] = value
        store[key] = value


# Streamlit's shortcuts ignore navigation keys while an input has the focus, and a slider is an input: after the
# token slider is dragged, the clicker's PageDown would move the slider (the browser's own key), not the step.
# This bridge (installed once per browser tab) hands PageUp / PageDown on that slider to the step buttons.
_KEYS_JS = """<script>(() => {{ window.__sliderKeys = window.__sliderKeys || {{}};
window.__sliderKeys[{slider}] = {on} ? [{prev}, {next}] : null;
if (window.__sliderKeysOn) return; window.__sliderKeysOn = true;
document.addEventListener("keydown", (e) => {{
  if (e.key !== "PageDown" && e.key !== "PageUp") return;
  for (const [slider, buttons] of Object.entries(window.__sliderKeys)) {{
    if (!buttons || !e.target.closest || !e.target.closest(`[class*="${{slider}}"]`)) continue;
    e.preventDefault(); e.stopPropagation();
    const b = document.querySelector(`.${{buttons[e.key === "PageDown" ? 1 : 0]}} button`);
    if (b && !b.disabled) b.click();
    return;
  }}
}}, true); }})();</script>"""


def slider_keys_to_steps(slider: str, prev: str, next_: str, on: bool) -> None:
    """PageUp / PageDown pressed on the slider ``slider`` (a widget key) click the buttons ``prev`` / ``next_``
    (keys) while ``on`` (the page's own shortcuts are active: not inside a lesson, whose clicker moves the lesson)."""
    st.html(_KEYS_JS.format(slider=json.dumps(css_class(slider)), on=json.dumps(on), prev=json.dumps(css_class(prev)),
                            next=json.dumps(css_class(next_))), unsafe_allow_javascript=True)


def step_label(row, norm_position: str) -> str:
    """``block 3: residual after attention``: the sub-step's name (blocks numbered from 1)."""
    kind, block = row["kind"], int(row["layer"]) + 1
    if norm_position == "post" and kind in ("resid_mid", "resid_post"):
        return t(f"follow.step.post.{kind}", block=block)
    if kind == "ln2":
        return t("follow.step.ln2", block=block, norm=str(row["module"]).split(".")[-1])
    return t(f"follow.step.{kind}", block=block)


def step_sentence(steps: pd.DataFrame, i: int, norm_position: str, name: Callable[[int], str],
                  key_name: Callable[[int], str], followed: str, answer_step: int, vocab_size: int) -> str:
    """The sentence of row ``i`` (0-based), from its numbers (experts numbered from 1, as the Experts page). ``name(id)`` phrases a predicted token,
    ``key_name(position)`` an input token, ``followed`` the followed one; ``answer_step``:
    :func:`analysis.follow.first_top_step`."""
    row = steps.iloc[i]
    kind, block = row["kind"], int(row["layer"]) + 1
    final = name(int(steps["top_ids"].iloc[-1][0]))
    top = lambda: dict(top=name(int(row["top_ids"][0])), p=percent(row["top_probs"][0]))  # noqa: E731
    if kind == "embed":
        return t("follow.say.embed", tok=followed, norm=number(row["norm"], ".3g"), **top())
    if kind in ("ln1", "ln2"):
        return t("follow.say.norm", name=step_label(row, norm_position), norm=number(row["norm"], ".3g"),
                 resid=number(row["resid_norm"], ".3g"))
    if kind in ("attn", "attn_normed", "mlp", "mlp_normed"):
        ratio = number(row["norm"] / row["resid_norm"] if row["resid_norm"] > 0 else float("nan"), ".3g")
        if kind.startswith("attn"):
            keys = t("follow.list_sep").join(t("follow.keys_item", tok=key_name(k), pos=k, w=percent(w))
                                             for k, w in zip(row["keys"], row["key_weights"]))
            return t("follow.say.attn", block=block, keys=keys, norm=number(row["norm"], ".3g"), ratio=ratio)
        text = t("follow.say.mlp", block=block, norm=number(row["norm"], ".3g"), ratio=ratio)
        if len(row["experts"]):
            text += t("follow.say.experts", experts=t("follow.list_sep").join(
                f"{e + 1} ({percent(w)})" for e, w in zip(row["experts"], row["expert_weights"])))
        return text
    if kind in ("resid_mid", "resid_post"):
        sub = t("follow.sub.attn" if kind == "resid_mid" else "follow.sub.mlp")
        say = "follow.say.resid_post_norm" if norm_position == "post" else "follow.say.resid"
        text = t(say, block=block, sub=sub, pct=percent(row["delta_ratio"]), cos=number(row["cosine"], ".3f"))
        if int(row["step"]) == answer_step:
            return text + t("follow.say.became", final=final, p=percent(row["top_probs"][0]))
        if int(row["rank_final"]) == 0:
            return text + t("follow.say.is_top", **top())
        return text + t("follow.say.top", final=final, rank=int(row["rank_final"]) + 1, **top())
    if kind == "ln_final":
        return t("follow.say.final_norm", resid=number(row["resid_norm"], ".3g"), norm=number(row["norm"], ".3g"))
    return t("follow.say.logits", V=f"{vocab_size:,}", **top())


def attribution_labels(table: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Per row of an :class:`Attribution` table: the bar's label (blocks and heads from 1) and its colour group."""
    labels, groups = [], []
    for c, layer, head in zip(table["component"], table["layer"], table["head"]):
        labels.append(t(f"follow.attr.{c}", layer=int(layer) + 1, head=int(head) + 1))
        groups.append({"attn": "attn", "head": "attn", "attn_bias": "attn", "mlp": "mlp"}.get(c, "stream"))
    return labels, groups


def part_name(row) -> str:
    return t(f"follow.attr.part.{row['component']}", layer=int(row["layer"]) + 1, head=int(row["head"]) + 1)


def attribution_sentence(attr: Attribution) -> str:
    """The largest term, and the totals of the embedding, attention and FFN terms, from the table's numbers."""
    tab = attr.table
    parts = tab[~tab["component"].isin(("head", "attn_bias"))]
    best = parts.loc[parts["contribution"].abs().idxmax()]
    total = lambda *cs: number(parts.loc[parts["component"].isin(cs), "contribution"].sum(), "+.3g")  # noqa: E731
    text = t("follow.attr.sentence", part=part_name(best), value=number(best["contribution"], "+.3g"),
             total=number(summed(attr), ".4g"), embed=total("embed", "pos_embed"), attn=total("attn"),
             mlp=total("mlp"))
    heads = tab[tab["component"] == "head"]
    if len(heads):
        h = heads.loc[heads["contribution"].abs().idxmax()]
        text += " " + t("follow.attr.heads_sentence", head=part_name(h), value=number(h["contribution"], "+.3g"))
    return text
