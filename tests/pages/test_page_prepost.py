"""AppTest of the Pre vs Post page (app_pages/prepost.py): charts checked against the engine, shared model untouched.

The page's url_path ("pre-vs-post") differs from its file stem, so AppTest cannot select it before a first run
of app.py, and after a run a value set through ``at.session_state`` is lost on ``switch_page`` (Streamlit 1.67's
AppTest keeps no widget state across a page switch). So one test walks the navigation app (run, switch, set state, run); the other scenarios run the
page script itself (it renders the shared sidebar through ``explorer()``) with the state set up front.
"""

from __future__ import annotations


import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from tests.model_helpers import checksum
from tests.page_helpers import assert_huge_init_is_said_in_words, open_page, shown_chart, state_config

import analysis
from engine import CausalLM, ModelConfig
from engine.tokenizer import train_bpe
from ui.figures.common import PRESENTER_FILL_PX
from ui.figures.prepost import depth_scaling_lines, divergence_lines, gradient_norm_lines, placement_norm_lines
from ui.sidebar import DEFAULTS, MAX_TOKENS, build_model



def run_page(**state) -> AppTest:
    return open_page("prepost", via="script", defaults=False, timeout=180, **state)  # the depth sweep: 20 models






def sidebar_config(state: dict) -> ModelConfig:
    """The sidebar's ModelConfig for these widget values (same mapping as ui.sidebar.config_widgets)."""
    return state_config(**state)[0]


def sidebar_ids(state: dict, config: ModelConfig) -> torch.Tensor:
    s = {**DEFAULTS, **state}
    if s["input.mode"] == "random":
        gen = torch.Generator().manual_seed(int(s["cfg.seed"]))
        return torch.randint(0, config.vocab_size, (1, s["input.random_len"]), generator=gen)
    return torch.tensor([train_bpe(config.vocab_size).encode(s["input.text"])[:MAX_TOKENS]])


def fresh_pair(config: ModelConfig, seed: int = 0) -> tuple[CausalLM, CausalLM]:
    """Independently built (pre, post) models with identical weights: seed, build, copy the state dict."""
    torch.manual_seed(seed)
    a = CausalLM(config)
    other = "post" if config.norm_position == "pre" else "pre"
    b = CausalLM(config.replace(norm_position=other))
    b.load_state_dict(a.state_dict())
    return (a, b) if config.norm_position == "pre" else (b, a)


def placements(df, order: str) -> dict:
    """A chart table's rows of each placement ("pre", "post"), sorted by ``order``."""
    return {k: df[df["placement"] == k].sort_values(order) for k in ("pre", "post")}


def check_against_engine(at: AppTest, charts, state: dict, depth: int | None = None) -> None:
    assert not at.exception, at.exception
    config = sidebar_config(state)
    depth = depth or config.num_hidden_layers
    config = config.replace(num_hidden_layers=depth)
    ids = sidebar_ids(state, config)
    pre, post = fresh_pair(config)
    norms_chart, div_chart = charts(placement_norm_lines), charts(divergence_lines)
    norms, div = norms_chart.data.sort_values("depth"), div_chart.data.sort_values("depth")
    # divergence, computed with our own forward passes
    with torch.no_grad():
        # the residual stream before the final norm: hidden_states[:-1] plus block L's raw output
        hp, hq = ([*o.hidden_states[:-1], o.activations[f"blocks.{depth - 1}.hook_resid_post"]]
                  for o in (pre(ids, output_hidden_states=True, output_activations=True),
                            post(ids, output_hidden_states=True, output_activations=True)))
    cos = [float(torch.nn.functional.cosine_similarity(a[0].double(), b[0].double(), dim=-1).mean()) for a, b in zip(hp, hq)]
    rel = [float(((a[0] - b[0]).double().norm(dim=-1) / a[0].double().norm(dim=-1)).mean()) for a, b in zip(hp, hq)]
    pre_norm = [float(torch.linalg.vector_norm(a[0].double(), dim=-1).mean()) for a in hp]
    post_norm = [float(torch.linalg.vector_norm(b[0].double(), dim=-1).mean()) for b in hq]
    assert len(div) == depth + 1
    np.testing.assert_allclose(norms["pre_norm"], pre_norm, rtol=1e-5)
    np.testing.assert_allclose(norms["post_norm"], post_norm, rtol=1e-5)
    np.testing.assert_allclose(div["cosine"], np.clip(cos, -1, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(div["rel_l2"], rel, rtol=1e-5, atol=1e-6)
    # the charts draw these columns (float32) ...
    lines, panels = norms_chart.figure.data[:2], div_chart.figure.data  # the lines of pre and post, then √H
    for trace, values in zip([*lines, *panels], [norms["pre_norm"], norms["post_norm"], div["cosine"], div["rel_l2"]]):
        np.testing.assert_allclose(trace.y, values, rtol=1e-6, atol=1e-7)
    # ... and at depth 0, the shared embedding, they are exactly identical
    assert panels[0].y[0] == 1.0 and panels[1].y[0] == 0.0
    if ids.shape[1] >= 2:
        grad_chart = charts(gradient_norm_lines)
        assert grad_chart.layout["yaxis"]["type"] == "log"
        shown = placements(grad_chart.data, "layer")
        for trace, key, model in zip(grad_chart.figure.data, ("pre", "post"), (pre, post)):
            want = analysis.gradient_norms(model, ids)["grad_norm"].to_numpy()
            np.testing.assert_allclose(shown[key]["grad_norm"], want, rtol=1e-5)
            np.testing.assert_allclose(trace.y, shown[key]["grad_norm"], rtol=1e-6)
        assert all(p.grad is None for m in (pre, post) for p in m.parameters())


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
    assert len(placements(charts.data(gradient_norm_lines), "layer")["pre"]) == 48 + 2
    assert len(charts(gradient_norm_lines).figure.data[0].y) == 48 + 2
    assert len(charts.data(divergence_lines)) == len(charts(divergence_lines).figure.data[0].y) == 48 + 1


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


def test_chinese(charts):
    at = run_page(**{"ui.lang": "zh"})
    assert not at.exception
    assert charts(gradient_norm_lines).layout["xaxis"]["ticktext"][0] == "嵌入"
    assert any("Xiong" in m.value and "定理 1" in m.value for m in at.markdown)
    assert any("第 1 层 → 第 2 层" in m.value for m in at.markdown)  # the generated sentences, in Chinese
    assert charts(depth_scaling_lines).layout["xaxis"]["title"]["text"] == "Block 数 L（对数坐标）"


def test_huge_init_never_shows_nan_as_a_number():
    at = run_page(**{"cfg.initializer_range": 1e20})
    assert_huge_init_is_said_in_words(at)


# ---------------------------------------------------------------------------------------------------
# sentences from the charts' numbers (issue: one rule, never a pattern the chart does not show)
# ---------------------------------------------------------------------------------------------------


def run_page_slow(state: dict) -> AppTest:
    """The page in English with DEFAULTS updated by ``state``; a long timeout (the depth sweep builds 20 models)."""
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
    assert analysis.depth_profile([1.0, 2.0, 2.5, 2.3, 4.0])["rest_kind"] == "grows"  # 8 % back: within the slack
    assert analysis.depth_profile([1.0, 2.0, 2.5, 2.2, 4.0])["rest_kind"] == "mixed"  # 12 % back
    assert analysis.depth_profile([1.0, 2.0, 1.9, 4.0])["rest_kind"] == "mixed"  # the lowest is not block 2
    assert analysis.depth_profile([2.0, 1.0])["rest_kind"] == ""  # L = 2: block 1 -> 2 only
    assert analysis.depth_profile([1.0]) == {"L": 1}
    assert analysis.depth_profile([1.0, float("nan"), 2.0]) == {"L": 3}


def test_gradient_sentences_say_what_the_chart_shows_at_depth_12(charts):
    """At 12 layers Post-Norm's blocks 2..12 are flat and block 1 stands apart: the page must say exactly that,
    with the chart's own numbers, and never that Post-Norm "shrinks toward the output" over blocks 2..12."""
    at = run_page_slow({"cfg.num_hidden_layers": 12})
    grad = {k: v["grad_norm"].to_numpy() for k, v in placements(charts.data(gradient_norm_lines), "layer").items()}
    text = " ".join(m.value for m in at.markdown)
    for key, name in (("pre", "Pre-Norm"), ("post", "Post-Norm")):
        y = grad[key][1:13]  # blocks 1..12 (x = 1..12); 0 is the embedding, 13 the final norm + head
        assert f"**{name}**: block 1 → block 2: {y[0]:.3g} → {y[1]:.3g}" in text
        assert f"blocks 2 → 12: {y[1]:.3g} → {y[11]:.3g}" in text
    post = grad["post"][2:13]
    assert post.max() / post.min() <= 1.25  # flat on the chart ...
    sentence = text[text.index("**Post-Norm**"):text.index("At block 12")]
    assert "roughly flat" in sentence and "shrinks" not in sentence  # ... and in words
    pre = grad["pre"][2:13]
    # Pre-Norm falls on the chart: highest at block 2, lowest at block 12, no step up by more than 10 % ...
    assert pre.argmax() == 0 and pre.argmin() == 10 and (pre[1:] <= pre[:-1] * 1.10).all() and pre[-1] < pre[0] / 1.25
    assert "shrinks toward the output" in text[text.index("**Pre-Norm**"):text.index("**Post-Norm**")]  # ... and in words


def test_xiong_scaling_chart_against_an_independent_computation(charts):
    """The last block's gradient for L = 2 .. 48 (small model), the 1/sqrt(L) reference and the fitted slopes."""
    state = {"cfg.hidden_size": 16, "cfg.num_attention_heads": 2, "cfg.num_key_value_heads": 2,
             "cfg.intermediate_size": 32, "cfg.vocab_size": 256, "input.text": "床前明月光，疑是地上霜。"}
    at = run_page_slow(state)
    scaling = charts(depth_scaling_lines)
    assert scaling.layout["xaxis"]["type"] == "log" and scaling.layout["yaxis"]["type"] == "log"
    shown = placements(scaling.data, "layers")
    L = shown["pre"]["layers"].to_numpy()
    assert list(L) == list(shown["post"]["layers"]) == [2, 3, 4, 6, 8, 12, 16, 24, 32, 48]
    config = sidebar_config(state)
    ids = sidebar_ids(state, config)
    for k in (0, 3):  # L = 2 and L = 6, computed with .backward() on independently built twins
        pre, post = fresh_pair(config.replace(num_hidden_layers=int(L[k])))
        for model, key in ((pre, "pre"), (post, "post")):
            model(ids, labels=ids).loss.backward()
            want = float(torch.sqrt(sum((p.grad.double() ** 2).sum() for p in model.layers[-1].parameters())))
            assert shown[key]["grad_norm"].iloc[k] == pytest.approx(want, rel=1e-4)
    y_pre, y_post = shown["pre"]["grad_norm"].to_numpy(), shown["post"]["grad_norm"].to_numpy()
    c = np.exp(np.mean(np.log(y_pre) + 0.5 * np.log(L)))  # the c / sqrt(L) closest to Pre-Norm in log space
    assert scaling.arguments["reference_c"] == pytest.approx(c, rel=1e-5)
    pre_t, post_t, ref_t = scaling.figure.data  # the chart: both placements and the reference curve
    np.testing.assert_allclose(pre_t.x, L)
    np.testing.assert_allclose(pre_t.y, y_pre, rtol=1e-6)
    np.testing.assert_allclose(post_t.y, y_post, rtol=1e-6)
    np.testing.assert_allclose(ref_t.y, c / np.sqrt(L), rtol=1e-5)
    slopes = [np.polyfit(np.log(L), np.log(y), 1)[0] for y in (y_pre, y_post)]
    text = " ".join(m.value for m in at.markdown)
    assert f"Pre-Norm ∝ L^{slopes[0]:+.2f}" in text and f"Post-Norm ∝ L^{slopes[1]:+.2f}" in text
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
