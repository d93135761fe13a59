"""AppTest of the RoPE page (app_pages/rope.py): every DataFrame given to its charts equals an independent
computation (numpy rotations by hand, θ_i = θ^(−2i/d), a fresh model's own q_proj/k_proj rotated by hand), in
English and Chinese, on the default random model (learned positions: no RoPE) and on the Llama-style preset."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from engine import PRESETS
from engine.tokenizer import bundled_tokenizer
from tests.browser.test_browser_zh import english_words
from tests.page_helpers import open_page, state_config
from ui.figures.rope import distance_chart, relative_heatmap, rotation_chart, wavelength_chart
from settings.schema import DEFAULT_TEXT, all_presets, preset_values

LLAMA = {**preset_values("llama_small"), "cfg.preset": "llama_small"}
KINDS = ("title", "subheader", "markdown", "caption", "info", "warning", "error", "success")


def main_texts(at) -> list[str]:
    """Every text of the page's main area (the sidebar is other pages' business)."""
    return [str(e.value) for kind in KINDS for e in at.main.get(kind)]


def figure_strings(fig) -> list[str]:
    """Titles, axis titles, subplot titles, trace names and hover templates of a figure."""
    out = []

    def walk(v, key=""):
        if isinstance(v, str) and key in ("text", "name", "hovertemplate"):
            out.append(v)
        elif isinstance(v, dict):
            for k, w in v.items():
                walk(w, k)
        elif isinstance(v, list):
            for w in v:
                walk(w, key)

    walk(json.loads(fig.to_json()))
    return out


def freqs(theta: float, d: int) -> np.ndarray:
    return theta ** (-2.0 * np.arange(d // 2) / d)


def turn(x: np.ndarray, positions: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``x`` ``[..., P, d]``: plane (i, i + d/2) of row p turned by positions[p]·θ_i (a 2 × 2 rotation, numpy)."""
    half = x.shape[-1] // 2
    ang = positions[:, None] * f[None, :]  # (P, d/2)
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([c * a - s * b, s * a + c * b], axis=-1)


def check_first_three(at, charts, theta: float, d: int, context: int, T: int, last: int) -> None:
    assert not at.exception, at.exception
    f = freqs(theta, d)
    half = d // 2
    # 1. the rotation of (1, 0) in planes 0, d/4, d/2 - 1 at positions 0 .. last
    path = charts.data(rotation_chart)
    planes = sorted({0, half // 2, half - 1})
    assert sorted(set(path["plane"])) == planes
    for i in planes:
        part = path[path["plane"] == i].sort_values("position")
        m = np.arange(last + 1)
        np.testing.assert_array_equal(part["position"], m)
        np.testing.assert_allclose(part["x"], np.cos(m * f[i]), atol=2e-6)
        np.testing.assert_allclose(part["y"], np.sin(m * f[i]), atol=2e-6)
        np.testing.assert_allclose(part["angle"], m * f[i], rtol=1e-6, atol=1e-12)
    # 2. the wavelengths, with the context and the input marked
    wave = charts(wavelength_chart)
    main = wave.data[wave.data["base"] == theta].sort_values("plane")
    np.testing.assert_allclose(main["wavelength"], 2 * math.pi / f, rtol=1e-6)
    assert wave.arguments["context"] == context and wave.arguments["input_len"] == T
    assert wave.layout["yaxis"]["type"] == "log"
    # 3. the m − n check: the same random unit q, k (seed 0), 48 positions, rotated by hand
    check = charts.data(relative_heatmap)
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(d, generator=gen).double().numpy(), torch.randn(d, generator=gen).double().numpy()
    q, k = q / np.linalg.norm(q), k / np.linalg.norm(k)
    pos = np.arange(48)
    want = turn(np.tile(q, (48, 1)), pos, f) @ turn(np.tile(k, (48, 1)), pos, f).T  # (48, 48)
    np.testing.assert_allclose(check.pivot(index="m", columns="n", values="score").to_numpy(), want, atol=1e-6)
    spread = check.groupby("distance")["score"].agg(np.ptp).max()
    assert spread < 1e-5
    shown = "\n".join(main_texts(at))
    assert f"{spread:.1e}" in shown, shown  # the sentence's number is the chart's


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_random_model_without_rope(charts, lang):
    at = open_page("rope", via="script", lang=lang)
    config, _ = state_config()
    assert config.position_embedding == "learned" and config.head_dim == 16
    T = len(bundled_tokenizer(config.vocab_size).encode(DEFAULT_TEXT))
    check_first_three(at, charts, 10_000.0, 16, config.max_position_embeddings, T, 16)
    assert not charts.all(distance_chart)  # no real head without RoPE, said in words
    infos = [e.value for e in at.main.info]
    assert len(infos) == 2 and all(("RoPE" in s) for s in infos), infos
    if lang == "en":
        assert "does not use RoPE" in infos[0] and "10,000" in infos[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_llama_preset_real_head(charts, lang):
    state = {**LLAMA, "rope.layer": 3, "rope.head": 6, "rope.positions": 10}
    at = open_page("rope", via="script", lang=lang, **state)
    config = PRESETS["llama_small"]
    ids = bundled_tokenizer(config.vocab_size).encode(DEFAULT_TEXT)
    T = len(ids)
    check_first_three(at, charts, config.rope_theta, config.head_dim, config.max_position_embeddings, T, 10)
    # 4. layer 3, head 6 (1-based): the fresh model's q_proj / k_proj outputs rotated by hand, q · k / √d by distance
    torch.manual_seed(0)
    from engine import CausalLM

    model = CausalLM(config)
    with torch.no_grad():
        x = model(torch.tensor([ids]), output_activations=True).activations["blocks.2.ln1.hook_normalized"][0]
        attn = model.layers[2].self_attn
        q = attn.q_proj(x).view(T, config.num_attention_heads, -1)[:, 5].double().numpy()  # (T, hd)
        kv_head = 5 // (config.num_attention_heads // config.kv_heads)
        k = attn.k_proj(x).view(T, config.kv_heads, -1)[:, kv_head].double().numpy()  # (T, hd)
    f, pos = freqs(config.rope_theta, config.head_dim), np.arange(T)
    s = turn(q, pos, f) @ turn(k, pos, f).T / math.sqrt(config.head_dim)  # (T, T)
    got = charts.data(distance_chart)
    assert list(got["distance"]) == list(range(T))
    for dist in range(T):
        diag = np.diagonal(s, offset=-dist)
        row = got.iloc[dist]
        assert row["pairs"] == T - dist
        np.testing.assert_allclose([row["mean"], row["min"], row["max"]], [diag.mean(), diag.min(), diag.max()],
                                   atol=1e-5)
    means = np.array([np.diagonal(s, offset=-d).mean() for d in range(T)])
    shown = "\n".join(main_texts(at))
    assert f"{means.max():.3f}" in shown and f"{means[0]:.3f}" in shown, shown
    assert at.main.warning  # random weights, said so
    if lang == "en":
        assert f"highest at distance {int(means.argmax())} " in shown


def test_zh_page_has_no_english_words(charts):
    """The Chinese page's texts and its charts' titles, names and hovers: names like RoPE, θ, q, k only."""
    for state in ({}, LLAMA):
        at = open_page("rope", via="script", lang="zh", **state)
        assert not at.exception
        found = {w for s in main_texts(at) for w in english_words(s)}
        found |= {w for call in charts.calls for s in figure_strings(call.figure) for w in english_words(s)}
        assert not found, found


def test_reached_through_the_navigation(charts):
    """app.py's PAGES line: the page opens from the app with its title in the navigation."""
    at = open_page("rope", via="switch", lang="en")
    assert not at.exception
    assert at.main.title[0].value.startswith("RoPE up close")
    assert charts.all(rotation_chart) and charts.all(wavelength_chart) and charts.all(relative_heatmap)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("preset, still", [("qwen3_like", True), ("llama_small", False)])
def test_slowest_plane_sentence_states_its_measured_angle(charts, preset, still, lang):
    """Issue 32 (lesson 7 step 5): the slowest plane was said to "tell any two positions in the context apart"
    while it turns 1.2e-3 rad over Qwen3-like's 512 positions. The sentence gives its angle between positions 0
    and context − 1, (context − 1) · θ^(−(d − 2)/d) by the formula, and calls it nearly constant only under
    0.1 rad (Qwen3-like, base 1,000,000: 0.00121 rad; Llama-style, base 10,000: 0.162 rad)."""
    config = all_presets()[preset]
    theta, d, context = float(config.rope_theta), config.head_dim, config.max_position_embeddings
    step = theta ** (-(d - 2) / d)  # the last plane's θ_i, i = d/2 − 1
    angle = (context - 1) * step
    assert (angle < 0.1) == still and 2 * math.pi / step > context
    at = open_page("rope", via="script", lang=lang, **{**preset_values(preset), "cfg.preset": preset})
    assert not at.exception, at.exception
    wave = charts.data(wavelength_chart)
    np.testing.assert_allclose(wave[wave["base"] == theta]["theta_i"].min(), step, rtol=1e-6)  # the chart's plane
    shown = "\n".join(main_texts(at))
    a, deg, last = f"{angle:.3g}", f"{math.degrees(angle):.3g}", f"{context - 1:,}"
    said = {("en", True): f"between positions 0 and {last} it turns by only {a} rad ({deg}°). It is nearly constant",
            ("en", False): f"between positions 0 and {last} it turns by {a} rad ({deg}°), less than one full turn",
            ("zh", True): f"从位置 0 到 {last}，它只转了 {a} 弧度（{deg}°）。它在整个上下文内几乎不变",
            ("zh", False): f"从位置 0 到 {last}，它转了 {a} 弧度（{deg}°），不到一整圈"}[lang, still]
    assert said in shown, shown
    if not still:
        assert f"neighbours by only {step:.3g} rad" in shown or f"相邻位置只差 {step:.3g} 弧度" in shown
    assert "any two" not in shown and "任意两个位置" not in shown
