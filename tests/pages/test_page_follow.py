"""AppTest of the "Follow a token" page: the flow's data is the followed position's own, PageDown's button moves one
sub-step and the sentence follows it, another token can be picked, the attribution's bars add up to the logit of an
independently built model, Post-Norm says why there is no attribution, and the SmolLM2 button sets the example."""

from __future__ import annotations

import pytest
import torch

from tests.page_helpers import open_page, reference, texts

from analysis.trace import run_trace
from ui.figures.follow import attribution_bar, flow_chart
from ui.follow import EXAMPLE


def _button(at, key):
    return next(b for b in at.button if b.key == key)


def test_flow_steps_and_positions(charts):
    at = open_page("follow", via="script")
    assert not at.exception, at.exception
    model, ids, _ = reference()
    T = ids.shape[1]
    with torch.no_grad():
        out = run_trace(model, ids)
    steps = charts(flow_chart).arguments["steps"]
    assert len(steps) == 1 + 6 * model.config.num_hidden_layers + 2
    norms = torch.linalg.vector_norm(out.activations["blocks.0.hook_resid_pre"][0, T - 1].double())
    assert steps["norm"].iloc[0] == pytest.approx(float(norms), rel=1e-6)  # the last token is followed by default
    assert steps["top_ids"].iloc[-1][0] == int(out.logits[0, T - 1].argmax())
    assert "Step 1 of" in texts(at) and "enters as its embedding" in texts(at)
    for _ in range(3):  # the next-step button (PageDown) moves one sub-step at a time
        at = _button(at, "follow.next").click().run()
    assert charts(flow_chart).arguments["current"] == 3
    assert "Step 4 of" in texts(at) and "moves" in texts(at)  # block 1's residual after attention, in words
    # the attribution's bars add up to the logit the model computes
    data = charts(attribution_bar).data
    assert data["contribution"].sum() == pytest.approx(float(out.logits[0, T - 1].max()), rel=1e-4, abs=1e-5)
    # another token: its own row of the record, the step kept
    at.session_state["follow.position"] = 1
    at = at.run()
    steps = charts(flow_chart).arguments["steps"]
    norm1 = torch.linalg.vector_norm(out.activations["blocks.0.hook_resid_pre"][0, 1].double())
    assert steps["norm"].iloc[0] == pytest.approx(float(norm1), rel=1e-6)
    assert charts(flow_chart).arguments["current"] == 3


def test_chinese_and_post_norm():
    at = open_page("follow", via="script", lang="zh", **{"cfg.norm_position": "post"})
    assert not at.exception, at.exception
    text = texts(at)
    assert "第 1 /" in text and "后归一化" in text  # the step line, and why there is no attribution


@pytest.mark.smollm2
def test_smollm2_button_sets_the_example():
    at = open_page("follow", via="script")
    at = _button(at, "follow.use_smollm2").click().run(timeout=600)
    assert not at.exception, at.exception
    assert at.session_state["model.source"] == "checkpoint"
    assert at.session_state["model.checkpoint"] == "smollm2-135m"
    assert at.session_state["input.text"] == EXAMPLE
    assert not any(b.key == "follow.use_smollm2" for b in at.button)  # on SmolLM2 the button is gone
    assert "“␣Paris”" in texts(at)


def test_mixture_of_experts_names_the_routed_experts(charts):
    """MiniMind-MoE's preset: each FFN row of the table names the experts of the page's record (the record itself is
    checked against the router's hook in tests/analysis/test_follow.py), numbered from 1 as on the Experts page."""
    from settings.schema import preset_values

    at = open_page("follow", via="script", **{**preset_values("minimind_moe"), "cfg.preset": "minimind_moe"})
    assert not at.exception, at.exception
    steps = charts(flow_chart).arguments["steps"]
    table = at.dataframe[0].value
    for i in steps.index[steps["kind"] == "mlp"]:
        named = [int(x.split(" (")[0]) for x in table.iloc[i]["experts (weight)"].split(", ")]
        assert named == [e + 1 for e in steps.loc[i, "experts"]] and len(named) == 2  # num_experts_per_tok
