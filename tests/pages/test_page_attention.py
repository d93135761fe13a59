"""AppTest checks of app_pages/attention.py against an independent engine computation (see page_helpers)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from tests.page_helpers import figures, open_page, reference, rerun, shown_chart, texts
from ui.figures.attention import attention_heatmap, entropy_heatmap


def _expected(state: dict, layer: int, head: int, stage: str = "softmax") -> np.ndarray:
    """The [T, T] matrix the heatmap must show, from a fresh model (0-based layer/head)."""
    model, ids, _ = reference(**state)
    with torch.no_grad():
        if stage == "softmax":
            a = model(ids, output_attentions=True).attentions[layer][0, head].double().numpy()
            return np.where(np.triu(np.ones_like(a, dtype=bool), 1), np.nan, a)
        acts = model(ids, output_activations=True).activations
    q = acts[f"blocks.{layer}.attn.hook_q"][0, head].double()  # (T, hd)
    k = acts[f"blocks.{layer}.attn.hook_k"][0, head].double()  # (T, hd)
    raw = (q @ k.T).numpy()
    return raw if stage == "raw" else raw / math.sqrt(q.shape[-1])


def _check_heatmap(charts, state: dict, layer: int, head: int, stage: str = "softmax", atol: float = 1e-6) -> None:
    heatmap = charts(attention_heatmap)
    z = heatmap.data.to_numpy(dtype=np.float64)
    exp = _expected(state, layer, head, stage)
    assert heatmap.arguments["stage"] == stage
    assert z.shape == exp.shape
    T = z.shape[0]
    upper = np.triu(np.ones((T, T), dtype=bool), 1)
    if stage in ("softmax", "masked"):
        assert np.isnan(z[upper]).all(), "no mass above the diagonal: future cells must be empty"
        assert np.isfinite(z[~upper]).all()
        np.testing.assert_allclose(z[~upper], exp[~upper], atol=atol, rtol=1e-5)
    else:
        np.testing.assert_allclose(z, exp, atol=atol, rtol=1e-4)
    np.testing.assert_array_equal(np.asarray(heatmap.figure.data[0].z, dtype=np.float64), z)  # the heatmap shows it
    assert heatmap.layout["yaxis"]["autorange"] == "reversed"


def test_defaults_heatmap_matches_engine_and_checks_pass(charts):
    at = open_page("attention")
    assert not at.exception
    _check_heatmap(charts, {}, 0, 0)
    page = texts(at)
    assert "All 2 layers pass" in page
    assert not re.search(r"\bnan\b", page, re.I)
    assert len(at.get("plotly_chart")) == 5  # head, all heads, entropy, layers x heads grid, entropy map


def test_repeated_tokens_keep_unique_ticks_and_stage_raw_is_qk(charts):
    state = {"input.text": "月月月月"}
    at = open_page("attention", **state, **{"attn.layer": 2, "attn.head": 3})
    assert not at.exception
    _check_heatmap(charts, state, 1, 2)
    layout = charts(attention_heatmap).layout
    T = len(layout["yaxis"]["ticktext"])
    assert layout["yaxis"]["tickvals"] == list(range(T)) == layout["xaxis"]["tickvals"]
    assert len(set(layout["yaxis"]["ticktext"])) == T, "repeated tokens must not merge"
    for stage in ("raw", "scaled", "masked"):
        rerun(at, **{"attn.stage": stage})
        assert not at.exception
        _check_heatmap(charts, state, 1, 2, stage, atol=1e-5)


@pytest.mark.parametrize("state, layer, head", [
    ({"cfg.num_hidden_layers": 1, "cfg.num_attention_heads": 1, "cfg.num_key_value_heads": 1}, 0, 0),
    ({"cfg.norm_position": "post"}, 1, 3),
    ({"cfg.position_embedding": "rope", "cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 2}, 1, 5),
])
def test_variants_match_engine(state, layer, head, charts):
    at = open_page("attention", **state, **{"attn.layer": layer + 1, "attn.head": head + 1})
    assert not at.exception
    _check_heatmap(charts, state, layer, head)


def test_layer_and_head_clamp_when_config_shrinks():
    at = open_page("attention", **{"cfg.num_hidden_layers": 4, "attn.layer": 4, "attn.head": 4})
    assert not at.exception and at.session_state["attn.layer"] == 4
    rerun(at, settle=False, **{"cfg.num_hidden_layers": 2, "cfg.num_attention_heads": 2, "cfg.num_key_value_heads": 2})
    assert not at.exception
    assert "is not valid now" in texts(at)  # the clamp is said, not silent
    at.run()
    assert not at.exception
    assert at.session_state["attn.layer"] == 2 and at.session_state["attn.head"] == 2


def test_grid_up_to_144_then_entropy_fallback(charts):
    small = {"cfg.hidden_size": 48, "cfg.num_hidden_layers": 12, "cfg.num_attention_heads": 12,
             "cfg.num_key_value_heads": 12, "cfg.intermediate_size": 64, "input.text": "床前明月光"}
    at = open_page("attention", **small)
    assert not at.exception
    assert len(shown_chart(at, "attn.grid")["data"]) == 144  # cached figure: read from the page
    big = {**small, "cfg.hidden_size": 16, "cfg.num_hidden_layers": 48, "cfg.num_attention_heads": 4,
           "cfg.num_key_value_heads": 4}
    rerun(at, **big)
    assert not at.exception
    assert "192 small heatmaps" in texts(at)
    ent = charts(entropy_heatmap)
    assert ent.data.pivot(index="layer", columns="head", values="entropy").shape == (48, 4)
    assert np.asarray(ent.figure.data[0].z).shape == (48, 4)


@pytest.mark.parametrize("state, message", [
    ({"input.text": ""}, "The text is empty"),
    ({"input.text": "😀😀😀"}, None),
    ({"input.mode": "random", "input.random_len": 9}, None),
])
def test_edge_inputs(state, message, charts):
    at = open_page("attention", **state)
    assert not at.exception
    if message:
        assert message in texts(at)
        assert not at.get("plotly_chart")
    else:
        _check_heatmap(charts, state, 0, 0)


def test_nonfinite_model_fails_the_checks_in_words():
    # Post-Norm at init std 1e20 overflows to NaN inside attention: the checks fail, in words
    at = open_page("attention", **{"cfg.initializer_range": 1e20, "cfg.norm_position": "post"})
    assert not at.exception
    assert "Check failed in layer(s) 1, 2" in texts(at)
    # Pre-Norm at 1e20 stays finite (the norms' variance overflows and they return zeros): flagged anyway
    pre = open_page("attention", **{"cfg.initializer_range": 1e20})
    assert not pre.exception
    assert any("norms overflow" in w.value for w in pre.warning)
    assert not re.search(r"\bnan\b", at.dataframe[0].value.to_string(), re.I)


@pytest.mark.parametrize("lang, unit", [("en", "nats"), ("zh", "奈特")])
def test_entropy_map_colour_bar_unit_is_in_the_session_language(lang, unit):
    at = open_page("attention", **{"ui.lang": lang})
    maps = [f for f in figures(at) if f["data"] and f["data"][0].get("type") == "heatmap"
            and "colorbar" in f["data"][0] and unit in str(f["data"][0]["colorbar"].get("title", ""))]
    assert maps, [f["data"][0].get("colorbar") for f in figures(at) if f["data"]]


def test_a_sliding_window_is_a_band_and_a_sink_its_own_column(charts):
    """Issue 26: a sliding-window layer's mask is drawn as a band (the keys before the window empty, like the
    future) and a gpt-oss sink as one more column holding each row's share; the checks count the sink in the row.
    Reference: a fresh model of the same config, its pattern masked by hand (j > i or j <= i - w)."""
    from dataclasses import replace

    from engine import CausalLM
    from tests.page_helpers import state_config

    w, T = 3, 8
    state = {"input.mode": "random", "input.random_len": T, "cfg.position_embedding": "rope"}
    at = open_page("attention", **state, **{"cfg.fixed": {"sliding_window": w, "attention_sinks": True},
                                            "attn.layer": 2, "attn.head": 2})
    assert not at.exception
    config, seed = state_config(**state)
    config = replace(config, sliding_window=w, attention_sinks=True)
    torch.manual_seed(seed)
    model = CausalLM(config)
    ids = torch.randint(0, config.vocab_size, (1, T), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        a = model(ids, output_attentions=True).attentions[1][0, 1].double().numpy()  # (T, T) key weights
    i, j = np.indices((T, T))
    hidden = (j > i) | (j <= i - w)  # the future and the keys before the window, by hand
    heatmap = charts(attention_heatmap)
    z = np.asarray(heatmap.figure.data[0].z, dtype=np.float64)
    assert z.shape == (T, T + 1)  # the keys, then the sink column
    assert np.isnan(z[:, :T][hidden]).all() and np.isfinite(z[:, :T][~hidden]).all()
    np.testing.assert_allclose(z[:, :T][~hidden], a[~hidden], atol=1e-6)
    np.testing.assert_allclose(z[:, T], 1 - a.sum(-1), atol=1e-6)  # the sink's share: what the keys do not get
    assert heatmap.layout["xaxis"]["ticktext"][-1] == "sink"
    page = texts(at)
    assert f"sliding-window layer (window {w})" in page and f"band at the lower left ({int(hidden[np.tril_indices(T, -1)].sum())} cells)" in page
    assert f"here from {z[:, T].min():.3f} to {z[:, T].max():.3f}" in page
    assert "All 2 layers pass" in page  # row sums with the sink, no weight in a masked cell


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_row_0_sentence_is_the_charts_weight_with_and_without_a_sink(charts, lang):
    """Issue 32: row 0 sees only itself, so its weight is exactly 1, unless a sink joins its softmax (gpt-oss,
    lesson 7 step 2): then the caption gives row 0's weight and the sink's share as the chart shows them, and
    never "exactly 1". Reference: a fresh model of the preset's config (the sink's share is 1 minus the key
    weights), and the page's chart data."""
    from engine import CausalLM
    from settings.schema import DEFAULTS, all_presets, preset_values

    exactly = {"en": "so its single weight is exactly 1", "zh": "所以它唯一的权重恰好是 1"}[lang]
    # no sink (the default model): the chart's cell is exactly 1 and the page says so
    at = open_page("attention", via="script", lang=lang)
    assert not at.exception
    model, ids, _ = reference()
    with torch.no_grad():
        assert model(ids, output_attentions=True).attentions[0][0, 0, 0, 0].item() == 1.0
    assert charts(attention_heatmap).data.iloc[0, 0] == 1.0 and charts(attention_heatmap).arguments["sink"] is None
    assert exactly in texts(at)
    # a sink (gpt-oss-like, lesson 7 step 2's settings: 12 random tokens, layer 1, head 1, softmax)
    state = {**preset_values("gpt_oss_like"), "cfg.preset": "gpt_oss_like", "input.mode": "random",
             "input.random_len": 12, "attn.layer": 1, "attn.head": 1, "attn.stage": "softmax"}
    at = open_page("attention", via="script", lang=lang, **state)
    assert not at.exception
    config, seed = all_presets()["gpt_oss_like"], int(DEFAULTS["cfg.seed"])
    assert config.attention_sinks
    torch.manual_seed(seed)
    model = CausalLM(config)
    ids = torch.randint(0, config.vocab_size, (1, 12), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        a = model(ids, output_attentions=True).attentions[0][0, 0].double().numpy()  # (T, T) key weights
    w, share = a[0, 0], 1 - a[0].sum()  # row 0: its one key, and what the sink took
    assert 0.3 < share < 0.7  # at init the sink's logit (0) is level with the key's: about half each
    heatmap = charts(attention_heatmap)
    np.testing.assert_allclose([heatmap.data.iloc[0, 0], heatmap.arguments["sink"][0]], [w, share], atol=1e-6)
    page = texts(at)
    assert exactly not in page and "恰好是 1" not in page and "exactly 1" not in page
    said = {"en": f"its weight on itself is {w:.3f} and the sink takes {share:.3f}",
            "zh": f"它在自己身上的权重是 {w:.3f}，汇聚点拿走 {share:.3f}"}[lang]
    assert said in page, page
