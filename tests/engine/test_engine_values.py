"""Value tests of the engine against hand-computed numbers, written-out formulas, torch built-ins and
transformers reference models (GPT-2 and Llama with copied weights)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from engine import PRESETS, CausalLM, ModelConfig
from engine.checkpoints import convert_state_dict
from engine.layers import ACT2FN, LayerNorm, Linear, RMSNorm, apply_rope, rope_cos_sin, sinusoidal_table
from engine.loss import mask_positions, mask_prompt, mean_supervised_loss, shifted_token_losses

ROOT = Path(__file__).resolve().parents[2]
V, H, T = 99, 32, 7


def tiny(**changes) -> ModelConfig:
    base = dict(vocab_size=V, hidden_size=H, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
                max_position_embeddings=16)
    base.update(changes)
    return ModelConfig(**base)


def randomize(model: torch.nn.Module, seed: int = 0, scale: float = 0.3) -> torch.nn.Module:
    """O(1) random parameters; anything named like a norm weight around 1."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g)
            is_norm = any(s in name for s in ("norm", "ln_"))
            p.copy_(1.0 + 0.2 * noise if is_norm and name.endswith("weight") else scale * noise)
    return model


def ids(seed: int = 0, B: int = 2, T_: int = T) -> torch.Tensor:
    return torch.randint(0, V, (B, T_), generator=torch.Generator().manual_seed(seed))


# ---------------------------------------------------------------------------------------------------
# norms
# ---------------------------------------------------------------------------------------------------


def test_layernorm_hand_computed():
    # x = [1, 2, 3, 4]: mean 2.5, biased var (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, sqrt(1.25) = 1.1180340
    ln = LayerNorm(4, eps=0.0)
    out = ln(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    expected = torch.tensor([-1.3416408, -0.4472136, 0.4472136, 1.3416408])  # [-1.5, -.5, .5, 1.5] / 1.1180340
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-6)
    with torch.no_grad():
        ln.weight.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
        ln.bias.copy_(torch.tensor([0.5, 0.0, 0.0, -1.0]))
    expected = torch.tensor([-0.8416408, -0.8944272, 1.3416408, 4.3665631])
    torch.testing.assert_close(ln(torch.tensor([1.0, 2.0, 3.0, 4.0])), expected, rtol=0, atol=1e-6)
    # eps inside the square root: var 1.25 + eps 0.75 = 2 -> divide by sqrt(2)
    out = LayerNorm(4, eps=0.75)(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    torch.testing.assert_close(out, torch.tensor([-1.5, -0.5, 0.5, 1.5]) / math.sqrt(2.0), rtol=0, atol=1e-6)


def test_rmsnorm_hand_computed():
    # x = [1, 2, 3, 4]: mean of squares (1 + 4 + 9 + 16) / 4 = 7.5, sqrt(7.5) = 2.7386128
    out = RMSNorm(4, eps=0.0)(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    torch.testing.assert_close(out, torch.tensor([0.3651484, 0.7302967, 1.0954451, 1.4605935]), rtol=0, atol=1e-6)
    # eps inside the root: 7.5 + 0.5 = 8 -> divide by sqrt(8)
    out = RMSNorm(4, eps=0.5)(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    torch.testing.assert_close(out, torch.tensor([1.0, 2.0, 3.0, 4.0]) / math.sqrt(8.0), rtol=0, atol=1e-6)
    # no mean subtraction: a constant vector maps to ones, not zeros
    torch.testing.assert_close(RMSNorm(3, eps=0.0)(torch.full((3,), 5.0)), torch.ones(3))


@pytest.mark.parametrize("eps", [1e-5, 1e-2])
def test_norms_match_torch(eps):
    g = torch.Generator().manual_seed(0)
    x = 3 * torch.randn(2, 5, 16, generator=g) + 1
    w, b = torch.randn(16, generator=g), torch.randn(16, generator=g)
    ours = LayerNorm(16, eps=eps)
    ref = torch.nn.LayerNorm(16, eps=eps)
    with torch.no_grad():
        ours.weight.copy_(w), ours.bias.copy_(b), ref.weight.copy_(w), ref.bias.copy_(b)
    torch.testing.assert_close(ours(x), ref(x), rtol=1e-5, atol=1e-5)
    rms = RMSNorm(16, eps=eps)
    with torch.no_grad():
        rms.weight.copy_(w)
    torch.testing.assert_close(rms(x), F.rms_norm(x, (16,), w, eps=eps), rtol=1e-5, atol=1e-5)
    # half precision is normalised in float32
    xb = x.to(torch.bfloat16)
    torch.testing.assert_close(rms(xb).float(), F.rms_norm(xb.float(), (16,), w, eps=eps), rtol=2e-2, atol=2e-2)


HALF_PRECISION = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7}  # machine epsilon of each dtype


@pytest.mark.parametrize("dtype", list(HALF_PRECISION), ids=str)
@pytest.mark.parametrize("norm_cls", [LayerNorm, RMSNorm])
def test_half_precision_norms_on_large_inputs_match_float32(norm_cls, dtype):
    """Tokens with standard deviation 1e3: in float16 sum((x - mean)^2) ~ 1e6 * H overflows 65504, so a norm that
    kept its statistics in float16 would return its bias (LayerNorm) or zeros. Statistics in float32 give the
    float32 result rounded to the half dtype."""
    g = torch.Generator().manual_seed(0)
    x = 1e3 * torch.randn(3, 5, 64, generator=g) + 50.0  # (B, T, H), std 1e3
    norm = norm_cls(64)
    with torch.no_grad():
        norm.weight.copy_(1.0 + 0.1 * torch.randn(64, generator=g))
        if norm_cls is LayerNorm:
            norm.bias.copy_(0.1 * torch.randn(64, generator=g))
    ref = norm(x)  # float32
    half = norm.to(dtype)(x.to(dtype)).float()
    assert half.abs().max() > 1.0  # not the bias (|bias| < 0.5) and not zeros
    eps = HALF_PRECISION[dtype]
    # input rounding (relative eps/2) and output rounding (eps/2) on values of size ~3: a few eps in all
    torch.testing.assert_close(half, ref, rtol=4 * eps, atol=4 * eps)


def test_float16_model_with_large_activations_matches_float32_twin():
    """GPT-2 small has residual activations near 3,000. A float16 copy of a model whose residual stream has a
    standard deviation of ~1e3 must give the float32 model's logits up to float16 rounding."""
    config = tiny(num_hidden_layers=2, norm_type="layernorm", norm_position="pre")
    model = randomize(CausalLM(config), seed=3)
    with torch.no_grad():
        model.embed_tokens.weight.mul_(3e3)  # residual stream std ~1e3 from the embedding on (the head is tied)
        model.embed_positions.weight.mul_(3e3)
    x = ids(seed=6)
    with torch.no_grad():
        ref = model(x).logits.double()  # (B, T, V)
        half = CausalLM(config)
        half.load_state_dict(model.state_dict())
        out = half.half()(x).logits.double()
    scale = ref.abs().max()
    assert torch.isfinite(out).all() and scale > 1.0
    # relative to the logit scale; a LayerNorm that returns its bias would make these logits ~0 (error ~100 %)
    assert float((out - ref).abs().max() / scale) < 2e-2


def test_overflow_report_knows_the_dtype():
    """A residual stream of ~1e25 overflows a float32 norm (squares above 3.4e38) but not a float64 one: the report
    flags the float32 model only, and the float64 model's final norm really is a unit-variance output."""
    from analysis.trace import finite_report, norm_overflow_limit, run_trace

    assert norm_overflow_limit(torch.float32) == norm_overflow_limit(torch.float16) == math.sqrt(torch.finfo(torch.float32).max)
    assert norm_overflow_limit(torch.float64) == math.sqrt(torch.finfo(torch.float64).max)
    config = tiny(num_hidden_layers=1, norm_type="layernorm", initializer_range=1e25)
    torch.manual_seed(0)
    model = CausalLM(config)
    x = ids(seed=7, B=1)
    assert not finite_report(run_trace(model, x))["norms"]
    out = run_trace(model.double(), x)
    assert finite_report(out)["norms"], finite_report(out)
    final = out.activations["ln_final.hook_normalized"][0]  # (T, H): LayerNorm with weight 1, bias 0
    torch.testing.assert_close(final.std(dim=-1, correction=0), torch.ones(x.shape[1], dtype=torch.float64),
                               rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------------------
# loss
# ---------------------------------------------------------------------------------------------------


def test_oracle_logits_give_zero_loss_with_exactly_one_shift():
    g = torch.Generator().manual_seed(0)
    B, T_, V_ = 2, 6, 11
    labels = torch.randint(0, V_, (B, T_), generator=g)
    logits = torch.zeros(B, T_, V_)
    for b in range(B):
        for t in range(T_ - 1):
            logits[b, t, labels[b, t + 1]] = 1e4  # position t is sure of token t+1
    losses = shifted_token_losses(logits, labels)
    assert losses.shape == (B, T_ - 1)
    assert torch.equal(losses, torch.zeros(B, T_ - 1))
    assert mean_supervised_loss(losses).item() == 0.0
    # the same logits scored without the shift (position t vs labels[t]) are wrong almost everywhere
    unshifted = torch.zeros(B, T_, V_)
    for b in range(B):
        for t in range(T_):
            unshifted[b, t, labels[b, t]] = 1e4
    wrong = shifted_token_losses(unshifted, labels)
    differs = labels[:, 1:] != labels[:, :-1]
    assert (wrong[differs] > 1e3).all()


def test_ignore_index_mean_over_supervised_only():
    # V = 4; a row of log([1, 1, 2, 4]) has probabilities [1/8, 1/8, 1/4, 1/2].
    row = torch.log(torch.tensor([1.0, 1.0, 2.0, 4.0]))
    logits = torch.stack([row, torch.tensor([50.0, -50.0, 7.0, 0.0]), row, row])[None]  # (1, 4, 4)
    labels = torch.tensor([[2, 3, -100, 0]])
    # t=0 -> labels[1]=3: -log(1/2) = log 2; t=1 -> labels[2] masked; t=2 -> labels[3]=0: -log(1/8) = log 8
    losses = shifted_token_losses(logits, labels)
    assert torch.isnan(losses[0, 1])
    torch.testing.assert_close(losses[0, [0, 2]], torch.tensor([math.log(2), math.log(8)]))
    loss = mean_supervised_loss(losses)
    torch.testing.assert_close(loss, torch.tensor(math.log(4)))  # (log 2 + log 8) / 2, not / 3
    # uniform logits: every supervised token costs log V
    uniform = torch.zeros(3, 5, 13)
    labels = torch.randint(0, 13, (3, 5), generator=torch.Generator().manual_seed(1))
    labels[0, 2] = labels[2, 4] = -100
    losses = shifted_token_losses(uniform, labels)
    assert int(torch.isnan(losses).sum()) == 2
    torch.testing.assert_close(mean_supervised_loss(losses), torch.tensor(math.log(13)))


def test_all_labels_masked_gives_nan_without_crash():
    model = randomize(CausalLM(tiny()))
    x = ids()
    out = model(x, labels=torch.full_like(x, -100))
    assert out.loss.dim() == 0 and torch.isnan(out.loss)
    assert out.token_losses.shape == (2, T - 1) and torch.isnan(out.token_losses).all()
    # only labels[:, 0] supervised: it is never a target after the shift, so still nothing to average
    labels = torch.full_like(x, -100)
    labels[:, 0] = x[:, 0]
    assert torch.isnan(model(x, labels=labels).loss)
    # a single token: no targets at all
    out = model(x[:, :1], labels=x[:, :1])
    assert out.token_losses.shape == (2, 0) and torch.isnan(out.loss)


def test_loss_gradients_match_cross_entropy_and_masked_batch_is_harmless():
    model = randomize(CausalLM(tiny(norm_type="rmsnorm", position_embedding="rope")))
    x = ids(seed=3)
    labels = x.clone()
    labels[0, 2:5] = -100
    out = model(x, labels=labels)
    ours = torch.autograd.grad(out.loss, list(model.parameters()))
    logits = model(x).logits
    ref_loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100)
    ref = torch.autograd.grad(ref_loss, list(model.parameters()))
    for a, b in zip(ours, ref):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    # an all-masked batch: NaN loss, but its gradients are finite zeros (no NaN poisoning of the weights)
    out = model(x, labels=torch.full_like(x, -100))
    grads = torch.autograd.grad(out.loss, list(model.parameters()), allow_unused=True)
    assert all(g is None or (torch.isfinite(g).all() and not g.any()) for g in grads)


def test_loss_input_errors_and_masking_helpers():
    logits = torch.zeros(1, 3, 5)
    with pytest.raises(ValueError, match="5"):
        shifted_token_losses(logits, torch.tensor([[0, 1, 5]]))  # label == V
    with pytest.raises(ValueError, match="-3"):
        shifted_token_losses(logits, torch.tensor([[0, -3, 1]]))
    with pytest.raises(ValueError):
        shifted_token_losses(logits, torch.tensor([[0, 1]]))  # wrong length
    # an out-of-range label at position 0 is never a target: fine
    shifted_token_losses(logits, torch.tensor([[77, 1, 2]]))
    labels = torch.tensor([[1, 2, 3, 4]])
    assert mask_prompt(labels, 2).tolist() == [[-100, -100, 3, 4]]
    assert labels.tolist() == [[1, 2, 3, 4]]  # copy, not in place
    assert mask_positions(labels, [0, 3, 9]).tolist() == [[-100, 2, 3, -100]]
    with pytest.raises(ValueError, match="-1"):
        mask_prompt(labels, -1)


# ---------------------------------------------------------------------------------------------------
# positions
# ---------------------------------------------------------------------------------------------------


def _rope_by_formula(x: torch.Tensor, pos: int, theta: float) -> torch.Tensor:
    """Rotate pairs (i, i + d/2) of a 1-D vector by angle pos * theta^(-2i/d), written out."""
    d = x.shape[0]
    out = x.clone().double()
    for i in range(d // 2):
        a = pos * theta ** (-2 * i / d)
        x1, x2 = float(x[i]), float(x[i + d // 2])
        out[i] = x1 * math.cos(a) - x2 * math.sin(a)
        out[i + d // 2] = x1 * math.sin(a) + x2 * math.cos(a)
    return out.float()


@pytest.mark.parametrize("theta", [10000.0, 100.0])
def test_rope_against_rotation_formula(theta):
    g = torch.Generator().manual_seed(0)
    d, T_ = 8, 6
    x = torch.randn(1, 1, T_, d, generator=g)
    cos, sin = rope_cos_sin(torch.arange(T_), d, theta)
    rotated = apply_rope(x, cos, sin)
    for p in range(T_):
        torch.testing.assert_close(rotated[0, 0, p], _rope_by_formula(x[0, 0, p], p, theta), rtol=1e-5, atol=1e-5)
    assert torch.equal(rotated[0, 0, 0], x[0, 0, 0])  # position 0: identity
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1), rtol=1e-5, atol=1e-6)
    # hand example: d = 2, pos 1, theta anything: a 2-D rotation by 1 radian of (1, 0) is (cos 1, sin 1)
    c1, s1 = rope_cos_sin(torch.tensor([1]), 2, theta)
    torch.testing.assert_close(apply_rope(torch.tensor([[[[1.0, 0.0]]]]), c1, s1)[0, 0, 0],
                               torch.tensor([math.cos(1.0), math.sin(1.0)]))


def test_rope_scores_depend_only_on_relative_position():
    g = torch.Generator().manual_seed(1)
    d = 16
    q, k = torch.randn(d, generator=g), torch.randn(d, generator=g)
    cos, sin = rope_cos_sin(torch.arange(40), d, 10000.0)

    def rot(v, p):
        return apply_rope(v[None, None, None], cos[p:p + 1], sin[p:p + 1])[0, 0, 0]

    for m, n in [(3, 1), (5, 5), (2, 7)]:
        base = rot(q, m) @ rot(k, n)
        for s in (1, 4, 20):
            torch.testing.assert_close(rot(q, m + s) @ rot(k, n + s), base, rtol=1e-4, atol=1e-4)
    # and it does depend on the offset (otherwise the property is vacuous)
    assert not torch.allclose(rot(q, 3) @ rot(k, 1), rot(q, 3) @ rot(k, 2), atol=1e-3)


@pytest.mark.parity
def test_rope_matches_transformers_llama_rotary():
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    cfg = LlamaConfig(hidden_size=32, num_attention_heads=4, rope_theta=500.0, max_position_embeddings=16)
    rotary = LlamaRotaryEmbedding(cfg)
    g = torch.Generator().manual_seed(2)
    q, k = torch.randn(1, 4, 9, 8, generator=g), torch.randn(1, 4, 9, 8, generator=g)
    pos = torch.arange(9)[None]
    hf_cos, hf_sin = rotary(q, pos)
    hq, hk = apply_rotary_pos_emb(q, k, hf_cos, hf_sin)
    cos, sin = rope_cos_sin(torch.arange(9), 8, 500.0)
    torch.testing.assert_close(apply_rope(q, cos, sin), hq, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(apply_rope(k, cos, sin), hk, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("d", [6, 7, 16])
def test_sinusoidal_table_formula(d):
    P = 12
    table = sinusoidal_table(P, d)
    assert table.shape == (P, d) and table.dtype == torch.float32
    for p in range(P):
        for j in range(d):
            i = j // 2
            angle = p / 10000 ** (2 * i / d)
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert abs(table[p, j].item() - expected) < 1e-6, (p, j)
    # in the model: a non-persistent buffer added at the embedding
    model = CausalLM(tiny(position_embedding="sinusoidal", max_position_embeddings=P))
    assert not any("table" in k for k in model.state_dict())
    x = ids(T_=5)
    out = model(x, output_activations=True)
    torch.testing.assert_close(out.activations["hook_pos_embed"][0], sinusoidal_table(P, H)[:5])


def test_learned_positions_are_rows_of_the_table():
    model = randomize(CausalLM(tiny(position_embedding="learned")))
    out = model(ids(T_=5), output_activations=True)
    assert torch.equal(out.activations["hook_pos_embed"][1], model.embed_positions.weight[:5])


def test_rope_in_the_model_rotates_projected_queries_and_keys():
    config = tiny(position_embedding="rope", num_hidden_layers=1, num_key_value_heads=2, rope_theta=300.0)
    model = randomize(CausalLM(config))
    with torch.no_grad():
        out = model(ids(), output_activations=True)
        h = out.activations["blocks.0.ln1.hook_normalized"]  # (B, T, H)
        attn = model.layers[0].self_attn
        q = attn.q_proj(h).view(2, T, 4, 8)  # (B, T, nh, hd)
        k = attn.k_proj(h).view(2, T, 2, 8).repeat_interleave(2, dim=2)  # (B, T, nh, hd)
    for b, p, head in [(0, 0, 0), (1, 3, 2), (0, 6, 3)]:
        torch.testing.assert_close(out.activations["blocks.0.attn.hook_q"][b, head, p],
                                   _rope_by_formula(q[b, p, head], p, 300.0), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(out.activations["blocks.0.attn.hook_k"][b, head, p],
                                   _rope_by_formula(k[b, p, head], p, 300.0), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------------------------------
# activations and MLP
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parity
def test_gelu_tanh_against_formula_and_exact():
    x = torch.linspace(-6, 6, 2001, dtype=torch.float64)
    tanh_formula = 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    exact = 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    torch.testing.assert_close(ACT2FN["gelu_new"](x), tanh_formula, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ACT2FN["gelu"](x), exact, rtol=1e-12, atol=1e-12)
    gap = (ACT2FN["gelu_new"](x) - exact).abs().max().item()
    assert 1e-5 < gap < 1e-3  # close, yet a different function
    torch.testing.assert_close(ACT2FN["silu"](x), x / (1 + torch.exp(-x)))
    torch.testing.assert_close(ACT2FN["relu"](x), x.clamp(min=0))
    from transformers.activations import ACT2FN as HF_ACT2FN

    for name in ("gelu", "gelu_new", "silu", "relu"):
        torch.testing.assert_close(ACT2FN[name](x.float()), HF_ACT2FN[name](x.float()), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("gated", [False, True])
def test_mlp_formula(gated):
    model = randomize(CausalLM(tiny(mlp_gated=gated, hidden_act="silu", num_hidden_layers=1)))
    mlp = model.layers[0].mlp
    x = torch.randn(2, 3, H, generator=torch.Generator().manual_seed(3))
    if gated:
        ref = (F.silu(x @ mlp.gate_proj.weight.T + mlp.gate_proj.bias) * (x @ mlp.up_proj.weight.T + mlp.up_proj.bias))
    else:
        assert mlp.gate_proj is None
        ref = F.silu(x @ mlp.up_proj.weight.T + mlp.up_proj.bias)
    ref = ref @ mlp.down_proj.weight.T + mlp.down_proj.bias
    torch.testing.assert_close(mlp(x), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("in_features, out_features, bias", [
    (300, 3600, True),  # large enough for W x^T, one block
    (64, 20000, False),  # blocks of BLOCK_ROWS output features, the last one shorter (an LM head)
    (64, 20000, True),
    (48, 40, True),  # small: F.linear
])
def test_linear_matches_x_at_w_transposed_plus_bias_with_gradients(in_features, out_features, bias):
    """Every path of the engine's Linear gives ``x W^T + b`` (a float64 matmul) and its gradients, leading dims kept."""
    layer = Linear(in_features, out_features, bias=bias)
    x = torch.randn(2, 5, in_features, generator=torch.Generator().manual_seed(4), requires_grad=True)
    y = layer(x)
    assert y.shape == (2, 5, out_features)  # one block: the transposed view of W x^T (not contiguous)
    ref = x.double() @ layer.weight.double().T + (layer.bias.double() if bias else 0)  # (2, 5, out)
    torch.testing.assert_close(y.double(), ref, rtol=1e-5, atol=1e-5)
    upstream = torch.randn(2, 5, out_features, generator=torch.Generator().manual_seed(5))
    grads = torch.autograd.grad((y * upstream).sum(), [x, layer.weight, *([layer.bias] if bias else [])])
    g = upstream.double()
    expected = [g @ layer.weight.double(), g.reshape(-1, out_features).T @ x.double().reshape(-1, in_features),
                *([g.sum(dim=(0, 1))] if bias else [])]  # dL/dx = g W, dL/dW = g^T x, dL/db = sum of g
    for got, want in zip(grads, expected):
        torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-4)
    one = torch.randn(in_features, generator=torch.Generator().manual_seed(6))  # a single token: one block
    want = layer.weight.double() @ one.double() + (layer.bias.double() if bias else 0)  # (out,)
    torch.testing.assert_close(layer(one).detach().double(), want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------------
# Post-Norm block outputs are normalised
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm_type", ["rmsnorm", "layernorm"])
def test_post_norm_block_outputs_have_unit_rms(norm_type):
    config = tiny(norm_type=norm_type, norm_position="post", norm_eps=1e-12, num_hidden_layers=3)
    torch.manual_seed(0)
    model = CausalLM(config)  # norm weights 1, biases 0 from the initialiser
    for name, p in model.named_parameters():
        if "norm" in name:
            assert torch.equal(p, torch.ones_like(p) if name.endswith("weight") else torch.zeros_like(p)), name
    out = model(ids(), output_activations=True)
    for i in range(3):
        for key in ("hook_resid_mid", "hook_resid_post"):
            r = out.activations[f"blocks.{i}.{key}"]
            torch.testing.assert_close(r.pow(2).mean(-1).sqrt(), torch.ones(2, T), rtol=0, atol=1e-4)
            if norm_type == "layernorm":
                torch.testing.assert_close(r.mean(-1), torch.zeros(2, T), rtol=0, atol=1e-5)
    # Pre-Norm residual streams are not normalised (the test above can tell)
    pre = CausalLM(config.replace(norm_position="pre"))
    rms = pre(ids(), output_activations=True).activations["blocks.2.hook_resid_post"].pow(2).mean(-1).sqrt()
    assert (rms - 1).abs().max() > 0.1


# ---------------------------------------------------------------------------------------------------
# parameter counts
# ---------------------------------------------------------------------------------------------------


def test_parameter_breakdown_by_formula():
    config = tiny(num_key_value_heads=2, mlp_gated=True, bias=True, tie_word_embeddings=False)
    model = CausalLM(config)
    rows = dict(model.parameter_breakdown())
    hd, kv, I = 8, 2 * 8, 48
    assert rows["embed_tokens"] == V * H
    assert rows["embed_positions"] == 16 * H
    assert rows["layers.0.self_attn"] == (H * H + H) + 2 * (H * kv + kv) + (H * H + H)
    assert rows["layers.0.mlp"] == 2 * (H * I + I) + (I * H + H)
    assert rows["layers.0.norms"] == 4 * H
    assert rows["norm"] == 2 * H
    assert rows["lm_head"] == V * H
    assert sum(rows.values()) == model.num_parameters()
    rms = CausalLM(config.replace(norm_type="rmsnorm", position_embedding="sinusoidal", tie_word_embeddings=True))
    rows = dict(rms.parameter_breakdown())
    assert rows["embed_positions"] == 0 and rows["lm_head"] == 0 and rows["layers.1.norms"] == 2 * H
    assert sum(rows.values()) == rms.num_parameters()


@pytest.mark.parity
def test_gpt2_small_preset_matches_transformers_and_runs():
    from transformers import GPT2Config, GPT2LMHeadModel

    expected = GPT2LMHeadModel(GPT2Config()).num_parameters()
    assert expected == 124_439_808
    model = CausalLM(PRESETS["gpt2_small"])
    assert model.num_parameters() == expected
    assert sum(n for _, n in model.parameter_breakdown()) == expected
    with torch.no_grad():
        out = model(torch.tensor([[464, 3797, 3332, 319, 262]]), logits_to_keep=1)
    assert out.logits.shape == (1, 1, 50257) and torch.isfinite(out.logits).all()


@pytest.mark.parametrize("name", [n for n in PRESETS if n != "gpt2_small"])
def test_every_preset_constructs_and_runs(name):
    config = PRESETS[name]
    model = CausalLM(config)
    x = ids(B=1, T_=5) % config.vocab_size
    with torch.no_grad():
        out = model(x, labels=x, output_attentions=True, output_hidden_states=True)
    assert out.logits.shape == (1, 5, config.vocab_size)
    assert torch.isfinite(out.logits).all() and torch.isfinite(out.loss)
    assert len(out.hidden_states) == config.num_hidden_layers + 1
    assert len(out.attentions) == config.num_hidden_layers
    assert sum(n for _, n in model.parameter_breakdown()) == model.num_parameters()
    # a freshly initialised model is close to uniform: loss near log V
    assert abs(out.loss.item() - math.log(config.vocab_size)) < 0.5


# ---------------------------------------------------------------------------------------------------
# agreement with transformers models (weights copied)
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parity
def test_matches_transformers_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    hf_cfg = GPT2Config(vocab_size=V, n_positions=16, n_embd=H, n_layer=2, n_head=4, n_inner=48,
                        activation_function="gelu_new", layer_norm_epsilon=1e-5, resid_pdrop=0.0, embd_pdrop=0.0,
                        attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    hf = randomize(GPT2LMHeadModel(hf_cfg).eval(), seed=1)
    ours = CausalLM(tiny(hidden_act="gelu_new", norm_type="layernorm", norm_position="pre",
                         position_embedding="learned", bias=True, tie_word_embeddings=True, norm_eps=1e-5))
    state = convert_state_dict("gpt2", ours.config, hf.state_dict().items())  # the loader's own GPT-2 mapping
    missing, unexpected = ours.load_state_dict(state, strict=False)
    assert missing == ["lm_head.weight"] and not unexpected  # tied: lm_head.weight is embed_tokens.weight
    x = ids(seed=4, T_=9)
    with torch.no_grad():
        ref = hf(x, output_attentions=True, output_hidden_states=True)
        out = ours(x, labels=x, output_attentions=True, output_hidden_states=True)
        hf_loss = hf(x, labels=x).loss
    torch.testing.assert_close(out.logits, ref.logits, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(out.loss, hf_loss, rtol=1e-5, atol=1e-5)
    for a, b in zip(out.attentions, ref.attentions):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    # same convention as transformers: L+1 states, the last one after the final norm (ln_f)
    assert len(out.hidden_states) == len(ref.hidden_states) == 3
    for a, b in zip(out.hidden_states, ref.hidden_states):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parity
def test_matches_transformers_llama_with_gqa():
    from transformers import LlamaConfig, LlamaForCausalLM

    hf_cfg = LlamaConfig(vocab_size=V, hidden_size=H, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16,
                         rms_norm_eps=1e-6, rope_theta=500.0, tie_word_embeddings=False, hidden_act="silu",
                         attention_bias=False, mlp_bias=False, bos_token_id=0, eos_token_id=0, pad_token_id=0)
    hf_cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    hf = randomize(LlamaForCausalLM(hf_cfg).eval(), seed=2)
    ours = CausalLM(tiny(hidden_act="silu", mlp_gated=True, norm_type="rmsnorm", norm_position="pre",
                         position_embedding="rope", rope_theta=500.0, num_key_value_heads=2, norm_eps=1e-6,
                         bias=False, tie_word_embeddings=False))
    ours.load_state_dict({k.removeprefix("model."): v for k, v in hf.state_dict().items()}, strict=True)
    x = ids(seed=5, T_=11)  # longer than nothing in particular: RoPE has no hard limit
    with torch.no_grad():
        ref = hf(x, output_attentions=True, output_hidden_states=True)
        out = ours(x, output_attentions=True, output_hidden_states=True)
        fast = ours(x)
    torch.testing.assert_close(out.logits, ref.logits, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(fast.logits, ref.logits, rtol=1e-4, atol=1e-4)
    for a, b in zip(out.attentions, ref.attentions):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    # same convention as transformers: L+1 states, the last one after the final RMSNorm
    assert len(out.hidden_states) == len(ref.hidden_states) == 3
    for a, b in zip(out.hidden_states, ref.hidden_states):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------------------------------


def test_input_validation_messages():
    model = CausalLM(tiny(max_position_embeddings=8))
    with pytest.raises(ValueError, match=r"(?=.*\b99\b)(?=.*\b150\b)"):
        model(torch.tensor([[1, 150, 2]]))
    with pytest.raises(ValueError, match=r"(?=.*\b99\b)"):
        model(torch.tensor([[1, 99]]))  # id == vocab_size is out of range
    with pytest.raises(ValueError, match=r"-1"):
        model(torch.tensor([[1, -1]]))
    with pytest.raises(ValueError, match="empty"):
        model(torch.zeros(1, 0, dtype=torch.long))
    with pytest.raises(ValueError, match="empty"):
        model(torch.zeros(0, 3, dtype=torch.long))
    with pytest.raises(ValueError):
        model(torch.tensor([1, 2, 3]))  # 1-D
    with pytest.raises(ValueError):
        model(torch.tensor([[1.0, 2.0]]))  # float ids
    model(torch.zeros(1, 8, dtype=torch.long))  # exactly the limit is fine
    for pe in ("learned", "sinusoidal"):
        limited = CausalLM(tiny(max_position_embeddings=8, position_embedding=pe))
        with pytest.raises(ValueError, match=r"(?=.*\b9\b)(?=.*\b8\b)"):
            limited(torch.zeros(1, 9, dtype=torch.long))
    for pe in ("rope", "none"):
        free = CausalLM(tiny(max_position_embeddings=8, position_embedding=pe))
        out = free(torch.zeros(1, 20, dtype=torch.long))
        assert out.logits.shape == (1, 20, V)
    with pytest.raises(ValueError, match="-100|outside"):
        model(torch.tensor([[1, 2, 3]]), labels=torch.tensor([[1, 2, 500]]))


def test_engine_import_pulls_no_ui_libraries():
    code = "import engine, sys; assert 'streamlit' not in sys.modules and 'plotly' not in sys.modules"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
