"""AppTest checks of app_pages/experts.py: on the MiniMind-MoE preset the router heatmap and the load bars show
what an independent model computes by hand (softmax of the router over the FFN's input, top-k, counts), in
English and Chinese; on the dense default the page says so in words, draws no chart, and its button switches the
sidebar to the preset."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine import VARIANT_PRESETS, CausalLM
from engine.tokenizer import bundled_tokenizer
from tests.page_helpers import open_page, rerun, texts
from ui.figures.experts import load_bar, router_heatmap
from settings.schema import DEFAULTS, MAX_TOKENS, preset_values
from ui.state import FIXED_KEY

PRESET = "minimind_moe"
STATE = {**preset_values(PRESET), "cfg.preset": PRESET}


def _reference() -> tuple[CausalLM, torch.Tensor, list[torch.Tensor]]:
    """The preset's model built afresh (seed as the sidebar's), its input ids, and per block the router's
    probabilities ``[T, E]`` by hand: softmax(x · Wᵀ) of the FFN's input caught by a forward hook."""
    config = VARIANT_PRESETS[PRESET]
    torch.manual_seed(int(DEFAULTS["cfg.seed"]))
    model = CausalLM(config)
    ids = torch.tensor([bundled_tokenizer(config.vocab_size).encode(DEFAULTS["input.text"])[:MAX_TOKENS]])
    inputs = []
    hooks = [layer.mlp.register_forward_hook(lambda m, a, o: inputs.append(a[0].detach())) for layer in model.layers]
    with torch.no_grad():
        model(ids)
    for h in hooks:
        h.remove()
    probs = [torch.softmax(x[0].double() @ layer.mlp.gate.weight.detach().double().T, dim=-1)
             for layer, x in zip(model.layers, inputs)]
    return model, ids, probs


@pytest.fixture(scope="module")
def ref():
    return _reference()


@pytest.mark.parametrize("lang, title, sentence", [
    ("en", "Router probabilities in block 2 (4 experts, top 2", "gets the most tokens"),
    ("zh", "第 2 个 Block 的路由概率（4 个专家", "得到的 token 最多"),
])
def test_moe_preset_router_and_load(charts, ref, lang, title, sentence):
    model, ids, probs = ref
    config = model.config
    E, k, T = config.num_local_experts, config.num_experts_per_tok, ids.shape[1]
    at = open_page("experts", lang=lang, **STATE, **{"experts.layer": 2})
    assert not at.exception, at.exception
    heat = charts(router_heatmap)
    assert heat.arguments["title"].startswith(title)
    p = heat.data["probability"].to_numpy().reshape(T, E)
    np.testing.assert_allclose(p, probs[1].numpy(), rtol=1e-4, atol=1e-6)  # block 2 = index 1
    top = torch.topk(probs[1], k, dim=-1).indices
    chosen = heat.data["chosen"].to_numpy().reshape(T, E)
    assert all(set(np.nonzero(chosen[t])[0]) == set(top[t].tolist()) for t in range(T))
    # the load of block 2 (the default scope): counts of that choice, shares summing to k
    counts = np.bincount(top.reshape(-1).numpy(), minlength=E)
    bars = charts(load_bar)
    assert bars.data["tokens"].tolist() == counts.tolist()
    assert bars.data["share"].sum() == pytest.approx(k)
    assert bars.arguments["uniform"] == pytest.approx(k / E)
    shown = texts(at)
    most = int(np.argmax(counts)) + 1
    line = next(s for s in shown.splitlines() if sentence in s)
    assert line.split()[1] == str(most), line  # "Expert 3 gets ..." / "专家 3 得到 ..."
    assert f"{100 * counts.max() / T:.1f}%" in line


def test_load_over_all_blocks(charts, ref):
    model, ids, probs = ref
    k, E, T, L = model.config.num_experts_per_tok, model.config.num_local_experts, ids.shape[1], len(probs)
    at = open_page("experts", **STATE, **{"experts.scope": "all"})
    assert not at.exception, at.exception
    counts = sum(np.bincount(torch.topk(p, k, dim=-1).indices.reshape(-1).numpy(), minlength=E) for p in probs)
    load = charts.data(load_bar)
    assert load["tokens"].tolist() == counts.tolist()
    np.testing.assert_allclose(load["share"], counts / (T * L))
    assert load["share"].sum() == pytest.approx(k) and load["load"].sum() == pytest.approx(1.0)


@pytest.mark.parametrize("lang, words", [("en", "dense FFN"), ("zh", "稠密")])
def test_dense_model_says_so_and_switches_to_the_preset(charts, lang, words):
    at = open_page("experts", via="script", lang=lang)
    assert not at.exception, at.exception
    assert any(words in i.value for i in at.info)
    assert not charts.all(router_heatmap) and not charts.all(load_bar) and not at.get("plotly_chart")
    button = at.button(key="experts.use_preset")
    assert ("MiniMind" in button.label) and (lang == "en") == ("top-2" in button.label)
    button.click().run()
    assert not at.exception, at.exception
    assert at.session_state["cfg.preset"] == PRESET
    assert at.session_state[FIXED_KEY]["num_local_experts"] == VARIANT_PRESETS[PRESET].num_local_experts
    heat = charts(router_heatmap)  # the page now routes: 4 experts, top-2, the input kept
    assert heat.data["expert"].nunique() == VARIANT_PRESETS[PRESET].num_local_experts
    assert int(heat.data["chosen"].sum()) == 2 * (heat.data["position"].max() + 1)
    assert at.session_state["input.text"] == DEFAULTS["input.text"]
    at = rerun(at, settle=False)  # and stays so on the next run
    assert not at.exception and at.session_state["cfg.preset"] == PRESET and charts.all(router_heatmap)
