"""Property tests of engine.CausalLM over the variant grid (hypothesis, tiny seeded models).

Every assertion compares against an independent reference: a torch built-in (F.cross_entropy, softmax), a
second model built differently (MHA with repeated K/V weights, the eager attention path), or an invariant
(causality, normalisation, storage sharing).
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import ACTIVATION_KEYS_PER_BLOCK, CausalLM, ModelConfig

V, H, L, N_HEADS, T = 99, 32, 2, 4, 7

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def configs(draw, **fixed) -> ModelConfig:
    """A tiny config with every variant axis drawn (``fixed`` pins some axes)."""
    fields = dict(
        norm_type=draw(st.sampled_from(["layernorm", "rmsnorm"])),
        norm_position=draw(st.sampled_from(["pre", "post"])),
        hidden_act=draw(st.sampled_from(["relu", "gelu", "gelu_new", "silu"])),
        mlp_gated=draw(st.booleans()),
        position_embedding=draw(st.sampled_from(["learned", "sinusoidal", "rope", "none"])),
        num_key_value_heads=draw(st.sampled_from([None, 1, 2, 4])),
        tie_word_embeddings=draw(st.booleans()),
        bias=draw(st.booleans()),
    )
    fields.update(fixed)
    return ModelConfig(
        vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=N_HEADS, intermediate_size=48,
        max_position_embeddings=16, **fields,
    )


def randomize(model: CausalLM, seed: int) -> CausalLM:
    """Overwrite every parameter with O(1) random values (norm weights around 1) so no sub-layer is trivial."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g)
            if "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * noise)
            elif "norm" in name:
                p.copy_(0.1 * noise)
            else:
                p.copy_(0.3 * noise)
    return model


def build(config: ModelConfig, seed: int) -> CausalLM:
    torch.manual_seed(seed)
    return randomize(CausalLM(config), seed)


def ids(seed: int, B: int = 2, T_: int = T) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed + 1)
    return torch.randint(0, V, (B, T_), generator=g)


seeds = st.integers(0, 2**16)


# ---------------------------------------------------------------------------------------------------
# causality
# ---------------------------------------------------------------------------------------------------


@SETTINGS
@given(configs(), seeds, st.integers(1, T - 1), st.integers(1, V - 1))
def test_changing_token_t_leaves_earlier_outputs_bit_identical(config, seed, t, delta):
    model = build(config, seed)
    x = ids(seed)
    y = x.clone()
    y[:, t] = (y[:, t] + delta) % V  # a different token at t
    assert not torch.equal(x, y)
    with torch.no_grad():
        for kwargs in ({}, {"output_attentions": True, "output_hidden_states": True}):
            a, b = model(x, **kwargs), model(y, **kwargs)
            assert torch.equal(a.logits[:, :t], b.logits[:, :t])
            # and the change is actually visible at t (otherwise the test proves nothing)
            assert not torch.equal(a.logits[:, t], b.logits[:, t])
            if kwargs:
                for ha, hb in zip(a.hidden_states, b.hidden_states):
                    assert torch.equal(ha[:, :t], hb[:, :t])
                for pa, pb in zip(a.attentions, b.attentions):
                    assert torch.equal(pa[:, :, :t, :], pb[:, :, :t, :])


# ---------------------------------------------------------------------------------------------------
# attention probabilities
# ---------------------------------------------------------------------------------------------------


@SETTINGS
@given(configs(), seeds)
def test_attention_rows_sum_to_one_and_upper_triangle_is_zero(config, seed):
    model = build(config, seed)
    with torch.no_grad():
        out = model(ids(seed), output_attentions=True)
    assert len(out.attentions) == L
    upper = torch.ones(T, T, dtype=torch.bool).triu(1)
    for pattern in out.attentions:
        assert pattern.shape == (2, N_HEADS, T, T)
        torch.testing.assert_close(pattern.sum(-1), torch.ones(2, N_HEADS, T), rtol=0, atol=1e-6)
        assert (pattern[..., upper] == 0).all()
        assert (pattern[..., ~upper] > 0).all()
        assert (pattern >= 0).all()


@SETTINGS
@given(configs(), seeds)
def test_sdpa_path_equals_eager_path(config, seed):
    model = build(config, seed)
    x = ids(seed)
    with torch.no_grad():
        fast = model(x).logits
        eager = model(x, output_attentions=True).logits
        cached = model(x, output_activations=True).logits
    # float32 rounding only (~1e-7 per op); the random O(1) weights give logits up to ~10, so scale atol
    scale = max(1.0, eager.abs().max().item())
    torch.testing.assert_close(fast, eager, rtol=0, atol=1e-5 * scale)
    # in float64 the two paths agree to rounding, so any real difference (mask, scale, GQA) would show
    model = model.double()
    with torch.no_grad():
        torch.testing.assert_close(model(x).logits, model(x, output_attentions=True).logits, rtol=0, atol=1e-10)
    assert torch.equal(eager, cached)


# ---------------------------------------------------------------------------------------------------
# logits_to_keep
# ---------------------------------------------------------------------------------------------------


@SETTINGS
@given(configs(), seeds, st.integers(1, T + 2))
def test_logits_to_keep_is_the_tail_of_full_logits(config, seed, k):
    model = build(config, seed)
    x = ids(seed)
    with torch.no_grad():
        full = model(x).logits
        kept = model(x, logits_to_keep=k).logits
    assert kept.shape == (2, min(k, T), V)
    if k >= T:
        assert torch.equal(kept, full)  # keeps all: the very same computation
    # k < T: bit identity would need the head run on all T positions (BLAS picks a different kernel for a
    # different number of rows, ~1e-6 apart), which defeats the point of logits_to_keep; so: close, and
    # bit-identical to the head applied to the tail of the final-norm output.
    torch.testing.assert_close(kept, full[:, T - min(k, T):], rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        normed = model(x, output_hidden_states=True).hidden_states[-1]  # after the final norm; same (SDPA) path
        assert torch.equal(kept, model.lm_head(normed[:, -k:]))


def test_logits_to_keep_negative_or_with_labels_raises():
    model = build(ModelConfig(vocab_size=V, hidden_size=H, num_hidden_layers=1, num_attention_heads=N_HEADS), 0)
    x = ids(0)
    with pytest.raises(ValueError, match="-1"):
        model(x, logits_to_keep=-1)
    with pytest.raises(ValueError, match="logits_to_keep"):
        model(x, labels=x, logits_to_keep=1)
    model(x, labels=x, logits_to_keep=0)  # 0 = keep all is fine with labels


# ---------------------------------------------------------------------------------------------------
# weight tying
# ---------------------------------------------------------------------------------------------------


@SETTINGS
@given(configs(tie_word_embeddings=True), seeds)
def test_tying_shares_storage_and_saves_v_times_h(config, seed):
    tied = build(config, seed)
    untied = build(config.replace(tie_word_embeddings=False), seed)
    assert tied.lm_head.weight is tied.embed_tokens.weight
    assert tied.lm_head.weight.data_ptr() == tied.embed_tokens.weight.data_ptr()
    assert untied.lm_head.weight.data_ptr() != untied.embed_tokens.weight.data_ptr()
    assert untied.num_parameters() - tied.num_parameters() == V * H
    by_hand = lambda m: sum({id(p): p.numel() for _, p in m.named_parameters(remove_duplicate=False)}.values())  # noqa: E731
    assert tied.num_parameters() == by_hand(tied)
    assert untied.num_parameters() == by_hand(untied)
    for m in (tied, untied):
        assert sum(n for _, n in m.parameter_breakdown()) == m.num_parameters()
    # a write through the embedding is visible in the head (one storage)
    with torch.no_grad():
        tied.embed_tokens.weight[3, 5] = 42.0
    assert tied.lm_head.weight[3, 5].item() == 42.0
    # the head's logits are hidden @ E^T
    with torch.no_grad():
        out = tied(ids(seed), output_activations=True)
    ref = out.activations["ln_final.hook_normalized"] @ tied.embed_tokens.weight.T
    torch.testing.assert_close(out.logits, ref, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------------
# loss
# ---------------------------------------------------------------------------------------------------


@SETTINGS
@given(configs(), seeds, st.floats(0.0, 0.9))
def test_loss_matches_cross_entropy_and_nanmean(config, seed, p_mask):
    model = build(config, seed)
    x = ids(seed, B=3)
    g = torch.Generator().manual_seed(seed + 7)
    labels = x.clone()
    labels[torch.rand(labels.shape, generator=g) < p_mask] = -100
    labels[0, 1] = x[0, 1]  # at least one supervised target
    with torch.no_grad():
        out = model(x, labels=labels)
    assert out.token_losses.shape == (3, T - 1)
    assert torch.equal(torch.isnan(out.token_losses), labels[:, 1:] == -100)
    ref = F.cross_entropy(out.logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100)
    torch.testing.assert_close(out.loss, ref, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out.loss, out.token_losses.nanmean(), rtol=1e-6, atol=1e-6)
    per_token = F.cross_entropy(out.logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), reduction="none",
                                ignore_index=-100).view(3, T - 1)
    mask = labels[:, 1:] != -100
    torch.testing.assert_close(out.token_losses[mask], per_token[mask], rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------------
# GQA == MHA with repeated K/V weights
# ---------------------------------------------------------------------------------------------------


def _repeat_heads(t: torch.Tensor, groups: int, head_dim: int) -> torch.Tensor:
    """Rows of a k/v projection weight [n_kv*hd, H] (or bias [n_kv*hd]) repeated per query-head group."""
    n_kv = t.shape[0] // head_dim
    return t.reshape(n_kv, head_dim, *t.shape[1:]).repeat_interleave(groups, dim=0).reshape(
        n_kv * groups * head_dim, *t.shape[1:])


@SETTINGS
@given(configs(), seeds, st.sampled_from([1, 2]))
def test_gqa_equals_mha_with_repeated_kv(config, seed, n_kv):
    config = config.replace(num_key_value_heads=n_kv)
    gqa = build(config, seed)
    mha = CausalLM(config.replace(num_key_value_heads=None))
    groups, hd = N_HEADS // n_kv, H // N_HEADS
    state = {}
    for name, tensor in gqa.state_dict().items():
        if ".k_proj." in name or ".v_proj." in name:
            tensor = _repeat_heads(tensor, groups, hd)
        state[name] = tensor
    mha.load_state_dict(state, strict=True)
    assert mha.layers[0].self_attn.k_proj.weight.shape == (H, H)
    assert gqa.layers[0].self_attn.k_proj.weight.shape == (n_kv * hd, H)
    x = ids(seed)
    with torch.no_grad():
        for kwargs in ({}, {"output_attentions": True}):
            a, b = gqa(x, **kwargs).logits, mha(x, **kwargs).logits
            # float32 round-off grows with the logits' size (O(1) random weights give logits near 10)
            tol = 1e-5 * max(1.0, float(b.abs().max()))
            torch.testing.assert_close(a, b, rtol=1e-5, atol=tol)
    assert mha.num_parameters() > gqa.num_parameters()


# ---------------------------------------------------------------------------------------------------
# Pre/Post share one state dict
# ---------------------------------------------------------------------------------------------------


@SETTINGS
@given(configs(norm_position="pre"), seeds)
def test_pre_and_post_share_state_dict(config, seed):
    pre = build(config, seed)
    post = CausalLM(config.replace(norm_position="post"))
    assert sorted(pre.state_dict()) == sorted(post.state_dict())
    result = post.load_state_dict(pre.state_dict(), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    for (n1, p1), (n2, p2) in zip(pre.state_dict().items(), post.state_dict().items()):
        assert n1 == n2 and torch.equal(p1, p2)
    # and back
    pre2 = CausalLM(config)
    pre2.load_state_dict(post.state_dict(), strict=True)
    x = ids(seed)
    with torch.no_grad():
        assert torch.equal(pre(x).logits, pre2(x).logits)
        # same weights, different wiring: different function
        assert not torch.allclose(pre(x).logits, post(x).logits)


# ---------------------------------------------------------------------------------------------------
# activation record (TransformerLens names)
# ---------------------------------------------------------------------------------------------------

ACTIVATION_KEYS_1_LAYER_ADDITIVE = [
    "blocks.0.attn.hook_attn_scores",
    "blocks.0.attn.hook_attn_scores_raw",
    "blocks.0.attn.hook_k",
    "blocks.0.attn.hook_pattern",
    "blocks.0.attn.hook_q",
    "blocks.0.attn.hook_v",
    "blocks.0.attn.hook_z",
    "blocks.0.hook_attn_out",
    "blocks.0.hook_mlp_out",
    "blocks.0.hook_resid_mid",
    "blocks.0.hook_resid_post",
    "blocks.0.hook_resid_pre",
    "blocks.0.ln1.hook_normalized",
    "blocks.0.ln2.hook_normalized",
    "blocks.0.mlp.hook_post",
    "blocks.0.mlp.hook_pre",
    "hook_embed",
    "hook_pos_embed",
    "ln_final.hook_normalized",
]


@pytest.mark.parametrize("position_embedding", ["learned", "sinusoidal", "rope", "none"])
@pytest.mark.parametrize("norm_position", ["pre", "post"])
def test_cache_keys_pinned_for_one_layer(position_embedding, norm_position):
    config = ModelConfig(vocab_size=V, hidden_size=H, num_hidden_layers=1, num_attention_heads=N_HEADS,
                         num_key_value_heads=2, position_embedding=position_embedding, norm_position=norm_position)
    model = build(config, 0)
    with torch.no_grad():
        out = model(ids(0), output_activations=True)
    expected = list(ACTIVATION_KEYS_1_LAYER_ADDITIVE)
    if position_embedding in ("rope", "none"):
        expected.remove("hook_pos_embed")
    assert sorted(out.activations) == expected
    assert sorted("blocks.0." + k for k in ACTIVATION_KEYS_PER_BLOCK) == [k for k in expected if k.startswith("blocks.0.")]
    hd = H // N_HEADS
    shapes = {
        "attn.hook_q": (2, N_HEADS, T, hd), "attn.hook_k": (2, N_HEADS, T, hd), "attn.hook_v": (2, N_HEADS, T, hd),
        "attn.hook_attn_scores_raw": (2, N_HEADS, T, T), "attn.hook_attn_scores": (2, N_HEADS, T, T),
        "attn.hook_pattern": (2, N_HEADS, T, T), "attn.hook_z": (2, T, N_HEADS, hd),
        "mlp.hook_pre": (2, T, config.intermediate_size), "mlp.hook_post": (2, T, config.intermediate_size),
    }
    for key in ACTIVATION_KEYS_PER_BLOCK:
        assert tuple(out.activations["blocks.0." + key].shape) == shapes.get(key, (2, T, H)), key
    assert out.activations["hook_embed"].shape == (2, T, H)
    if "hook_pos_embed" in out.activations:
        assert out.activations["hook_pos_embed"].shape == (2, T, H)
    # without output_activations there is no activation record
    assert model(ids(0)).activations is None


@SETTINGS
@given(configs(), seeds)
def test_cache_scores_pattern_and_attentions_agree(config, seed):
    model = build(config, seed)
    with torch.no_grad():
        out = model(ids(seed), output_activations=True, output_attentions=True)
    hd = H // N_HEADS
    upper = torch.ones(T, T, dtype=torch.bool).triu(1)
    for i in range(L):
        c = lambda k: out.activations[f"blocks.{i}.attn.{k}"]  # noqa: E731
        raw, scores, pattern = c("hook_attn_scores_raw"), c("hook_attn_scores"), c("hook_pattern")
        # raw scores are Q K^T of the cached q, k
        torch.testing.assert_close(raw, c("hook_q") @ c("hook_k").transpose(-2, -1), rtol=1e-6, atol=1e-6)
        assert torch.isinf(scores[..., upper]).all() and (scores[..., upper] < 0).all()
        assert torch.isfinite(scores[..., ~upper]).all()
        torch.testing.assert_close(scores[..., ~upper], raw[..., ~upper] / math.sqrt(hd), rtol=1e-6, atol=1e-7)
        torch.testing.assert_close(pattern, torch.softmax(scores, dim=-1), rtol=1e-6, atol=1e-7)
        assert torch.equal(pattern, out.attentions[i])
        # z = pattern @ v, TransformerLens layout [B, T, nh, hd]
        torch.testing.assert_close(c("hook_z"), (pattern @ c("hook_v")).transpose(1, 2), rtol=1e-5, atol=1e-6)


@SETTINGS
@given(configs(), seeds)
def test_hidden_states_match_activations(config, seed):
    model = build(config, seed)
    x = ids(seed)
    with torch.no_grad():
        out = model(x, output_hidden_states=True, output_activations=True)
    hs, acts = out.hidden_states, out.activations
    assert len(hs) == L + 1
    embed = model.embed_tokens.weight[x]  # independent: index the table by hand
    assert torch.equal(acts["hook_embed"], embed)
    if config.position_embedding in ("learned", "sinusoidal"):
        embed = embed + acts["hook_pos_embed"]
    assert torch.equal(hs[0], embed)
    assert torch.equal(hs[0], acts["blocks.0.hook_resid_pre"])
    for i in range(L - 1):  # blocks 1 .. L-1: their raw outputs
        assert torch.equal(hs[i + 1], acts[f"blocks.{i}.hook_resid_post"])
        assert torch.equal(acts[f"blocks.{i}.hook_resid_post"], acts[f"blocks.{i + 1}.hook_resid_pre"])
    # the last entry is block L's output after the final norm (transformers' convention)
    assert torch.equal(hs[-1], model.norm(acts[f"blocks.{L - 1}.hook_resid_post"]))
    assert torch.equal(hs[-1], acts["ln_final.hook_normalized"])
    torch.testing.assert_close(out.logits, acts["ln_final.hook_normalized"] @ model.lm_head.weight.T,
                               rtol=1e-5, atol=1e-5)


@SETTINGS
@given(configs(), seeds)
def test_block_wiring_matches_its_formula(config, seed):
    """Residual bookkeeping of each block, from the cached pieces (Pre: x + f(norm x); Post: norm(x + f x))."""
    model = build(config, seed)
    with torch.no_grad():
        out = model(ids(seed), output_activations=True)
    for i, layer in enumerate(model.layers):
        c = lambda k: out.activations[f"blocks.{i}.{k}"]  # noqa: E731
        x, mid, post = c("hook_resid_pre"), c("hook_resid_mid"), c("hook_resid_post")
        attn_out, mlp_out = c("hook_attn_out"), c("hook_mlp_out")
        if config.norm_position == "pre":
            assert torch.equal(c("ln1.hook_normalized"), layer.input_layernorm(x))
            assert torch.equal(mid, x + attn_out)
            assert torch.equal(c("ln2.hook_normalized"), layer.post_attention_layernorm(mid))
            assert torch.equal(post, mid + mlp_out)
        else:
            assert torch.equal(mid, layer.input_layernorm(x + attn_out))
            assert torch.equal(post, layer.post_attention_layernorm(mid + mlp_out))
        z = c("attn.hook_z").flatten(2)  # (B, T, nh*hd)
        torch.testing.assert_close(attn_out, layer.self_attn.o_proj(z), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(mlp_out, layer.mlp.down_proj(c("mlp.hook_post")), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------------
# batch independence
# ---------------------------------------------------------------------------------------------------


@SETTINGS
@given(configs(), seeds)
def test_batch_rows_are_independent(config, seed):
    model = build(config, seed)
    x = ids(seed, B=3)
    with torch.no_grad():
        full = model(x).logits
        for b in range(3):
            torch.testing.assert_close(model(x[b:b + 1]).logits, full[b:b + 1], rtol=1e-5, atol=1e-5)
