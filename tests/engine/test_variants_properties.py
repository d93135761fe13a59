"""Properties of the block variants since GPT-2 (QK-norm, sliding windows, sinks, ...), each against an
independent reference: plain causal attention, the formula, or the variant switched off."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import CausalLM, KVCache, ModelConfig
from engine.config import LAYER_TYPES, QK_NORMS
from engine.layers import ATTENTION_MASKS, QK_NORMS as QK_NORM_MODULES, eager_attention, sdpa_attention, sliding_window_mask

BASE = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            intermediate_size=64, hidden_act="silu", mlp_gated=True, norm_type="rmsnorm", position_embedding="rope",
            max_position_embeddings=64, bias=False)


def _model(seed: int = 0, **fields) -> CausalLM:
    torch.manual_seed(seed)
    return CausalLM(ModelConfig(**(BASE | fields)))


def _ids(T: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, 99, (2, T), generator=torch.Generator().manual_seed(seed))


def test_registries_match_the_valid_strings():
    assert set(QK_NORM_MODULES) == set(QK_NORMS) == {"none", "per_head", "per_projection"}
    assert set(ATTENTION_MASKS) == set(LAYER_TYPES) == {"full_attention", "sliding_attention"}


# ---- QK-norm -------------------------------------------------------------------------------------


@pytest.mark.parametrize("qk_norm", ["per_head", "per_projection"])
def test_qk_norm_with_unit_weights_keeps_q_and_k_at_rms_one(qk_norm):
    model = _model(qk_norm=qk_norm, norm_eps=1e-12)
    rec = model(_ids(7), output_activations=True).activations
    for i in range(2):
        for name in ("attn.hook_q", "attn.hook_k"):  # after RoPE, which rotates pairs and keeps each head's norm
            x = rec[f"blocks.{i}.{name}"].double()  # (B, nh, T, hd)
            if qk_norm == "per_head":
                rms = x.pow(2).mean(-1).sqrt()  # (B, nh, T): every head of every token
            else:  # one norm over all heads of the projection (k repeated for GQA: repeats keep the mean square)
                rms = x.pow(2).mean(dim=(1, 3)).sqrt()  # (B, T)
            assert torch.allclose(rms, torch.ones_like(rms), atol=1e-5), (i, name)


def test_qk_norm_weights_are_the_transformers_shapes():
    head = _model(qk_norm="per_head").layers[0].self_attn
    whole = _model(qk_norm="per_projection").layers[0].self_attn
    assert head.q_norm.weight.shape == head.k_norm.weight.shape == (8,)  # head_dim, shared by the heads (Qwen3)
    assert (whole.q_norm.weight.shape, whole.k_norm.weight.shape) == ((32,), (16,))  # nh*hd, nkv*hd (OLMo-2)
    assert "layers.0.self_attn.q_norm.weight" not in _model().state_dict()  # "none" adds nothing


def test_qk_norm_makes_queries_scale_free():
    """RMSNorm on q and k: scaling W_q and W_k changes nothing (up to eps), unlike plain attention."""
    for qk_norm, same in (("per_head", True), ("none", False)):
        model = _model(qk_norm=qk_norm, norm_eps=1e-12)
        before = model(_ids(6)).logits
        with torch.no_grad():
            for layer in model.layers:
                layer.self_attn.q_proj.weight.mul_(7.0)
                layer.self_attn.k_proj.weight.mul_(3.0)
        assert torch.allclose(model(_ids(6)).logits, before, atol=1e-5) == same, qk_norm


# ---- sliding windows -----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(T=st.integers(1, 12), past=st.integers(0, 12), window=st.integers(1, 14))
def test_sliding_mask_is_the_causal_band(T, past, window):
    mask = sliding_window_mask(T, past, window)
    kept = min(past, window - 1)
    assert mask.shape == (T, kept + T)
    for i in range(T):
        q = past + i
        for j in range(kept + T):
            k = past - kept + j
            assert bool(mask[i, j]) == (k > q or q - k >= window)
    assert not mask.all(dim=-1).any()  # every query sees at least itself


@settings(max_examples=8, deadline=None)
@given(T=st.integers(1, 10), extra=st.integers(0, 5), seed=st.integers(0, 3))
def test_window_at_least_the_sequence_equals_full_causal_attention(T, extra, seed):
    full = _model(seed)
    sliding = _model(seed, sliding_window=T + extra)
    assert sliding.layers[0].self_attn.layer_type == "sliding_attention"
    ids = _ids(T, seed)
    a, b = full(ids, output_attentions=True), sliding(ids, output_attentions=True)
    assert torch.equal(a.logits, b.logits)
    for x, y in zip(a.attentions, b.attentions):
        assert torch.equal(x, y)


def test_a_window_shorter_than_the_sequence_blocks_old_keys_exactly():
    model = _model(sliding_window=3, layer_types=("sliding_attention", "full_attention"))
    attn = model(_ids(8), output_attentions=True).attentions
    band = ~sliding_window_mask(8, 0, 3)  # (T, T): True where a key is inside the window
    assert torch.equal(attn[0] > 0, band.expand_as(attn[0]))  # softmax of finite scores: > 0 exactly there
    assert (attn[1][..., 0] > 0).all()  # the full layer still sees key 0 from every query
    assert torch.allclose(attn[0].sum(-1), torch.ones(2, 4, 8))


def test_sliding_cache_keeps_at_most_the_window_and_decodes_exactly():
    model = _model(sliding_window=4, layer_types=("sliding_attention", "full_attention"))
    ids = _ids(12, seed=3)
    full = model(ids).logits
    cache = KVCache()
    steps = [model(ids[:, :6], past_key_values=cache).logits]  # prefill longer than the window
    for t in range(6, 12):
        steps.append(model(ids[:, t:t + 1], past_key_values=cache).logits)
        assert (cache.num_cached(0), cache.num_cached(1), cache.get_seq_length()) == (3, t + 1, t + 1)
    assert torch.allclose(torch.cat(steps, 1), full, atol=1e-5)
    assert cache.num_bytes() == (3 + 12) * 2 * 2 * 2 * 8 * 4  # (3 + 12 positions) x K,V x B x n_kv x hd x 4 bytes


@pytest.mark.parametrize("fields, words", [
    (dict(sliding_window=65), ["sliding_window=65", "max_position_embeddings=64"]),
    (dict(sliding_window=0), ["sliding_window", "0"]),
    (dict(sliding_window=4, layer_types=("full_attention",)), ["layer_types", "num_hidden_layers=2"]),
    (dict(sliding_window=4, layer_types=("full_attention", "local")), ["layer_types", "local", "sliding_attention"]),
    (dict(layer_types=("full_attention", "sliding_attention")), ["sliding_attention", "sliding_window is null"]),
    (dict(qk_norm="both"), ["qk_norm", "both", "per_head", "per_projection"]),
])
def test_invalid_combinations_name_the_values(fields, words):
    with pytest.raises(ValueError) as err:
        ModelConfig(**(BASE | fields))
    for word in words:
        assert word in str(err.value)


def test_layer_types_round_trip_through_json():
    c = ModelConfig(**(BASE | dict(sliding_window=4, layer_types=["sliding_attention", "full_attention"])))
    assert c.layer_types == ("sliding_attention", "full_attention") and hash(c)
    assert ModelConfig.from_dict(__import__("json").loads(c.to_json())) == c


# ---- attention sinks -----------------------------------------------------------------------------


@pytest.mark.parametrize("attention", [eager_attention, sdpa_attention])
def test_a_sink_of_minus_infinity_equals_no_sink(attention):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 4, 5, 8, generator=g) for _ in range(3))
    mask = sliding_window_mask(5, 0, 3)
    plain = eager_attention(q, k, v, mask)
    sunk = attention(q, k, v, mask, sinks=torch.full((4,), -math.inf), causal=False)
    assert torch.allclose(sunk, plain, atol=1e-6)


def test_sink_share_is_the_extra_softmax_column():
    model = _model(attention_sinks=True)
    with torch.no_grad():
        for layer in model.layers:
            layer.self_attn.sinks.copy_(torch.tensor([-2.0, 0.0, 1.0, 3.0]))
    out = model(_ids(6), output_activations=True, output_attentions=True)
    rec = out.activations
    scores = rec["blocks.0.attn.hook_attn_scores"]  # (B, nh, T, S), -inf on future keys
    sinks = model.layers[0].self_attn.sinks.view(1, 4, 1)
    share = torch.exp(sinks) / (torch.exp(scores).sum(-1) + torch.exp(sinks))  # (B, nh, T), the formula
    assert torch.allclose(rec["blocks.0.attn.hook_sink"], share, atol=1e-6)
    assert torch.allclose(out.attentions[0].sum(-1) + share, torch.ones_like(share), atol=1e-6)
    assert torch.allclose(model(_ids(6)).logits, out.logits, atol=1e-5)  # SDPA path with the sink as a column
    assert model.layers[0].self_attn.sinks.shape == (4,)


# ---- norm placements, Gemma's norm, soft-capping ---------------------------------------------------


@pytest.mark.parametrize("placement, norms", [
    ("sandwich", ["input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"]),
    ("post_sublayer", ["post_attention_layernorm", "post_feedforward_layernorm"]),
])
def test_placement_norms_and_breakdown(placement, norms):
    model = _model(norm_position=placement)
    names = {n.split(".")[2] for n in model.state_dict() if n.startswith("layers.0.") and "layernorm" in n}
    assert names == set(norms)
    assert sum(n for _, n in model.parameter_breakdown()) == model.num_parameters()
    rec = model(_ids(5), output_activations=True).activations
    assert torch.equal(rec["blocks.0.hook_attn_out"], rec["blocks.0.ln1_post.hook_normalized"])
    mid = rec["blocks.0.hook_resid_mid"]
    assert torch.equal(mid, rec["blocks.0.hook_resid_pre"] + rec["blocks.0.hook_attn_out"])  # the norm is in the branch


def test_post_sublayer_branch_outputs_have_rms_one_with_unit_weights():
    """OLMo-2's order: what each sub-layer adds to the stream is normalised (RMS 1), the stream itself is not."""
    rec = _model(norm_position="post_sublayer", norm_eps=1e-12)(_ids(5), output_activations=True).activations
    for name in ("hook_attn_out", "hook_mlp_out"):
        rms = rec[f"blocks.1.{name}"].pow(2).mean(-1).sqrt()
        assert torch.allclose(rms, torch.ones_like(rms), atol=1e-5)


def test_gemma_norm_with_zero_weight_equals_rmsnorm_with_unit_weight():
    from engine.layers import GemmaRMSNorm, RMSNorm
    x = torch.randn(3, 5, 16, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(GemmaRMSNorm(16, eps=1e-6)(x), RMSNorm(16, eps=1e-6)(x), atol=1e-6)


def test_soft_capping_bounds_the_logits_and_is_identity_without_a_cap():
    capped = _model(final_logit_softcapping=0.5, attn_logit_softcapping=0.25)
    out = capped(_ids(6), output_activations=True)
    assert out.logits.abs().max() < 0.5
    scores = out.activations["blocks.0.attn.hook_attn_scores"]
    assert scores[torch.isfinite(scores)].abs().max() < 0.25
    assert torch.allclose(capped(_ids(6)).logits, out.logits, atol=1e-6)  # the SDPA request falls back to eager


def test_sinks_with_a_sliding_window_decode_exactly():
    model = _model(attention_sinks=True, sliding_window=3, layer_types=("sliding_attention", "full_attention"))
    with torch.no_grad():
        for layer in model.layers:
            layer.self_attn.sinks.copy_(torch.tensor([-1.0, 0.5, 2.0, 0.0]))
    ids = _ids(9, seed=4)
    full = model(ids).logits
    cache = KVCache()
    steps = [model(ids[:, :4], past_key_values=cache).logits]
    steps += [model(ids[:, t:t + 1], past_key_values=cache, output_attentions=True).logits for t in range(4, 9)]
    assert torch.allclose(torch.cat(steps, 1), full, atol=1e-5)


# ---- mixture of experts ----------------------------------------------------------------------------


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 5), gated=st.booleans())
def test_one_expert_top1_equals_the_dense_ffn_of_that_expert(seed, gated):
    from engine.layers import MLP, MoE

    config = ModelConfig(**(BASE | dict(num_local_experts=1, num_experts_per_tok=1, mlp_gated=gated)))
    torch.manual_seed(seed)
    moe = MoE(config)
    dense = MLP(config)
    dense.load_state_dict(moe.experts[0].state_dict())
    x = torch.randn(2, 5, 32, generator=torch.Generator().manual_seed(seed))
    assert torch.allclose(moe(x), dense(x), atol=1e-6)


def test_all_experts_chosen_is_the_probability_weighted_sum():
    from engine.layers import MoE

    config = ModelConfig(**(BASE | dict(num_local_experts=3, num_experts_per_tok=3, shared_expert_intermediate_size=8)))
    torch.manual_seed(1)
    moe = MoE(config)
    x = torch.randn(2, 4, 32, generator=torch.Generator().manual_seed(1))
    probs = torch.softmax(moe.gate(x), -1)  # (B, T, E)
    expected = sum(probs[..., e:e + 1] * moe.experts[e](x) for e in range(3))
    expected = expected + torch.sigmoid(moe.shared_expert_gate(x)) * moe.shared_expert(x)
    assert torch.allclose(moe(x), expected, atol=1e-6)


def test_moe_model_records_routing_and_counts_parameters():
    from engine.cost import active_parameter_count, parameter_count

    model = _model(num_local_experts=4, num_experts_per_tok=2, moe_intermediate_size=16)
    rec = model(_ids(6), output_activations=True).activations
    idx, w = rec["blocks.0.mlp.hook_expert_indices"], rec["blocks.0.mlp.hook_expert_weights"]
    assert idx.shape == w.shape == (2, 6, 2) and rec["blocks.0.mlp.hook_router_logits"].shape == (2, 6, 4)
    assert torch.allclose(w.sum(-1), torch.ones(2, 6))  # norm_topk_prob: the chosen two sum to 1
    assert parameter_count(model.config) == model.num_parameters()
    expert = 3 * 32 * 16  # gate, up, down of one expert
    assert parameter_count(model.config) - active_parameter_count(model.config) == 2 * 2 * expert  # 2 idle x 2 layers
    cache = KVCache()
    ids = _ids(7, seed=5)
    steps = [model(ids[:, :3], past_key_values=cache).logits] + [
        model(ids[:, t:t + 1], past_key_values=cache).logits for t in range(3, 7)]
    assert torch.allclose(torch.cat(steps, 1), model(ids).logits, atol=1e-5)


@pytest.mark.parametrize("fields, words", [
    (dict(num_local_experts=2, num_experts_per_tok=3), ["num_experts_per_tok=3", "num_local_experts=2"]),
    (dict(num_local_experts=-1), ["num_local_experts", "-1"]),
    (dict(num_local_experts=2, moe_intermediate_size=0), ["moe_intermediate_size", "0"]),
])
def test_invalid_expert_settings_name_the_values(fields, words):
    with pytest.raises(ValueError) as err:
        ModelConfig(**(BASE | fields))
    for word in words:
        assert word in str(err.value)


# ---- gpt-oss: YaRN and the clamped SwiGLU ------------------------------------------------------------


def test_yarn_with_factor_one_is_plain_rope():
    from engine.layers import rope_cos_sin, rope_tables

    config = ModelConfig(**(BASE | dict(rope_type="yarn", rope_factor=1.0, rope_original_max_position_embeddings=32)))
    pos = torch.arange(20)
    for a, b in zip(rope_tables(config, pos, 10000.0), rope_cos_sin(pos, 8, 10000.0)):
        assert torch.allclose(a, b, atol=1e-6)


def test_yarn_interpolates_slow_dimensions_and_keeps_fast_ones():
    from engine.layers import yarn_inv_freq

    config = ModelConfig(**(BASE | dict(head_dim=32, rope_type="yarn", rope_factor=8.0,
                                        rope_original_max_position_embeddings=64)))
    inv_freq, scaling = yarn_inv_freq(config, 10000.0)
    plain = 1.0 / 10000.0 ** (torch.arange(0, 32, 2) / 32)
    assert torch.allclose(inv_freq[0], plain[0]) and torch.allclose(inv_freq[-1], plain[-1] / 8)
    assert scaling == pytest.approx(0.1 * math.log(8) + 1)


def test_clamped_swiglu_without_reaching_the_limit_is_swish_times_up_plus_one():
    from engine.layers import clamped_swiglu

    g = torch.linspace(-3, 3, 25)
    u = torch.linspace(-2, 2, 25)
    assert torch.allclose(clamped_swiglu(g, u, limit=10.0, alpha=1.702), g * torch.sigmoid(1.702 * g) * (u + 1))
    big = clamped_swiglu(torch.tensor([50.0]), torch.tensor([50.0]), limit=7.0, alpha=1.702)
    assert torch.allclose(big, torch.tensor([8 * 7 * torch.sigmoid(torch.tensor(7 * 1.702)).item()]))


@pytest.mark.parametrize("fields, words", [
    (dict(rope_type="yarn"), ["rope_original_max_position_embeddings"]),
    (dict(rope_type="ntk"), ["rope_type", "ntk", "yarn"]),
    (dict(swiglu_limit=0.0), ["swiglu_limit"]),
])
def test_invalid_gpt_oss_settings_name_the_values(fields, words):
    with pytest.raises(ValueError) as err:
        ModelConfig(**(BASE | fields))
    for word in words:
        assert word in str(err.value)


# ---- variant presets and the windowed cache size ----------------------------------------------------


@pytest.mark.parametrize("name", ["qwen3_like", "gemma3_like", "olmo2_like", "gpt_oss_like", "minimind_moe"])
def test_variant_presets_build_count_and_decode(name):
    from engine import VARIANT_PRESET_SOURCES, VARIANT_PRESETS
    from engine.cost import parameter_count
    from engine.kv_cache import config_kv_cache_bytes

    config = VARIANT_PRESETS[name]
    assert VARIANT_PRESET_SOURCES[name]
    torch.manual_seed(0)
    model = CausalLM(config)
    assert parameter_count(config) == model.num_parameters()
    ids = torch.randint(0, config.vocab_size, (1, 9), generator=torch.Generator().manual_seed(0))
    cache = KVCache()
    steps = [model(ids[:, :5], past_key_values=cache).logits] + [
        model(ids[:, t:t + 1], past_key_values=cache).logits for t in range(5, 9)]
    assert torch.allclose(torch.cat(steps, 1), model(ids).logits, atol=1e-4)
    assert cache.num_bytes() == config_kv_cache_bytes(config, 9, 4)


def test_windowed_cache_size_matches_a_real_cache_and_gemma3s_saving():
    from engine.kv_cache import config_kv_cache_bytes, kv_cache_bytes

    model = _model(sliding_window=3, layer_types=("sliding_attention", "full_attention"))
    cache = KVCache()
    model(_ids(10), past_key_values=cache)
    assert cache.num_bytes() == config_kv_cache_bytes(model.config, 10, 4, batch_size=2)  # (2 + 10) positions
    gemma3 = ModelConfig(**(BASE | dict(num_hidden_layers=6, sliding_window=512, max_position_embeddings=32768,
                                        layer_types=("sliding_attention",) * 5 + ("full_attention",))))
    full = kv_cache_bytes(6, gemma3.kv_heads, gemma3.head_dim, 32768, 2)
    windowed = config_kv_cache_bytes(gemma3, 32768, 2)
    assert windowed / full == pytest.approx((5 * 511 + 32768) / (6 * 32768))  # about 0.18 of the full cache


# ---- RoPE up close --------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None, derandomize=True)
@given(m=st.integers(0, 64), n=st.integers(0, 64), shift=st.integers(0, 64), theta=st.sampled_from([1e4, 1e5, 1e6]))
def test_rope_score_depends_only_on_the_distance(m, n, shift, theta):
    """q_m . k_n after rotation equals q_{m+s} . k_{n+s} for any shift s: the score sees only m - n, to 1e-5 for
    unit q and k (the cos/sin tables are float32, as transformers': an angle p * freq carries ~p * 6e-8 rad)."""
    from engine.layers import apply_rope, rope_cos_sin

    g = torch.Generator().manual_seed(m * 1000 + n)
    q, k = (torch.nn.functional.normalize(torch.randn(1, 1, 1, 16, generator=g, dtype=torch.float64), dim=-1)
            for _ in range(2))

    def score(a: int, b: int) -> float:
        cq, sq = (t.double() for t in rope_cos_sin(torch.tensor([a]), 16, theta))
        ck, sk = (t.double() for t in rope_cos_sin(torch.tensor([b]), 16, theta))
        return float((apply_rope(q, cq, sq) * apply_rope(k, ck, sk)).sum())

    assert score(m, n) == pytest.approx(score(m + shift, n + shift), abs=1e-5)
