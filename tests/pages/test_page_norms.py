"""AppTest of the Layer norms page (app_pages/norms.py): every chart number checked against the engine.

Pattern (Streamlit 1.67's AppTest keeps no widget state across a page switch): with ``st.navigation`` a value set through ``at.session_state`` is
lost on ``switch_page`` after a run, so each scenario switches to the page BEFORE the first run (this page's
url_path equals its file stem, so that works) and sets the sidebar state up front.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from tests.page_helpers import assert_huge_init_is_said_in_words, open_page, state_config

from engine import CausalLM, ModelConfig
from engine.tokenizer import train_bpe
from ui.figures.common import HEATMAP_MAX_TOKENS
from ui.figures.norms import residual_norm_heatmap, residual_norm_lines, sublayer_norm_bars
from ui.sidebar import DEFAULTS, MAX_TOKENS



def run_page(**state) -> AppTest:
    return open_page("norms", via="switch", defaults=False, **state)






def expected(state: dict) -> tuple[ModelConfig, torch.Tensor, CausalLM]:
    """The sidebar's config, ids and model rebuilt independently from the same values."""
    s = {**DEFAULTS, **state}
    config, _ = state_config(**state)  # the same mapping the sidebar uses, rebuilt here
    if s["input.mode"] == "random":
        gen = torch.Generator().manual_seed(int(s["cfg.seed"]))
        ids = torch.randint(0, config.vocab_size, (1, s["input.random_len"]), generator=gen)
    else:
        ids = torch.tensor([train_bpe(config.vocab_size).encode(s["input.text"])[:MAX_TOKENS]])
    torch.manual_seed(int(s["cfg.seed"]))
    return config, ids, CausalLM(config)


def check_against_engine(at: AppTest, charts, state: dict) -> None:
    assert not at.exception, at.exception
    config, ids, model = expected(state)
    L, T = config.num_hidden_layers, ids.shape[1]
    with torch.no_grad():
        out = model(ids, output_hidden_states=True, output_activations=True)
        last = out.activations[f"blocks.{L - 1}.hook_resid_post"]  # block L before the final norm
        states = list(out.hidden_states[:-1]) + [last, model.norm(last)]
    norms = torch.stack([torch.linalg.vector_norm(h[0].double(), dim=-1) for h in states])  # (L+2, T)
    lines = charts(residual_norm_lines)
    table = lines.data.pivot(index="depth", columns="position", values="norm").sort_index()  # (L+2, T)
    np.testing.assert_allclose(table.to_numpy(), norms.numpy(), rtol=1e-5)  # every depth and position
    # residual chart: T thin position lines over embed .. block L, then their bold mean; the final norm's
    # per-position dots and their mean on a second axis of its own (its jump to √H would flatten the blocks)
    resid = lines.figure
    assert len(resid.data) == T + 3
    np.testing.assert_allclose(resid.data[T].y, norms[: L + 1].mean(dim=1).numpy(), rtol=1e-5)
    np.testing.assert_allclose(resid.data[0].y, norms[: L + 1, 0].numpy(), rtol=1e-5)
    final_dots, final_mean = resid.data[T + 1], resid.data[T + 2]
    assert final_dots.xaxis == final_mean.xaxis == "x2" and final_dots.yaxis == "y2"
    np.testing.assert_allclose(final_dots.y, norms[L + 1].numpy(), rtol=1e-5)
    np.testing.assert_allclose(final_mean.y, [norms[L + 1].mean()], rtol=1e-5)
    layout = lines.layout
    ticks = layout["xaxis"]["ticktext"]
    assert ticks[0] == "embed" and ticks[-1] == f"block {L}"
    assert layout["xaxis2"]["ticktext"] == ["final norm"]
    assert sum(d.showlegend is not False for d in resid.data) == 2  # positions, mean: no 22-entry legend
    # sub-layer bars: attention and MLP outputs, one bar per block
    sub = charts(sublayer_norm_bars)
    assert sub.data.groupby("component").size().to_dict() == {"attn_out": L, "mlp_out": L}
    assert [len(d.y) for d in sub.figure.data] == [L, L]
    # heatmap: L+2 rows (embed .. final norm), capped columns, embedding row at the top
    heat = charts(residual_norm_heatmap)
    assert heat.data.equals(lines.data) and heat.arguments["max_tokens"] == HEATMAP_MAX_TOKENS  # same table, capped
    z = np.asarray(heat.figure.data[0].z, dtype=np.float64)
    assert z.shape == (L + 2, min(T, HEATMAP_MAX_TOKENS))
    np.testing.assert_allclose(z, np.log10(norms[:, : z.shape[1]].numpy()), rtol=1e-5, atol=1e-6)  # log colour
    shown = np.array(heat.figure.data[0].text, dtype=object)  # hover / cell text: the norm itself
    np.testing.assert_allclose(shown.astype(float), norms[:, : z.shape[1]].numpy(), rtol=5.1e-3)  # 3 significant digits
    assert heat.layout["yaxis"]["autorange"] == "reversed"


def test_defaults_match_engine_and_post_norm_is_flat(charts):
    at = run_page()
    check_against_engine(at, charts, {})
    at = run_page(**{"cfg.norm_position": "post"})
    check_against_engine(at, charts, {"cfg.norm_position": "post"})
    resid = charts(residual_norm_lines).figure
    mean = np.concatenate([resid.data[-3].y, resid.data[-1].y])  # blocks, then final norm
    # Post-Norm: every block ends in a norm with weight 1, so L2 = sqrt(H) (up to eps) from block 1 on
    np.testing.assert_allclose(mean[1:], math.sqrt(DEFAULTS["cfg.hidden_size"]), rtol=1e-4)


@pytest.mark.parametrize("state", [
    {"cfg.num_hidden_layers": 1, "cfg.num_attention_heads": 1, "cfg.num_key_value_heads": 1},
    {"cfg.position_embedding": "rope", "cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 2,
     "cfg.norm_type": "rmsnorm", "cfg.ffn": "swiglu"},
    {"cfg.hidden_size": 16, "cfg.num_hidden_layers": 48, "input.mode": "random", "input.random_len": 64},
], ids=["1layer-1head", "rope-gqa", "48layers-random"])
def test_variants_match_engine(state, charts):
    check_against_engine(run_page(**state), charts, state)


def test_long_input_heatmap_capped(charts):
    state = {"input.text": DEFAULTS["input.text"] * 8}  # 176 tokens > HEATMAP_MAX_TOKENS
    at = run_page(**state)
    check_against_engine(at, charts, state)
    assert any(f"shows the first {HEATMAP_MAX_TOKENS}" in i.value for i in at.info)


def test_empty_and_unknown_text(charts):
    at = run_page(**{"input.text": ""})
    assert not at.exception
    assert any("empty" in i.value for i in at.info)
    assert not at.get("plotly_chart")
    state = {"input.text": "😀😀😀"}
    at = run_page(**state)
    check_against_engine(at, charts, state)


def test_chinese_labels(charts):
    at = run_page(**{"ui.lang": "zh"})
    assert not at.exception
    resid = charts(residual_norm_lines)
    assert resid.layout["xaxis"]["ticktext"][0] == "嵌入"
    assert resid.figure.data[-3].name == resid.figure.data[-1].name == "各位置平均"
    assert resid.layout["xaxis2"]["ticktext"] == ["最终归一化"]


def test_huge_init_never_shows_nan_as_a_number():
    at = run_page(**{"cfg.initializer_range": 1e20})
    assert_huge_init_is_said_in_words(at)
