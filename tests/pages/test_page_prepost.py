"""AppTest of the norm placement page (app_pages/prepost.py): Pre, Post, Sandwich and OLMo-2's order on the same
weights; every chart's DataFrame checked against models built independently here, the shared model untouched.

The page's url_path ("pre-vs-post") differs from its file stem, so AppTest cannot select it before a first run
of app.py, and after a run a value set through ``at.session_state`` is lost on ``switch_page`` (Streamlit 1.67's
AppTest keeps no widget state across a page switch). So one test walks the navigation app (run, switch, set state, run); the other scenarios run the
page script itself (it renders the shared sidebar through ``explorer()``) with the state set up front.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from tests.model_helpers import checksum
from tests.page_helpers import assert_huge_init_is_said_in_words, open_page, shown_chart, state_config, texts

import analysis
from engine import CausalLM, ModelConfig
from engine.tokenizer import train_bpe
from ui.figures.common import PRESENTER_FILL_PX
from ui.figures.prepost import depth_scaling_lines, divergence_lines, gradient_norm_lines, placement_norm_lines
from ui.sidebar import DEFAULTS, MAX_TOKENS, build_model

PLACEMENTS = ("pre", "post", "sandwich", "post_sublayer")
NAMES = {"en": {"pre": "Pre-Norm", "post": "Post-Norm", "sandwich": "Sandwich (Gemma)",
                "post_sublayer": "After sub-layer (OLMo-2)"},
         "zh": {"pre": "Pre-Norm", "post": "Post-Norm", "sandwich": "三明治（Gemma）", "post_sublayer": "子层之后（OLMo-2）"}}


def run_page(**state) -> AppTest:
    return open_page("prepost", via="script", defaults=False, timeout=180, **state)  # the depth sweep: 40 models


def sidebar_config(state: dict) -> ModelConfig:
    """The sidebar's ModelConfig for these widget values (same mapping as ui.sidebar.config_widgets)."""
    return state_config(**state)[0]


def sidebar_ids(state: dict, config: ModelConfig) -> torch.Tensor:
    s = {**DEFAULTS, **state}
    if s["input.mode"] == "random":
        gen = torch.Generator().manual_seed(int(s["cfg.seed"]))
        return torch.randint(0, config.vocab_size, (1, s["input.random_len"]), generator=gen)
    return torch.tensor([train_bpe(config.vocab_size).encode(s["input.text"])[:MAX_TOKENS]])


def order(own: str) -> list[str]:
    """The page's order: the model's own placement first."""
    return [own, *(p for p in PLACEMENTS if p != own)]


def fresh_models(config: ModelConfig, seed: int = 0) -> dict[str, CausalLM]:
    """The four placements built independently from the same seed, own placement first. A norm's init draws no
    random numbers, so all four hold the sidebar model's weights, and every norm at init (weight 1): the page's
    twins (shared tensors, the norms the model lacks at init) must compute exactly what these compute."""
    models = {}
    for p in order(config.norm_position):
        torch.manual_seed(seed)
        models[p] = CausalLM(config.replace(norm_position=p))
    own = models[config.norm_position].state_dict()
    for p, m in models.items():  # the premise: every common weight is equal
        for k, v in m.state_dict().items():
            if k in own and "layernorm" not in k:
                assert torch.equal(v, own[k]), (p, k)
    return models


def fresh_pair(config: ModelConfig, seed: int = 0) -> tuple[CausalLM, CausalLM]:
    models = fresh_models(config, seed)
    return models["pre"], models["post"]


def placements(df, key: str, names=PLACEMENTS) -> dict:
    """A chart table's rows of each placement, sorted by ``key``."""
    return {k: df[df["placement"] == k].sort_values(key) for k in names}


def streams(models: dict, ids: torch.Tensor, depth: int) -> dict:
    """Each model's residual stream before the final norm, depth 0..L, ``[T, H]`` float64 each."""
    out = {}
    with torch.no_grad():
        for p, m in models.items():
            o = m(ids, output_hidden_states=True, output_activations=True)
            out[p] = [h[0].double() for h in (*o.hidden_states[:-1], o.activations[f"blocks.{depth - 1}.hook_resid_post"])]
    return out


def check_against_engine(at: AppTest, charts, state: dict, depth: int | None = None, lang: str = "en") -> None:
    assert not at.exception, at.exception
    config = sidebar_config(state)
    depth = depth or config.num_hidden_layers
    config = config.replace(num_hidden_layers=depth)
    ids = sidebar_ids(state, config)
    own = config.norm_position
    models = fresh_models(config)
    hs = streams(models, ids, depth)
    norms_chart, div_chart = charts(placement_norm_lines), charts(divergence_lines)
    norms, div = norms_chart.data.sort_values("depth"), div_chart.data
    # 1. norms by depth: one column per placement, the model's own first, each from our own forward
    assert list(norms.columns) == ["depth", *(f"{p}_norm" for p in order(own))]
    assert len(norms) == depth + 1
    for p in PLACEMENTS:
        want = [float(h.norm(dim=-1).mean()) for h in hs[p]]
        np.testing.assert_allclose(norms[f"{p}_norm"], want, rtol=1e-5, err_msg=p)
    names = NAMES[lang]
    lines = norms_chart.figure.data
    assert [tr.name for tr in lines[:4]] == [names[own] + (" · this model" if lang == "en" else " · 本模型"),
                                             *(names[p] for p in order(own)[1:])]
    assert lines[0].line.width > max(tr.line.width for tr in lines[1:4])  # the model's own placement stands out
    for trace, p in zip(lines, order(own)):
        np.testing.assert_allclose(trace.y, norms[f"{p}_norm"], rtol=1e-6, atol=1e-7)
    tops = [norms[f"{p}_norm"].max() for p in PLACEMENTS]
    assert (norms_chart.layout["yaxis"].get("type") == "log") == (max(tops) > 10 * min(tops))
    # 2. drift from the own placement: every other placement, cosine and relative difference per depth
    shown = placements(div, "depth", order(own)[1:])
    assert set(div["placement"]) == set(order(own)[1:])
    for p, rows in shown.items():
        ref, other = hs[own], hs[p]
        cos = [float(torch.nn.functional.cosine_similarity(b, a, dim=-1).mean()) for a, b in zip(ref, other)]
        rel = [float(((b - a).norm(dim=-1) / a.norm(dim=-1)).mean()) for a, b in zip(ref, other)]
        np.testing.assert_allclose(rows["cosine"], np.clip(cos, -1, 1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rows["rel_l2"], rel, rtol=1e-5, atol=1e-6)
        assert rows["cosine"].iloc[0] == 1.0 and rows["rel_l2"].iloc[0] == 0.0  # the shared embedding: identical
    panels = div_chart.figure.data
    assert [tr.name for tr in panels[::2]] == [names[p] for p in order(own)[1:]]
    for k, p in enumerate(order(own)[1:]):
        np.testing.assert_allclose(panels[2 * k].y, shown[p]["cosine"], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(panels[2 * k + 1].y, shown[p]["rel_l2"], rtol=1e-6, atol=1e-7)
    # 3. gradients by parameter group, with .backward() on our own models
    if ids.shape[1] >= 2:
        grad_chart = charts(gradient_norm_lines)
        assert grad_chart.layout["yaxis"]["type"] == "log"
        shown = placements(grad_chart.data, "layer")
        for trace, p in zip(grad_chart.figure.data, order(own)):
            want = analysis.gradient_norms(models[p], ids)["grad_norm"].to_numpy()
            np.testing.assert_allclose(shown[p]["grad_norm"], want, rtol=1e-5, err_msg=p)
            np.testing.assert_allclose(trace.y, shown[p]["grad_norm"], rtol=1e-6)
        m = models[own]
        m(ids, labels=ids).loss.backward()
        blocks = [math.sqrt(sum(float((q.grad.double() ** 2).sum()) for q in layer.parameters())) for layer in m.layers]
        np.testing.assert_allclose(shown[own]["grad_norm"].to_numpy()[1:depth + 1], blocks, rtol=1e-4)


def norm_sentence_numbers(norms, names: dict) -> dict:
    """What the sentence under the norms chart must quote: the placement that grows the most and by how much."""
    growth = {p: norms[f"{p}_norm"].iloc[-1] / norms[f"{p}_norm"].iloc[0] for p in PLACEMENTS}
    top, low = max(growth, key=growth.get), min(growth, key=growth.get)
    return dict(top=names[top], low=names[low], growth=f"{growth[top]:.3g}", ratio=f"{growth[top] / growth[low]:.3g}")


def test_navigation_app_defaults(charts):
    """Through app.py's st.navigation: run, switch, set the sidebar state, run again."""
    at = open_page("prepost")  # settled: the first run after switching still carries the switch's widget options
    check_against_engine(at, charts, {})
    assert any("Xiong et al. 2020" in m.value for m in at.markdown)


def test_defaults_match_engine_and_shared_model_untouched(charts):
    config = sidebar_config({})
    cached = build_model(config.to_json(), 0)  # the very object the page gets (cache_resource, same process)
    before = checksum(cached)
    at = run_page()
    check_against_engine(at, charts, {})
    assert build_model(config.to_json(), 0) is cached
    assert checksum(cached) == before
    assert all(p.grad is None for p in cached.parameters())
    assert cached.config.norm_position == "pre" and not cached.training
    # the trend sentence quotes the chart's numbers
    g = analysis.gradient_norms(fresh_pair(config)[0], sidebar_ids({}, config))["grad_norm"]
    assert any(f"{g[1]:.3g} → {g[2]:.3g}" in m.value for m in at.markdown)
    # the sentence under the norms chart: which placement's norm grows the most with depth, by what factor
    n = norm_sentence_numbers(charts.data(placement_norm_lines), NAMES["en"])
    text = texts(at)
    assert (f"{n['top']}'s grows the most with depth, ×{n['growth']} from the embedding, {n['ratio']}× {n['low']}'s"
            in text), text
    assert "2 of 4 per block" in text and "scale 1" in text  # the sandwich's two extra norms, at their init


def test_post_norm_and_depth_override(charts):
    state = {"cfg.norm_position": "post", "cfg.hidden_size": 32}
    config = sidebar_config(state)
    cached = build_model(config.to_json(), 0)
    before = checksum(cached)
    at = run_page(**state, **{"prepost.depth": 5})
    check_against_engine(at, charts, state, depth=5)
    assert any("uses 5 layers" in c.value for c in at.caption)
    assert checksum(cached) == before and all(p.grad is None for p in cached.parameters())
    deep = build_model(config.replace(num_hidden_layers=5).to_json(), 0)
    assert all(p.grad is None for p in deep.parameters())


def test_depth_follows_sidebar_until_moved(charts):
    at = run_page(**{"cfg.num_hidden_layers": 3})
    assert at.slider(key="prepost.depth").value == 3
    at.session_state["cfg.num_hidden_layers"] = 4
    at.run()
    assert at.slider(key="prepost.depth").value == 4  # untouched: follows the sidebar
    at.slider(key="prepost.depth").set_value(6).run()
    at.session_state["cfg.num_hidden_layers"] = 2
    at.run()
    assert at.slider(key="prepost.depth").value == 6  # moved by the user: kept
    check_against_engine(at, charts, {"cfg.num_hidden_layers": 2}, depth=6)


@pytest.mark.parametrize("state", [
    {"cfg.num_hidden_layers": 1, "cfg.num_attention_heads": 1, "cfg.num_key_value_heads": 1},
    {"cfg.position_embedding": "rope", "cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 2,
     "cfg.norm_type": "rmsnorm", "cfg.ffn": "swiglu", "cfg.tie_word_embeddings": False},
    {"input.mode": "random", "input.random_len": 12, "cfg.vocab_size": 64},
    {"input.text": "😀😀😀"},
], ids=["1layer-1head", "rope-gqa-untied", "random-ids", "unseen-chars"])
def test_variants_match_engine(state, charts):
    check_against_engine(run_page(**state), charts, state)


def test_depth_48_small_hidden(charts):
    state = {"cfg.hidden_size": 16, "cfg.intermediate_size": 32, "cfg.num_hidden_layers": 2}
    at = run_page(**state, **{"prepost.depth": 48})
    assert not at.exception
    grads = placements(charts.data(gradient_norm_lines), "layer")
    assert all(len(grads[p]) == 48 + 2 for p in PLACEMENTS)
    assert [len(tr.y) for tr in charts(gradient_norm_lines).figure.data] == [48 + 2] * 4
    drift = placements(charts.data(divergence_lines), "depth", ("post", "sandwich", "post_sublayer"))
    assert all(len(d) == 48 + 1 for d in drift.values())
    assert [len(tr.y) for tr in charts(divergence_lines).figure.data] == [48 + 1] * 6
    assert len(charts.data(placement_norm_lines)) == 48 + 1


def test_single_token_says_gradient_needs_two(charts):
    state = {"input.mode": "random", "input.random_len": 1}
    at = run_page(**state)
    check_against_engine(at, charts, state)
    assert len(at.get("plotly_chart")) == 2
    assert any("at least two tokens" in i.value for i in at.info)


def test_empty_text_is_a_message():
    at = run_page(**{"input.text": ""})
    assert not at.exception
    assert any("empty" in i.value for i in at.info)
    assert not at.get("plotly_chart")


ASKED = {"prepost.scaling_asked": True}  # a session that pressed the depth sweep's button: its sweeps follow


def test_chinese(charts):
    at = run_page(**{"ui.lang": "zh"}, **ASKED)
    check_against_engine(at, charts, {}, lang="zh")
    n = norm_sentence_numbers(charts.data(placement_norm_lines), NAMES["zh"])
    assert f"{n['top']} 随深度增长最多，从嵌入起增大到 {n['growth']} 倍" in texts(at)
    assert charts(gradient_norm_lines).layout["xaxis"]["ticktext"][0] == "嵌入"
    assert any("Xiong" in m.value and "定理 1" in m.value for m in at.markdown)
    assert any("第 1 层 → 第 2 层" in m.value for m in at.markdown)  # the generated sentences, in Chinese
    assert charts(depth_scaling_lines).layout["xaxis"]["title"]["text"] == "Block 数 L（对数坐标）"


@pytest.mark.parametrize("state, lang", [
    ({"cfg.norm_position": "sandwich"}, "en"),
    ({"cfg.norm_position": "post_sublayer", "cfg.norm_type": "rmsnorm", "cfg.position_embedding": "rope"}, "zh"),
    ({"cfg.norm_position": "sandwich", "cfg.norm_type": "gemma_rmsnorm", "cfg.num_hidden_layers": 3}, "zh"),
], ids=["sandwich-en", "olmo2-order-zh", "gemma-norm-zh"])
def test_sandwich_and_olmo2_models_are_compared_too(state, lang, charts):
    """A model placed as the sandwich or in OLMo-2's order no longer stops: all four placements on its weights,
    its own first and highlighted, every chart's table against independently built models."""
    at = run_page(**state, **{"ui.lang": lang}, **ASKED)
    check_against_engine(at, charts, state, lang=lang)
    own = state["cfg.norm_position"]
    assert not at.info or all("Pre" not in i.value for i in at.info)  # no "cannot compare" box
    assert list(charts.data(gradient_norm_lines)["placement"].unique()) == order(own)
    assert list(charts.data(depth_scaling_lines)["placement"].unique()) == order(own)
    assert charts(depth_scaling_lines).figure.data[0].line.width > charts(depth_scaling_lines).figure.data[1].line.width
    text = texts(at)
    if own == "sandwich":  # every norm of the other three has a counterpart in a sandwich model
        assert ("none here" if lang == "en" else "这里没有") in text
    else:  # OLMo-2's order lacks the norms before each sub-layer: Pre, Post and the sandwich start them at init
        assert "Pre-Norm 每层 2 个中的 2 个" in text and "三明治（Gemma） 每层 4 个中的 2 个" in text


def test_gemma3_like_preset_at_another_depth(charts):
    """The Gemma-3-like preset (sandwich, Gemma's norm, 5 local : 1 global layers) at 8 layers: the page repeats
    its layer pattern and compares the four placements."""
    from settings.schema import preset_values

    at = run_page(**{**DEFAULTS, **preset_values("gemma3_like"), "cfg.preset": "gemma3_like", "ui.lang": "en",
                     "prepost.depth": 8})
    assert not at.exception, at.exception
    norms = charts.data(placement_norm_lines)
    assert list(norms.columns) == ["depth", "sandwich_norm", "pre_norm", "post_norm", "post_sublayer_norm"]
    assert len(norms) == 8 + 1 and np.isfinite(norms.to_numpy()).all()
    assert charts(placement_norm_lines).figure.data[0].name == "Sandwich (Gemma) · this model"


def test_huge_init_never_shows_nan_as_a_number():
    at = run_page(**{"cfg.initializer_range": 1e20})
    assert_huge_init_is_said_in_words(at)


# ---------------------------------------------------------------------------------------------------
# sentences from the charts' numbers (issue: one rule, never a pattern the chart does not show)
# ---------------------------------------------------------------------------------------------------


def run_page_slow(state: dict) -> AppTest:
    """The page in English with DEFAULTS updated by ``state``; a long timeout (the depth sweep builds 40 models)."""
    at = open_page("prepost", via="script", timeout=300, **state)
    assert not at.exception, at.exception
    return at


def test_depth_profile_rule_hand_computed():
    # Post-Norm at init: block 1 ~12x the rest, blocks 2..L flat within 2 %
    p = analysis.depth_profile([1.51, 0.123, 0.121, 0.122])
    assert p["step_kind"] == "shrinks" and p["step"] == pytest.approx(0.123 / 1.51)
    assert p["rest_kind"] == "flat" and p["rest_spread"] == pytest.approx(0.123 / 0.121)
    # Pre-Norm at init: falling all the way
    assert analysis.depth_profile([3.13, 2.23, 1.7, 1.53, 1.4])["rest_kind"] == "shrinks"
    # a hump is neither growth nor shrinkage
    p = analysis.depth_profile([1.0, 2.0, 5.0, 2.0])
    assert p["rest_kind"] == "mixed" and (p["rest_lowest"], p["rest_highest"]) == (2, 3)
    # the trend is the rank correlation with depth (|rho| >= 0.8), not the ends being the extremes
    assert analysis.depth_profile([1.0, 2.0, 2.5, 2.2, 4.0])["rest_kind"] == "grows"  # one step back: rho +0.8
    assert analysis.depth_profile([1.0, 2.0, 4.0, 1.5, 3.0])["rest_kind"] == "mixed"  # rho 0
    assert analysis.depth_profile([1.0, 2.0, 1.9, 4.0])["rest_kind"] == "mixed"  # 3 blocks: rho +0.5
    assert analysis.depth_profile([2.0, 1.0])["rest_kind"] == ""  # L = 2: block 1 -> 2 only
    assert analysis.depth_profile([1.0]) == {"L": 1}
    assert analysis.depth_profile([1.0, float("nan"), 2.0]) == {"L": 3}


def test_gradient_sentences_say_what_the_chart_shows_at_depth_12(charts):
    """At 12 layers Post-Norm's blocks 2..12 are flat and block 1 stands apart: the page must say exactly that,
    with the chart's own numbers, and never that Post-Norm "shrinks toward the output" over blocks 2..12."""
    at = run_page_slow({"cfg.num_hidden_layers": 12})
    grad = {k: v["grad_norm"].to_numpy() for k, v in placements(charts.data(gradient_norm_lines), "layer").items()}
    text = " ".join(m.value for m in at.markdown)
    for key, name in NAMES["en"].items():
        y = grad[key][1:13]  # blocks 1..12 (x = 1..12); 0 is the embedding, 13 the final norm + head
        assert f"**{name}**: block 1 → block 2: {y[0]:.3g} → {y[1]:.3g}" in text
        assert f"blocks 2 → 12: {y[1]:.3g} → {y[11]:.3g}" in text
    post = grad["post"][2:13]
    assert post.max() / post.min() <= 1.25  # flat on the chart ...
    sentence = text[text.index("**Post-Norm**"):text.index("**Sandwich")]
    assert "roughly flat" in sentence and "shrinks" not in sentence  # ... and in words
    pre = grad["pre"][2:13]
    # Pre-Norm falls on the chart: highest at block 2, lowest at block 12, no step up by more than 10 % ...
    assert pre.argmax() == 0 and pre.argmin() == 10 and (pre[1:] <= pre[:-1] * 1.10).all() and pre[-1] < pre[0] / 1.25
    assert "shrinks toward the output" in text[text.index("**Pre-Norm**"):text.index("**Post-Norm**")]  # ... and in words
    last = {k: v[12] for k, v in grad.items()}
    top, low = max(last, key=last.get), min(last, key=last.get)
    names = NAMES["en"]
    assert (f"At block 12, {names[top]}'s gradient norm is the largest, {last[top] / last[low]:.2g}× {names[low]}'s"
            in text)


def test_xiong_scaling_chart_against_an_independent_computation(charts, monkeypatch):
    """The last block's gradient for L = 2 .. 48 (small model), the 1/sqrt(L) reference and the fitted slopes.
    The sweep (40 models) waits for its button, after the page's other charts are drawn, and is computed once
    for every session: a second session with the same settings draws it without a button or a computation."""
    import ui.widgets
    from server.bytecache import shared_cache

    shared_cache().clear()  # not computed by an earlier test of this process
    events = []
    real_chart, real_sweep = ui.widgets.chart, analysis.last_block_gradient_by_depth
    monkeypatch.setattr(ui.widgets, "chart", lambda fig, data, key, *a, **kw: (events.append(key),
                                                                               real_chart(fig, data, key, *a, **kw)))
    monkeypatch.setattr(analysis, "last_block_gradient_by_depth",
                        lambda *a, **kw: (events.append("sweep"), real_sweep(*a, **kw))[1])
    state = {"cfg.hidden_size": 16, "cfg.num_attention_heads": 2, "cfg.num_key_value_heads": 2,
             "cfg.intermediate_size": 32, "cfg.vocab_size": 256, "input.text": "床前明月光，疑是地上霜。"}
    at = run_page_slow(state)
    first = ["prepost.norms", "prepost.divergence", "prepost.gradients"]
    assert events == first  # every chart but the sweep's, which has not started
    assert not any(e.type == "plotly_chart" and "scaling" in str(e.proto) for e in at.main)
    assert "computed when asked for" in texts(at)
    at.button(key="prepost.scaling_run").click().run()
    assert not at.exception, at.exception
    assert events[:3] == first and events[3:6] == first  # the click's rerun draws the first charts first ...
    assert events[6:] == ["sweep"] * 10 + ["prepost.scaling"]  # ... then the 10 depths, then their chart
    again = run_page_slow(state)  # another session, same settings: the chart at once, nothing computed
    assert "prepost.scaling_run" not in [b.key for b in again.button] and events.count("sweep") == 10 and events[-1] == "prepost.scaling"
    scaling = charts(depth_scaling_lines)
    assert scaling.layout["xaxis"]["type"] == "log" and scaling.layout["yaxis"]["type"] == "log"
    shown = placements(scaling.data, "layers")
    L = shown["pre"]["layers"].to_numpy()
    assert all(list(shown[p]["layers"]) == [2, 3, 4, 6, 8, 12, 16, 24, 32, 48] for p in PLACEMENTS)
    config = sidebar_config(state)
    ids = sidebar_ids(state, config)
    for k in (0, 3):  # L = 2 and L = 6, computed with .backward() on independently built models
        for key, model in fresh_models(config.replace(num_hidden_layers=int(L[k]))).items():
            model(ids, labels=ids).loss.backward()
            want = float(torch.sqrt(sum((p.grad.double() ** 2).sum() for p in model.layers[-1].parameters())))
            assert shown[key]["grad_norm"].iloc[k] == pytest.approx(want, rel=1e-4)
    y_pre, y_post = shown["pre"]["grad_norm"].to_numpy(), shown["post"]["grad_norm"].to_numpy()
    c = np.exp(np.mean(np.log(y_pre) + 0.5 * np.log(L)))  # the c / sqrt(L) closest to Pre-Norm in log space
    assert scaling.arguments["reference_c"] == pytest.approx(c, rel=1e-5)
    *lines, ref_t = scaling.figure.data  # the chart: the four placements (own first) and the reference curve
    assert [tr.name for tr in lines] == ["Pre-Norm · this model", *(NAMES["en"][p] for p in PLACEMENTS[1:])]
    for trace, p in zip(lines, PLACEMENTS):
        np.testing.assert_allclose(trace.x, L)
        np.testing.assert_allclose(trace.y, shown[p]["grad_norm"], rtol=1e-6)
    np.testing.assert_allclose(ref_t.y, c / np.sqrt(L), rtol=1e-5)
    slopes = {p: np.polyfit(np.log(L), np.log(shown[p]["grad_norm"].to_numpy()), 1)[0] for p in PLACEMENTS}
    text = " ".join(m.value for m in at.markdown)
    for p, name in NAMES["en"].items():
        change = shown[p]["grad_norm"].iloc[-1] / shown[p]["grad_norm"].iloc[0]
        assert f"{name} ∝ L^{slopes[p]:+.2f} (×{change:.2g})" in text
    top, low = max(slopes, key=slopes.get), min(slopes, key=slopes.get)
    assert f"The largest exponent is {NAMES['en'][top]}'s, the smallest {NAMES['en'][low]}'s" in text
    assert "1/√L" in text and "Theorem 1" in text


def test_presenter_mode_first_chart_fits_a_projector_screen():
    """Presenter mode at 1280 x 720: the first chart (norms by depth) is the page's main chart, which fills what
    the title and the depth slider leave of the screen (it was 400 px x 1.25 = 500 px, of which the first screen
    showed only the top; the browser test measures the fit: tests/browser/test_browser_layout.py); the "same
    weights" caption sits below the chart, not between the slider and the chart."""
    normal, presenter = run_page(), run_page(**{"ui.presenter": True})
    for at in (normal, presenter):
        assert not at.exception, at.exception
    first = {name: shown_chart(at, "prepost.norms")["layout"]  # two sessions: the charts as each page shows them
             for name, at in (("normal", normal), ("presenter", presenter))}
    # the figure's height in presenter mode is only its first draw's: the browser sizes it to the space left
    assert first["normal"]["height"] == 400 and first["presenter"]["height"] == PRESENTER_FILL_PX
    assert "Mean residual L2 norm by depth" in first["presenter"]["title"]["text"]
    assert first["presenter"]["font"]["size"] > first["normal"]["font"]["size"]  # the fonts are still enlarged
    # the first element after the depth slider is the chart: no caption in between
    main = [e for e in presenter.main if e.type in ("slider", "plotly_chart", "caption")]
    kinds = [e.type for e in main]
    assert kinds[kinds.index("slider") + 1] == "plotly_chart", kinds
