"""KV cache, decoding and sampling filters (engine.kv_cache, engine.generation).

References: a full forward of the whole sequence (the cache must not change a logit), transformers' own
GPT-2 / Llama models saved with ``save_pretrained`` (loaded checkpoints), hand-computed distributions for
each sampling filter, and torch's ``FlopCounterMode`` for the FLOP formula.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from engine import CausalLM, ModelConfig
from engine.generation import (
    FILTER_ORDER,
    apply_temperature,
    forward_flops,
    generate,
    min_p_filter,
    sampling_filters,
    top_k_filter,
    top_p_filter,
)
from engine.kv_cache import KVCache, kv_cache_bytes
from engine.layers import causal_future_mask

V, H, L, N_HEADS, T = 99, 32, 2, 4, 9
# float32 rounding only: a cached decode sums the same products in other orders (other matrix shapes, and the
# CPU's kernels for them), which moved post-norm logits by up to 1.5e-5 on this machine's Xeon; a wrong mask, position
# or cache entry moves them by 1e-2 or more.
TOL = dict(rtol=1e-5, atol=5e-5)

# every norm x placement x position x KV-head count; the FFN variant rotates so each appears
GRID = [
    dict(norm_type=n, norm_position=p, position_embedding=pe, num_key_value_heads=kv,
         hidden_act=act, mlp_gated=gated)
    for i, (n, p, pe, kv) in enumerate(itertools.product(["layernorm", "rmsnorm"], ["pre", "post"],
                                                         ["learned", "sinusoidal", "rope", "none"], [4, 2, 1]))
    for act, gated in [[("gelu_new", False), ("silu", True), ("relu", False)][i % 3]]
]


def grid_id(v: dict) -> str:
    return f"{v['norm_type']}-{v['norm_position']}-{v['position_embedding']}-kv{v['num_key_value_heads']}"


def build(seed: int = 0, **fields) -> CausalLM:
    """A tiny model with O(1) random weights (so no sub-layer is trivially small)."""
    config = ModelConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=N_HEADS,
                         intermediate_size=48, max_position_embeddings=32, **fields)
    torch.manual_seed(seed)
    model = CausalLM(config)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            base = 1.0 if ("norm" in name and name.endswith("weight")) else 0.0
            p.copy_(base + 0.3 * torch.randn(p.shape, generator=g))
    return model


def ids(seed: int = 1, B: int = 2, T_: int = T, vocab: int = V) -> torch.Tensor:
    return torch.randint(0, vocab, (B, T_), generator=torch.Generator().manual_seed(seed))


@torch.no_grad()
def prefill_then_decode(model: CausalLM, x: torch.Tensor, k: int, **kwargs) -> torch.Tensor:
    """Logits ``[B, T, V]`` from a prefill of T-k tokens and k single-token decode steps."""
    out = model(x[:, : x.shape[1] - k], use_cache=True, **kwargs)
    logits = [out.logits]
    for t in range(x.shape[1] - k, x.shape[1]):
        out = model(x[:, t:t + 1], past_key_values=out.past_key_values, use_cache=True, **kwargs)
        logits.append(out.logits)
    return torch.cat(logits, dim=1)


# ---------------------------------------------------------------------------------------------------
# cached decoding equals the full forward
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", GRID, ids=grid_id)
def test_prefill_plus_decode_equals_full_forward(variant):
    model = build(**variant)
    x = ids()
    with torch.no_grad():
        full = model(x).logits  # (B, T, V)
    for k in (1, 4):
        torch.testing.assert_close(prefill_then_decode(model, x, k), full, **TOL)
    # the eager path (attention weights requested) and a multi-token chunk after a prefill
    torch.testing.assert_close(prefill_then_decode(model, x, 3, output_attentions=True), full, **TOL)
    with torch.no_grad():
        out = model(x[:, :5], use_cache=True)
        sdpa = model(x[:, 5:], past_key_values=out.past_key_values, use_cache=True).logits
        out = model(x[:, :5], use_cache=True)
        eager = model(x[:, 5:], past_key_values=out.past_key_values, use_cache=True, output_attentions=True)
    torch.testing.assert_close(sdpa, full[:, 5:], **TOL)
    torch.testing.assert_close(eager.logits, full[:, 5:], **TOL)


@pytest.mark.parametrize("kv", [4, 2, 1])
def test_cache_shapes_and_growth(kv):
    model = build(num_key_value_heads=kv, position_embedding="rope")
    hd = H // N_HEADS
    with torch.no_grad():
        out = model(ids(T_=6), use_cache=True)
        cache = out.past_key_values
        assert isinstance(cache, KVCache) and len(cache) == L and cache.get_seq_length() == 6
        for layer in range(L):
            k, v = cache[layer]
            assert k.shape == v.shape == (2, kv, 6, hd)  # the n_kv_heads heads, never the repeated copies
        out = model(ids(T_=1), past_key_values=cache, use_cache=True)
    assert out.past_key_values is cache and cache.get_seq_length() == 7
    assert all(cache[layer][0].shape == (2, kv, 7, hd) for layer in range(L))
    assert cache.num_bytes() == kv_cache_bytes(L, kv, hd, 7, 4, batch_size=2)
    assert model(ids()).past_key_values is None  # no cache unless asked for


def test_cached_keys_are_the_full_forward_keys():
    """The cache holds the keys after RoPE, i.e. exactly the full forward's keys of each KV head."""
    model = build(num_key_value_heads=2, position_embedding="rope")
    x = ids()
    with torch.no_grad():
        acts = model(x, output_activations=True).activations
        cache = model(x[:, :6], use_cache=True).past_key_values
        model(x[:, 6:], past_key_values=cache, use_cache=True)
    k_full = acts["blocks.1.attn.hook_k"]  # (B, n_heads, T, hd), KV heads repeated for the query heads
    torch.testing.assert_close(cache[1][0], k_full[:, ::2], **TOL)  # KV head j serves query heads 2j, 2j+1


def test_one_query_attends_every_cached_key():
    """The new query is the last position: a bottom-right-aligned mask, never is_causal's top-left one."""
    assert not causal_future_mask(1, key_length=5).any()  # 1 query vs 5 keys: nothing masked
    assert causal_future_mask(2, key_length=5).tolist() == [[False] * 4 + [True], [False] * 5]
    assert torch.equal(causal_future_mask(4), torch.ones(4, 4, dtype=torch.bool).triu(1))
    model = build()
    x = ids(B=1, T_=6)
    with torch.no_grad():
        full = model(x, output_attentions=True).attentions
        out = model(x[:, :5], use_cache=True)
        step = model(x[:, 5:], past_key_values=out.past_key_values, use_cache=True, output_attentions=True)
    for layer in range(L):
        row = step.attentions[layer]  # (1, n_heads, 1, 6): one row, not the triangle
        assert row.shape == (1, N_HEADS, 1, 6)
        assert (row > 0).all()
        torch.testing.assert_close(row[:, :, 0], full[layer][:, :, -1], **TOL)


def test_positions_continue_and_limit_counts_the_cache():
    model = build(position_embedding="learned")
    with torch.no_grad():
        cache = model(ids(T_=30), use_cache=True).past_key_values
        model(ids(T_=2), past_key_values=cache, use_cache=True)  # positions 30, 31: the last allowed
        with pytest.raises(ValueError, match="sequence length 33 exceeds max_position_embeddings=32"):
            model(ids(T_=1), past_key_values=cache, use_cache=True)


# ---------------------------------------------------------------------------------------------------
# loaded checkpoints (saved by transformers, offline)
# ---------------------------------------------------------------------------------------------------

transformers = pytest.importorskip("transformers")
HF_CONFIGS = {
    "gpt2": lambda: transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=V, n_embd=H, n_layer=L, n_head=N_HEADS, n_positions=64)),
    "llama": lambda: transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=N_HEADS, num_key_value_heads=2,
        intermediate_size=64, max_position_embeddings=64, rope_theta=5000.0, tie_word_embeddings=False)),
}


@pytest.mark.parity
@pytest.mark.parametrize("family", sorted(HF_CONFIGS))
def test_checkpoint_prefill_plus_decode(family, tmp_path):
    torch.manual_seed(3)
    hf = HF_CONFIGS[family]().eval()
    with torch.no_grad():
        for p in hf.parameters():
            p.add_(0.3 * torch.randn(p.shape))
    hf.save_pretrained(tmp_path)
    ours = CausalLM.from_pretrained(tmp_path)
    x = ids(seed=4)
    with torch.no_grad():
        full = ours(x).logits
        reference = hf(x).logits
    cached = prefill_then_decode(ours, x, 4)
    torch.testing.assert_close(cached, full, **TOL)
    torch.testing.assert_close(cached, reference, rtol=0, atol=1e-4)
    assert ours(x, use_cache=True).past_key_values[0][0].shape == (2, ours.config.kv_heads, T, H // N_HEADS)


# ---------------------------------------------------------------------------------------------------
# generate
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", GRID[::5], ids=grid_id)
def test_greedy_with_and_without_cache_identical(variant):
    model = build(**variant)
    prompt = ids(B=2, T_=4)
    cached = generate(model, prompt, 12)
    uncached = generate(model, prompt, 12, use_cache=False)
    assert cached.shape == (2, 16) and torch.equal(cached[:, :4], prompt)
    assert torch.equal(cached, uncached)
    # independent greedy: argmax of a full forward at every step
    seq = prompt
    with torch.no_grad():
        for _ in range(12):
            seq = torch.cat([seq, model(seq).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(cached, seq)


def test_sampling_is_seeded_and_cache_independent():
    model = build(position_embedding="rope")
    prompt = ids(B=1, T_=3)
    kw = dict(do_sample=True, temperature=1.5, top_k=20, top_p=0.95, min_p=0.01)
    a = generate(model, prompt, 10, seed=7, **kw)
    assert torch.equal(a, generate(model, prompt, 10, seed=7, **kw))  # replayable
    assert torch.equal(a, generate(model, prompt, 10, seed=7, use_cache=False, **kw))
    assert not torch.equal(a, generate(model, prompt, 10, seed=8, **kw))
    # top-k = 1 leaves one token: sampling must then be greedy
    assert torch.equal(generate(model, prompt, 10, do_sample=True, top_k=1, seed=3), generate(model, prompt, 10))


def test_generate_stops_at_the_position_limit():
    model = build(position_embedding="learned")
    assert generate(model, ids(B=1, T_=30), 10).shape == (1, 32)


# ---------------------------------------------------------------------------------------------------
# sampling filters: hand-computed cases
# ---------------------------------------------------------------------------------------------------

# probabilities 1/2, 1/4, 1/8, 1/8 (exact in binary), shuffled so order is by value, not by id
P = torch.tensor([0.125, 0.5, 0.125, 0.25], dtype=torch.float64)
LOGITS = P.log()


def kept(logits: torch.Tensor) -> set[int]:
    return set(torch.nonzero(torch.isfinite(logits)).flatten().tolist())


def test_temperature_reshapes_and_removes_nothing():
    out = apply_temperature(LOGITS, 0.5)
    torch.testing.assert_close(torch.softmax(out, -1), P**2 / (P**2).sum())  # p^(1/T), renormalised
    assert kept(out) == {0, 1, 2, 3}
    torch.testing.assert_close(torch.softmax(apply_temperature(LOGITS, 1.0), -1), P)


@pytest.mark.parametrize("k, expected", [(1, {1}), (2, {1, 3}), (3, {0, 1, 2, 3}), (4, {0, 1, 2, 3}), (0, {0, 1, 2, 3})])
def test_top_k(k, expected):
    # k = 3: ids 0 and 2 tie for third place, and both are kept (as transformers does)
    assert kept(top_k_filter(LOGITS, k)) == expected


@pytest.mark.parametrize("p, expected", [(0.3, {1}), (0.5, {1}), (0.6, {1, 3}), (0.75, {1, 3}), (0.9, {0, 1, 2, 3}),
                                         (1.0, {0, 1, 2, 3})])
def test_top_p(p, expected):
    # sorted: 0.5 (id 1), 0.25 (id 3), 0.125, 0.125: the smallest prefix with mass >= p
    assert kept(top_p_filter(LOGITS, p)) == expected


def test_top_p_boundary_tie_keeps_the_smallest_set():
    # p = 0.76 needs a third token; ids 0 and 2 tie at 0.125 and only one of them is needed
    survivors = kept(top_p_filter(LOGITS, 0.76))
    assert len(survivors) == 3 and {1, 3} < survivors


@pytest.mark.parametrize("m, expected", [(0.0, {0, 1, 2, 3}), (0.25, {0, 1, 2, 3}), (0.3, {1, 3}), (0.5, {1, 3}),
                                         (0.6, {1})])
def test_min_p(m, expected):
    # threshold = m * 0.5: 0.125 survives up to m = 0.25, 0.25 up to m = 0.5
    assert kept(min_p_filter(LOGITS, m)) == expected


def test_filters_run_in_order_and_report_before_after():
    final, steps = sampling_filters(LOGITS, temperature=0.5, top_k=3, top_p=0.9, min_p=0.0)
    assert [s.name for s in steps] == list(FILTER_ORDER)
    # temperature 0.5 -> p ~ (1, 16, 1, 4) / 22
    sharp = torch.tensor([1.0, 16.0, 1.0, 4.0], dtype=torch.float64) / 22
    torch.testing.assert_close(steps[0].before, P)
    torch.testing.assert_close(steps[0].after, sharp)
    assert not steps[0].removed.any()
    # top-k 3 keeps all four (the tie for third); top-p 0.9 then keeps 16/22 + 4/22 = 0.909 >= 0.9
    assert kept(final) == {1, 3}
    assert steps[1].removed.sum() == 0
    assert steps[2].removed.tolist() == [True, False, True, False]
    torch.testing.assert_close(steps[2].after, torch.tensor([0, 0.8, 0, 0.2], dtype=torch.float64))
    torch.testing.assert_close(steps[3].before, steps[2].after)
    # the order matters: top-p 0.9 on the unsharpened distribution keeps everything (0.5+0.25+0.125 < 0.9)
    assert kept(sampling_filters(LOGITS, top_p=0.9)[0]) == {0, 1, 2, 3}


def test_filters_work_per_row():
    batch = torch.stack([LOGITS, LOGITS.flip(0)])  # (2, V)
    assert kept(top_k_filter(batch, 1)[0]) == {1} and kept(top_k_filter(batch, 1)[1]) == {2}
    assert torch.isfinite(top_p_filter(batch, 0.6)).sum(-1).tolist() == [2, 2]


@pytest.mark.parametrize("kwargs, word", [(dict(temperature=0), "temperature"), (dict(top_k=-1), "top_k"),
                                          (dict(top_p=0), "top_p"), (dict(top_p=1.5), "top_p"),
                                          (dict(min_p=1), "min_p")])
def test_bad_settings_are_named(kwargs, word):
    with pytest.raises(ValueError, match=word):
        sampling_filters(LOGITS, **kwargs)


# ---------------------------------------------------------------------------------------------------
# FLOPs and memory formulas
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gated, kv", [(False, 4), (True, 2)])
def test_forward_flops_match_torch_flop_counter(gated, kv):
    model = build(mlp_gated=gated, hidden_act="silu" if gated else "gelu", num_key_value_heads=kv, bias=False)
    x = ids(B=1, T_=7)
    with torch.no_grad(), FlopCounterMode(display=False) as prefill:
        out = model(x, output_attentions=True, use_cache=True)  # eager: every matmul is visible
    assert prefill.get_total_flops() == forward_flops(model.config, 7, 7, logits_positions=7)
    with torch.no_grad(), FlopCounterMode(display=False) as step:
        model(x[:, :1], past_key_values=out.past_key_values, use_cache=True, output_attentions=True)
    assert step.get_total_flops() == forward_flops(model.config, 1, 8)
    assert forward_flops(model.config, 8, 8) > 5 * forward_flops(model.config, 1, 8)


def test_cache_bytes_formula():
    # SmolLM2-135M: 30 layers, 3 KV heads of 64, 2048 tokens in bfloat16 -> 2*30*3*64*2048*2 = 45 MiB
    assert kv_cache_bytes(30, 3, 64, 2048, 2) == 47_185_920 == 45 * 2**20
    assert kv_cache_bytes(12, 12, 64, 1024, 4) == 2 * 12 * 12 * 64 * 1024 * 4 == 72 * 2**20
    assert math.isclose(kv_cache_bytes(32, 32, 128, 8192, 2) / kv_cache_bytes(32, 8, 128, 8192, 2), 4)


def test_flops_agree_with_the_cost_model():
    """engine.cost prices a whole forward (every position's logits); the decode formula must agree with it."""
    from engine import cost

    config = build(mlp_gated=True, hidden_act="silu", num_key_value_heads=2).config
    for T_ in (1, 7, 64):
        assert forward_flops(config, T_, T_, logits_positions=T_) == cost.forward_flops(config, T_)
