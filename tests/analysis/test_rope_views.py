"""analysis/rope.py against independent formulas: numpy rotations by hand (the "rotate half" layout, plane i =
dimensions i and i + d/2), θ_i = θ^(−2i/d), the wavelength 2π/θ_i, and the m − n invariance of a rotated pair."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from analysis import rope
from engine import PRESETS, VARIANT_PRESETS, ModelConfig


def plain_freqs(theta: float, d: int) -> np.ndarray:
    """θ_i = θ^(−2i/d), i = 0 .. d/2 − 1, in float64 (Su et al. 2021)."""
    return theta ** (-2.0 * np.arange(d // 2) / d)


def rotate_by_hand(x: np.ndarray, positions: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """``x`` ``[P, d]`` with each plane (i, i + d/2) of row p turned by positions[p]·θ_i, a 2 × 2 rotation each."""
    half = x.shape[1] // 2
    out = np.empty_like(x, dtype=np.float64)
    for p, m in enumerate(positions):
        for i in range(half):
            c, s = math.cos(m * freqs[i]), math.sin(m * freqs[i])
            a, b = x[p, i], x[p, i + half]
            out[p, i], out[p, i + half] = c * a - s * b, s * a + c * b
    return out


CONFIGS = {"llama_small": PRESETS["llama_small"], "qwen3_like": VARIANT_PRESETS["qwen3_like"],
           "gpt_oss_like": VARIANT_PRESETS["gpt_oss_like"]}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_frequencies_are_theta_to_the_minus_two_i_over_d(name):
    cfg = CONFIGS[name]
    np.testing.assert_allclose(rope.frequencies(cfg), plain_freqs(cfg.rope_theta, cfg.head_dim), rtol=1e-6)
    np.testing.assert_allclose(rope.frequencies(cfg, 500.0), plain_freqs(500.0, cfg.head_dim), rtol=1e-6)


def test_yarn_keeps_the_fast_planes_and_divides_the_slow_ones():
    """YaRN (the engine's inv_freq): planes turning more than beta_fast times over the original context keep
    their frequency, planes turning fewer than beta_slow times are divided by the factor."""
    cfg = PRESETS["llama_small"].replace(head_dim=64, rope_type="yarn", rope_factor=8.0,
                                         rope_original_max_position_embeddings=4096)
    plain, got = plain_freqs(cfg.rope_theta, 64), rope.frequencies(cfg)
    turns = 4096 * plain / (2 * math.pi)  # full turns over the original context
    fast, slow = turns > cfg.rope_beta_fast * 1.5, turns < cfg.rope_beta_slow / 1.5
    assert fast.any() and slow.any()
    np.testing.assert_allclose(got[fast], plain[fast], rtol=1e-6)
    np.testing.assert_allclose(got[slow], plain[slow] / 8.0, rtol=1e-6)


def test_rotation_path_is_the_unit_vector_turned_by_m_theta_i():
    cfg = PRESETS["llama_small"]  # d = 16: planes 0, 4, 7
    planes = rope.planes_to_show(cfg.head_dim)
    assert planes == [0, 4, 7]
    path = rope.rotation_path(cfg, planes, 20)
    freqs = plain_freqs(cfg.rope_theta, cfg.head_dim)
    assert len(path) == 3 * 21
    for i in planes:
        part = path[path["plane"] == i].sort_values("position")
        m = part["position"].to_numpy()
        np.testing.assert_array_equal(m, np.arange(21))
        np.testing.assert_allclose(part["angle"], m * freqs[i], rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(part["turns"], m * freqs[i] / (2 * math.pi), rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(part["x"], np.cos(m * freqs[i]), atol=2e-6)
        np.testing.assert_allclose(part["y"], np.sin(m * freqs[i]), atol=2e-6)


def test_rotate_matches_a_hand_rotation_of_every_plane():
    cfg = VARIANT_PRESETS["qwen3_like"]  # d = 32, θ = 1,000,000
    x = torch.randn(7, cfg.head_dim, generator=torch.Generator().manual_seed(3))
    pos = torch.tensor([0, 1, 2, 5, 17, 40, 63])
    got = rope.rotate(cfg, x, pos).double().numpy()
    want = rotate_by_hand(x.double().numpy(), pos.numpy(), plain_freqs(cfg.rope_theta, cfg.head_dim))
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_planes_to_show_for_tiny_heads():
    assert rope.planes_to_show(2) == [0]
    assert rope.planes_to_show(4) == [0, 1]
    assert rope.planes_to_show(64) == [0, 16, 31]


def test_wavelengths_are_two_pi_over_theta_i():
    cfg = VARIANT_PRESETS["gemma3_like"]  # global base 1e6, sliding layers 1e4, d = 64
    bases = rope.rope_bases(cfg)
    assert bases == [1_000_000.0, 10_000.0]
    w = rope.wavelengths(cfg, bases, context=512)
    assert len(w) == 2 * 32
    for base in bases:
        part = w[w["base"] == base].sort_values("plane")
        want = 2 * math.pi * base ** (2.0 * np.arange(32) / 64)
        np.testing.assert_allclose(part["wavelength"], want, rtol=1e-6)
        np.testing.assert_allclose(part["turns"], 512 / want, rtol=1e-6)
    assert w["wavelength"].iloc[0] == pytest.approx(2 * math.pi, rel=1e-6)  # plane 0 turns 1 rad per token


def test_layer_theta_follows_the_layer_type():
    cfg = VARIANT_PRESETS["gemma3_like"]
    assert [rope.layer_theta(cfg, i) for i in range(6)] == [10_000.0] * 5 + [1_000_000.0]
    assert rope.layer_theta(PRESETS["llama_small"], 2) == 10_000.0


def test_relative_check_scores_equal_a_hand_rotation_and_depend_only_on_m_minus_n():
    cfg = PRESETS["llama_small"]
    check = rope.relative_check(cfg, n_positions=24, seed=5)
    gen = torch.Generator().manual_seed(5)  # the same random q and k, drawn again
    q, k = torch.randn(16, generator=gen).double().numpy(), torch.randn(16, generator=gen).double().numpy()
    q, k = q / np.linalg.norm(q), k / np.linalg.norm(k)
    pos = np.arange(24)
    freqs = plain_freqs(cfg.rope_theta, 16)
    qs, ks = rotate_by_hand(np.tile(q, (24, 1)), pos, freqs), rotate_by_hand(np.tile(k, (24, 1)), pos, freqs)
    want = qs @ ks.T  # (24, 24) in float64
    got = check.pivot(index="m", columns="n", values="score").to_numpy()
    np.testing.assert_allclose(got, want, atol=1e-6)
    np.testing.assert_array_equal(check["distance"], check["m"] - check["n"])
    # the property itself, by hand in float64: every diagonal is one value
    for dist in range(-23, 24):
        diag = np.diagonal(want, offset=-dist)
        assert np.ptp(diag) < 1e-12, dist
    # the engine's float32: the same to rounding; relative_spread reports the largest spread of the scores
    stats = rope.relative_spread(check)
    spreads = check.groupby("distance")["score"].agg(np.ptp)
    assert stats["spread"] == pytest.approx(spreads.max()) and stats["spread"] < 1e-5
    assert stats["distance"] == spreads.idxmax()
    assert stats["pairs"] == 24 * 24 and stats["distances"] == 47
    assert stats["range"] == pytest.approx(want.max() - want.min(), abs=1e-6)
    assert stats["range"] > 0.05  # the score does change with the distance


def test_relative_check_far_from_zero_still_holds():
    """Positions 1,000 .. 1,047: still only float32 rounding (the issue's bound, 1e-5)."""
    stats = rope.relative_spread(rope.relative_check(PRESETS["llama_small"], 48, first_position=1000))
    assert stats["spread"] < 1e-5


def test_rope_config_of_a_model_without_rope():
    cfg = ModelConfig(vocab_size=50, hidden_size=64, num_hidden_layers=1, num_attention_heads=4)
    assert cfg.position_embedding == "learned"
    r = rope.rope_config(cfg)
    assert (r.position_embedding, r.rope_theta, r.head_dim) == ("rope", rope.DEFAULT_THETA, 16) and rope.DEFAULT_THETA == 10_000
    odd = ModelConfig(vocab_size=50, hidden_size=6, num_hidden_layers=1, num_attention_heads=2)  # head_dim 3
    assert rope.rope_config(odd).head_dim == 4
    assert rope.rope_config(PRESETS["llama_small"]) is PRESETS["llama_small"]


def test_head_scores_by_distance_average_each_diagonal():
    gen = torch.Generator().manual_seed(1)
    T, hd = 6, 4
    q, k = torch.randn(1, 2, T, hd, generator=gen), torch.randn(1, 2, T, hd, generator=gen)
    out = SimpleNamespace(activations={"blocks.1.attn.hook_q": q, "blocks.1.attn.hook_k": k})
    got = rope.head_scores_by_distance(out, 1, 1, 0.5)
    qn, kn = q[0, 1].double().numpy(), k[0, 1].double().numpy()
    for dist in range(T):
        vals = [float(qn[m] @ kn[m - dist]) * 0.5 for m in range(dist, T)]  # query m, key m − dist
        row = got[got["distance"] == dist].iloc[0]
        assert row["mean"] == pytest.approx(np.mean(vals)) and row["min"] == pytest.approx(min(vals))
        assert row["max"] == pytest.approx(max(vals)) and row["pairs"] == T - dist
    assert list(got["distance"]) == list(range(T))


def test_attention_scale():
    assert rope.attention_scale(PRESETS["llama_small"]) == pytest.approx(16 ** -0.5)
    assert rope.attention_scale(VARIANT_PRESETS["gemma3_like"]) == pytest.approx(64 ** -0.5)
