"""Block variants since GPT-2 against transformers' own implementations: a tiny random model of each reference class
(built offline, every parameter moved off its init so norm weights and sinks are non-trivial, ``save_pretrained``)
is loaded by ``CausalLM.from_pretrained(folder)`` and must give the same logits and attention weights at two
sequence lengths (one longer than the sliding window), and its KV-cache decode must equal its full forward.
"""

from __future__ import annotations

import pytest
import torch

from engine import CausalLM, KVCache

transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

V, H, N_HEADS, N_KV, HD, N_POS, WINDOW = 99, 32, 4, 2, 8, 64, 4
LENGTHS = (3, 11)  # shorter than the window, and longer than it
RTOL = 1e-5  # logits: max |Δ| <= RTOL * max |logit|
ATOL_ATTN = 1e-5


def _common(**extra) -> dict:
    return dict(vocab_size=V, hidden_size=H, num_hidden_layers=2, num_attention_heads=N_HEADS,
                num_key_value_heads=N_KV, head_dim=HD, intermediate_size=64, max_position_embeddings=N_POS,
                attn_implementation="eager") | extra


def _qwen3():
    # max_window_layers=1: layer 0 full attention, layer 1 sliding (Qwen3Config fills layer_types from it);
    # heads of 16 in a 32-wide stream (head_dim != hidden_size / heads, as in Qwen3-0.6B)
    return transformers.Qwen3ForCausalLM(transformers.Qwen3Config(**_common(
        head_dim=16, use_sliding_window=True, sliding_window=WINDOW, max_window_layers=1, tie_word_embeddings=False)))


def _olmo2():
    return transformers.Olmo2ForCausalLM(transformers.Olmo2Config(**_common(rope_theta=5000.0)))


def _gemma2():
    # soft caps small enough to bend the scores and logits; query_pre_attn_scalar other than head_dim
    return transformers.Gemma2ForCausalLM(transformers.Gemma2Config(**_common(
        head_dim=16, query_pre_attn_scalar=12, sliding_window=WINDOW, attn_logit_softcapping=1.5,
        final_logit_softcapping=2.0)))


def _gemma3():
    return transformers.Gemma3ForCausalLM(transformers.Gemma3TextConfig(**_common(
        head_dim=16, query_pre_attn_scalar=16, sliding_window=WINDOW,
        layer_types=["sliding_attention", "full_attention"],
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
                         "full_attention": {"rope_type": "default", "rope_theta": 5000.0}})))


def _mistral():
    return transformers.MistralForCausalLM(transformers.MistralConfig(**_common(sliding_window=WINDOW,
                                                                              tie_word_embeddings=True)))


def _mixtral():
    return transformers.MixtralForCausalLM(transformers.MixtralConfig(**_common(
        num_local_experts=4, num_experts_per_tok=2, sliding_window=WINDOW)))


def _qwen3_moe():
    return transformers.Qwen3MoeForCausalLM(transformers.Qwen3MoeConfig(**_common(
        num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, norm_topk_prob=False)))


def _qwen2_moe():
    return transformers.Qwen2MoeForCausalLM(transformers.Qwen2MoeConfig(**_common(
        num_experts=4, num_experts_per_tok=3, moe_intermediate_size=16, shared_expert_intermediate_size=24,
        norm_topk_prob=True)))


def _gpt_oss():
    # swiglu_limit small enough that the clamps bite; YaRN with a partial ramp over a 64-position original context
    return transformers.GptOssForCausalLM(transformers.GptOssConfig(**_common(
        head_dim=16, intermediate_size=16, num_local_experts=4, num_experts_per_tok=2, sliding_window=WINDOW,
        swiglu_limit=0.5, rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "beta_fast": 32.0,
                                           "beta_slow": 1.0, "truncate": False, "original_max_position_embeddings": 64})))


#: family -> (builder, what our loaded config must say)
BUILDERS = {
    "qwen3": (_qwen3, dict(qk_norm="per_head", sliding_window=WINDOW,
                           layer_types=("full_attention", "sliding_attention"))),
    "mistral": (_mistral, dict(qk_norm="none", sliding_window=WINDOW, layer_types=None)),
    "olmo2": (_olmo2, dict(qk_norm="per_projection", norm_position="post_sublayer", rope_theta=5000.0)),
    "gemma2": (_gemma2, dict(norm_position="sandwich", norm_type="gemma_rmsnorm", embedding_multiplier=H ** 0.5,
                             query_pre_attn_scalar=12, attn_logit_softcapping=1.5, final_logit_softcapping=2.0,
                             hidden_act="gelu_new", layer_types=("sliding_attention", "full_attention"))),
    "gemma3": (_gemma3, dict(norm_position="sandwich", qk_norm="per_head", rope_theta=5000.0,
                             rope_local_base_freq=100.0, attn_logit_softcapping=None, head_dim=16)),
    "mixtral": (_mixtral, dict(num_local_experts=4, num_experts_per_tok=2, norm_topk_prob=True, sliding_window=WINDOW)),
    "qwen3_moe": (_qwen3_moe, dict(num_local_experts=4, norm_topk_prob=False, moe_intermediate_size=16,
                                   qk_norm="per_head")),
    "qwen2_moe": (_qwen2_moe, dict(num_local_experts=4, num_experts_per_tok=3, shared_expert_intermediate_size=24,
                                   attention_bias=True)),
    "gpt_oss": (_gpt_oss, dict(attention_sinks=True, router_bias=True, swiglu_limit=0.5, rope_type="yarn",
                               rope_factor=4.0, rope_truncate=False, layer_types=("sliding_attention", "full_attention"))),
}
MOE = ("mixtral", "qwen3_moe", "qwen2_moe", "gpt_oss")


def _perturb(model: torch.nn.Module, seed: int) -> None:
    """Move every parameter off its init (norm weights off 1, sinks off their init) so a wrong placement shows."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 0.3)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """{family: (hf model, our loaded model)}, built once per module."""
    out = {}
    for i, (family, (build, _)) in enumerate(BUILDERS.items()):
        torch.manual_seed(i)
        hf = build().eval()
        _perturb(hf, seed=200 + i)
        folder = tmp_path_factory.mktemp(family)
        hf.save_pretrained(folder)
        out[family] = (hf, CausalLM.from_pretrained(folder))
    return out


def _ids(T: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, V, (2, T), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parity
@pytest.mark.parametrize("family", list(BUILDERS))
def test_loaded_config_names_the_variant(saved, family):
    _, ours = saved[family]
    for field, value in BUILDERS[family][1].items():
        assert getattr(ours.config, field) == value, field


@pytest.mark.parity
@pytest.mark.parametrize("T", LENGTHS)
@pytest.mark.parametrize("family", list(BUILDERS))
def test_logits_and_attentions_match_transformers(saved, family, T):
    hf, ours = saved[family]
    ids = _ids(T)
    with torch.no_grad():
        ref = hf(ids, output_attentions=True)
        out = ours(ids, output_attentions=True)
        sdpa = ours(ids).logits
    scale = ref.logits.abs().max().item()
    assert (ref.logits - out.logits).abs().max().item() <= RTOL * scale
    assert (sdpa - out.logits).abs().max().item() <= RTOL * scale  # the fused path agrees with the eager one
    assert len(ref.attentions) == len(out.attentions)
    for i, (a, b) in enumerate(zip(ref.attentions, out.attentions)):
        assert a.shape == b.shape == (2, N_HEADS, T, T), i
        assert (a - b).abs().max().item() <= ATOL_ATTN, i
    assert ours.num_parameters() == hf.num_parameters()


@pytest.mark.parity
@pytest.mark.parametrize("family", list(BUILDERS))
def test_kv_cache_decode_equals_full_forward(saved, family):
    _, ours = saved[family]
    T, prefill = LENGTHS[-1], 2
    ids = _ids(T, seed=1)
    with torch.no_grad():
        full = ours(ids).logits  # (2, T, V)
        cache = KVCache()
        steps = [ours(ids[:, :prefill], past_key_values=cache).logits]
        for t in range(prefill, T):
            steps.append(ours(ids[:, t:t + 1], past_key_values=cache, output_attentions=t % 2 == 0).logits)
    decoded = torch.cat(steps, dim=1)  # (2, T, V)
    assert (decoded - full).abs().max().item() <= RTOL * full.abs().max().item()
    assert cache.get_seq_length() == T
    for layer, attn in enumerate(ours.layers):
        window = attn.self_attn.cache_window
        assert cache.num_cached(layer) == (T if window is None else min(T, window - 1)), layer


# ---- gpt-oss attention: the learned sink logit per head ---------------------------------------------


@pytest.fixture(scope="module")
def gpt_oss_attention():
    """[(transformers GptOssAttention, our CausalSelfAttention with the same weights), ...] for a sliding layer and
    a full one, plus our model (for the per-forward context)."""
    from transformers.models.gpt_oss.modeling_gpt_oss import GptOssAttention

    from engine import ModelConfig

    types = ["sliding_attention", "full_attention"]
    hf_cfg = transformers.GptOssConfig(**_common(attention_bias=True, sliding_window=WINDOW, layer_types=types,
                                                 num_local_experts=2, num_experts_per_tok=1))
    ours = CausalLM(ModelConfig(vocab_size=V, hidden_size=H, num_hidden_layers=2, num_attention_heads=N_HEADS,
                                num_key_value_heads=N_KV, head_dim=HD, intermediate_size=64, position_embedding="rope",
                                max_position_embeddings=N_POS, norm_type="rmsnorm", bias=True, attention_sinks=True,
                                sliding_window=WINDOW, layer_types=tuple(types)))
    pairs = []
    for i in range(2):
        torch.manual_seed(10 + i)
        hf = GptOssAttention(hf_cfg, i).eval()
        hf.config._attn_implementation = "eager"
        with torch.no_grad():
            for p in hf.parameters():
                p.copy_(torch.randn(p.shape) * 0.5)  # sinks too: some heads sink much, some little
        ours.layers[i].self_attn.load_state_dict(hf.state_dict())
        pairs.append((hf, ours.layers[i].self_attn))
    return pairs, ours


@pytest.mark.parity
@pytest.mark.parametrize("T", LENGTHS)
@pytest.mark.parametrize("layer", [0, 1])
def test_attention_sinks_match_gpt_oss(gpt_oss_attention, T, layer):
    from engine.recorder import ActivationRecorder

    pairs, model = gpt_oss_attention
    hf, attn = pairs[layer]
    x = torch.randn(2, T, H, generator=torch.Generator().manual_seed(T))
    position_ids = torch.arange(T)
    ctx = model.attention_context(position_ids, None, "eager", eager=True)
    cos, sin = ctx.rope
    blocked = ctx.mask(attn.layer_type)  # (T, T)
    additive = torch.zeros(T, T).masked_fill(blocked, torch.finfo(torch.float32).min)[None, None]  # (1, 1, T, T)
    record: dict = {}
    with torch.no_grad():
        ref_out, ref_w = hf(x, position_embeddings=(cos[None, :, :HD // 2], sin[None, :, :HD // 2]),
                            attention_mask=additive)
        out = attn(x, ctx, ActivationRecorder(record))
        fused = attn(x, model.attention_context(position_ids, None, "sdpa", eager=False))
    assert (ref_out - out).abs().max().item() <= RTOL * ref_out.abs().max().item()
    assert (fused - out).abs().max().item() <= RTOL * ref_out.abs().max().item()
    assert (ref_w - record["hook_pattern"]).abs().max().item() <= ATOL_ATTN
    sink_share = 1 - ref_w.sum(-1)  # transformers drops the sink column: what is missing from each row
    assert (sink_share - record["hook_sink"]).abs().max().item() <= ATOL_ATTN
    assert sink_share.max().item() > 0.5 and sink_share.mean().item() > 0.05  # the sinks take a visible share



# ---- mixture of experts: routing and load statistics ------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("family", MOE)
def test_router_logits_and_load_balancing_loss_match_transformers(saved, family):
    from engine.layers import router_load

    hf, ours = saved[family]
    ids = _ids(LENGTHS[-1], seed=2)
    with torch.no_grad():
        ref = hf(ids, output_router_logits=True)
        rec = ours(ids, output_activations=True).activations
    ours_logits = [rec[f"blocks.{i}.mlp.hook_router_logits"] for i in range(len(ours.layers))]  # (B, T, E) each
    for a, b in zip(ref.router_logits, ours_logits):
        assert (a - b.reshape(a.shape)).abs().max().item() <= 1e-5
    load = router_load(ours_logits, ours.config.num_experts_per_tok)
    assert abs(load["aux_loss"].item() - ref.aux_loss.item()) <= 1e-5 * ref.aux_loss.item()
    assert torch.isclose(load["tokens_per_expert"].sum(), torch.tensor(float(ours.config.num_experts_per_tok)))
    counts = torch.bincount(rec["blocks.0.mlp.hook_expert_indices"].reshape(-1), minlength=4)
    assert (counts > 0).sum() >= 2  # the tokens really spread over experts
