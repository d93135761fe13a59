"""The parts of a decoder block: norms, position schemes, causal attention and the feed-forward network.

Dimension names (see ``engine/__init__.py``): B batch, T sequence length, H hidden size, n_heads query heads,
n_kv_heads key/value heads, head_dim = H / n_heads, I intermediate (FFN) size, V vocabulary.

References:
    Vaswani et al. 2017, "Attention Is All You Need" (attention, sinusoidal positions, Post-LN).
    Ba et al. 2016, "Layer Normalization"; Zhang & Sennrich 2019, "Root Mean Square Layer Normalization".
    Su et al. 2021, "RoFormer" (RoPE), in the Hugging Face Llama "rotate half" layout.
    Ainslie et al. 2023, "GQA"; Shazeer 2020, "GLU Variants Improve Transformer" (SwiGLU).
    Reference implementations read, not copied: nanoGPT ``model.py``, transformers ``modeling_llama.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import ModelConfig
from .recorder import NO_RECORDING, ActivationRecorder

# ---------------------------------------------------------------------------------------------------
# Norms
# ---------------------------------------------------------------------------------------------------


# Norm statistics (mean, variance, mean square) of these dtypes are computed in float32: their squares
# overflow (float16: above 65504) or lose most digits (bfloat16: 8-bit mantissa).
HALF_DTYPES = (torch.float16, torch.bfloat16)


def norm_statistics_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype in which :class:`LayerNorm` and :class:`RMSNorm` compute their statistics for inputs of ``dtype``."""
    return torch.float32 if dtype in HALF_DTYPES else dtype


class LayerNorm(nn.Module):
    """LayerNorm over the last dimension: ``(x - mean) / sqrt(var + eps) * weight + bias``.

    Shapes: ``x`` ``[..., H]`` -> ``[..., H]``. The variance is the biased one (divide by H), as in
    ``torch.nn.LayerNorm``. Source: Ba et al. 2016.

    ``torch.var_mean`` gives both moments in one pass and ``rsqrt`` folds the square root and the division,
    so the formula costs five tensor ops instead of nine: with 2L + 1 norms per forward on a small CPU, the
    per-op overhead, not the arithmetic, is what a norm costs.

    float16 / bfloat16 inputs are normalised in float32 and cast back once, as ``torch.nn.LayerNorm`` does
    internally: in float16 the variance of a token whose standard deviation exceeds ~256 overflows
    (256^2 * H > 65504), ``rsqrt(inf)`` is 0 and the norm would return just the bias.
    """

    def __init__(self, hidden_size: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))  # (H,)
        self.bias = nn.Parameter(torch.zeros(hidden_size))  # (H,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x32 = x.to(norm_statistics_dtype(dtype))  # (..., H), float32 at least
        var, mean = torch.var_mean(x32, dim=-1, keepdim=True, correction=0)  # (..., 1) each; biased variance
        return ((x32 - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias).to(dtype)  # (..., H)


class RMSNorm(nn.Module):
    """RMSNorm: ``x / sqrt(mean(x^2) + eps) * weight``, computed in float32 and cast back.

    Shapes: ``x`` ``[..., H]`` -> ``[..., H]``. eps sits inside the square root, as in Llama.
    Source: Zhang & Sennrich 2019; transformers ``LlamaRMSNorm``.
    """

    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))  # (H,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x32 = x.to(norm_statistics_dtype(dtype))  # (..., H), float32 at least
        rms = torch.sqrt(x32.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # (..., 1)
        return self.weight * (x32 / rms).to(dtype)  # (..., H)


class GemmaRMSNorm(nn.Module):
    """Gemma's RMSNorm: ``x / sqrt(mean(x^2) + eps) * (1 + weight)``, all in float32, cast back once; the weight
    starts at 0 (transformers ``Gemma2RMSNorm``: the scale is multiplied before the cast, unlike Llama's).

    Shapes: ``x`` ``[..., H]`` -> ``[..., H]``.
    """

    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(hidden_size))  # (H,): the scale is 1 + weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x32 = x.float()  # (..., H)
        normed = x32 * torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # (..., H)
        return (normed * (1.0 + self.weight.float())).to(x.dtype)  # (..., H)


NORMS: dict[str, type[nn.Module]] = {"layernorm": LayerNorm, "rmsnorm": RMSNorm, "gemma_rmsnorm": GemmaRMSNorm}


class PerHeadRMSNorm(RMSNorm):
    """QK-norm per head (Qwen3): one RMSNorm of width head_dim applied to every head of a q or k projection.

    Shapes: ``[B, T, heads*head_dim] -> [B, T, heads*head_dim]``, normalised over each head's head_dim slice; the
    weight ``[head_dim]`` is shared by the heads (transformers ``Qwen3Attention.q_norm`` on ``view(B, T, -1, hd)``).
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        heads = x.unflatten(-1, (-1, self.weight.shape[0]))  # (B, T, heads, hd)
        return RMSNorm.forward(self, heads).flatten(-2)  # (B, T, heads*hd)


class PerHeadGemmaRMSNorm(GemmaRMSNorm):
    """:class:`PerHeadRMSNorm` with Gemma's ``1 + weight`` scale (Gemma 3's ``q_norm`` / ``k_norm``)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        heads = x.unflatten(-1, (-1, self.weight.shape[0]))  # (B, T, heads, hd)
        return GemmaRMSNorm.forward(self, heads).flatten(-2)  # (B, T, heads*hd)


# The RMS flavour of QK-norm follows the model's norm_type (LayerNorm models get plain RMSNorm, as Qwen3 and OLMo-2).
_QK_RMS = {"layernorm": (PerHeadRMSNorm, RMSNorm), "rmsnorm": (PerHeadRMSNorm, RMSNorm),
           "gemma_rmsnorm": (PerHeadGemmaRMSNorm, GemmaRMSNorm)}

#: QK-norm by ``config.qk_norm``: ``(config, width = heads*head_dim) -> module`` applied to a q or k projection
#: ``[B, T, width]`` before RoPE. "per_projection" is OLMo-2's (``Olmo2Attention.q_norm`` over the whole projection).
QK_NORMS: dict[str, Callable[[ModelConfig, int], nn.Module]] = {
    "none": lambda config, width: nn.Identity(),
    "per_head": lambda config, width: _QK_RMS[config.norm_type][0](config.head_dim, eps=config.norm_eps),
    "per_projection": lambda config, width: _QK_RMS[config.norm_type][1](width, eps=config.norm_eps),
}


def build_norm(config: ModelConfig) -> nn.Module:
    """The norm selected by ``config.norm_type`` (registry lookup; config validation names valid values)."""
    return NORMS[config.norm_type](config.hidden_size, eps=config.norm_eps)


# ---------------------------------------------------------------------------------------------------
# Activations (registry, like transformers' ACT2FN)
# ---------------------------------------------------------------------------------------------------

ACT2FN: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,  # exact: x * Phi(x)
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),  # GPT-2's tanh approximation
    "silu": F.silu,  # x * sigmoid(x); gated -> SwiGLU
}

# ---------------------------------------------------------------------------------------------------
# Positions
# ---------------------------------------------------------------------------------------------------


def sinusoidal_table(num_positions: int, hidden_size: int) -> torch.Tensor:
    """Fixed sinusoidal position table ``[num_positions, H]`` (Vaswani et al. 2017, section 3.5).

    ``PE[p, 2i] = sin(p / 10000^(2i/H))`` and ``PE[p, 2i+1] = cos(p / 10000^(2i/H))``; an odd H drops the
    last cosine column.
    """
    half = (hidden_size + 1) // 2
    position = torch.arange(num_positions, dtype=torch.float64)[:, None]  # (P, 1)
    div = torch.pow(10000.0, torch.arange(half, dtype=torch.float64) * 2 / hidden_size)  # (half,)
    angles = position / div  # (P, half)
    table = torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1)  # (P, 2*half) interleaved sin/cos
    return table[:, :hidden_size].float()  # (P, H)


class Linear(nn.Linear):
    """``nn.Linear``: ``y = x W^T + b`` with ``weight`` ``[out, in]`` and ``bias`` ``[out]``, computed as ``(W x^T)^T``
    in blocks of output features, and with its initialisation skipped on the ``meta`` device.

    Why ``(W x^T)^T``: the same dot products, so the same numbers (bit for bit on the CPU here), but with a few
    dozen tokens the matrix library (MKL here) runs ``W x^T`` (the long side first) faster than ``x W^T``: 1.1-1.2x
    on GPT-2's MLP and 1.3-1.5x on its LM head (``bench/bench_forward.py`` prints both rates at GPT-2's shapes).
    The result is returned as the transposed view of ``W x^T`` (strides swapped, no copy): elementwise work keeps
    that layout, and the next layer's ``x^T`` is then ``W x^T`` itself, contiguous (GPT-2's MLP: c_fc's output
    feeds c_proj without a copy; the forward is ~4 % faster than with a contiguous copy; the same numbers up to
    float rounding: none in GPT-2 small's logits at T = 64, about 1e-6 at shapes where the kernels take another
    path). A wide layer (the LM head, 50257 outputs) is computed in blocks of :attr:`BLOCK_ROWS` output features,
    joined by one ``cat`` that transposes each while it is still in the cache: one transpose of the whole
    ``[50257, N]`` result would cost about as much as the order saves. Small layers keep
    ``F.linear``, one call, whose overhead the extra calls would exceed (:attr:`MIN_WEIGHTS`).

    A checkpoint load builds the model on the meta device and then assigns the stored tensors, so initialising
    shapes-only parameters would be work thrown away (213 init calls for SmolLM2). On a real device it initialises
    as ``nn.Linear`` exactly (same draws from the random generator, so seeded models are unchanged).
    """

    MIN_WEIGHTS = 2**20  # smaller weights (the explorer's models, GPT-2's 768 x 768) use F.linear: one call
    ONE_BLOCK_ROWS = 4096  # up to this many output features (GPT-2's MLP): one matmul, one transpose
    BLOCK_ROWS = 1024  # wider layers (an LM head): blocks of this many output features, (1024, N) each

    def reset_parameters(self) -> None:
        if not self.weight.is_meta:
            super().reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight.numel() < self.MIN_WEIGHTS:  # small layer: the extra calls would cost more than they save
            return F.linear(x, self.weight, self.bias)  # (..., out)
        x_t = x.reshape(-1, self.in_features).t()  # (in, N): N = every leading position (B*T)
        one_block = self.out_features <= self.ONE_BLOCK_ROWS or x_t.shape[1] == 1  # one token: nothing to transpose
        rows = self.out_features if one_block else self.BLOCK_ROWS
        # split gives views, and autograd joins their weight gradients once (slices would each add a zero-padded
        # full-size gradient)
        weights = self.weight.split(rows)  # (rows, in) each
        biases = self.bias.split(rows) if self.bias is not None else (None,) * len(weights)  # (rows,) each
        blocks = []
        for w, b in zip(weights, biases):
            # W x^T for these output features; addmm(b, W, X) = b + W X in one call, as nn.Linear adds its bias
            y_t = w @ x_t if b is None else torch.addmm(b[:, None], w, x_t)  # (rows, N)
            blocks.append(y_t.t())  # (N, rows): a transposed view
        # one block stays the transposed view (the next layer's x^T is then W x^T itself, no copy); blocks are joined
        y = blocks[0] if len(blocks) == 1 else torch.cat(blocks, dim=-1)  # (N, out)
        return y.view(*x.shape[:-1], self.out_features)  # (..., out): N split into the leading dims, still a view


class Embedding(nn.Embedding):
    """``nn.Embedding`` whose initialisation is skipped on the ``meta`` device (see :class:`Linear`)."""

    def reset_parameters(self) -> None:
        if not self.weight.is_meta:
            super().reset_parameters()


class LearnedPositions(nn.Module):
    """A learned table ``wpe`` ``[max_position_embeddings, H]`` added to the token embeddings (GPT-2)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(config.max_position_embeddings, config.hidden_size))

    def forward(self, position_ids: torch.Tensor) -> torch.Tensor:
        return self.weight[position_ids]  # (T, H)


class SinusoidalPositions(nn.Module):
    """Fixed sinusoidal table added to the token embeddings; a non-persistent buffer (not in state_dict)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        table = sinusoidal_table(config.max_position_embeddings, config.hidden_size)  # (P, H)
        self.register_buffer("table", table, persistent=False)

    def forward(self, position_ids: torch.Tensor) -> torch.Tensor:
        return self.table[position_ids]  # (T, H)


# Additive position schemes live at the embedding; RoPE ("rope") and "none" add nothing there.
ADDITIVE_POSITIONS: dict[str, type[nn.Module]] = {
    "learned": LearnedPositions,
    "sinusoidal": SinusoidalPositions,
}


def rope_cos_sin(position_ids: torch.Tensor, head_dim: int, theta: float,
                 inv_freq: torch.Tensor | None = None, scaling: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables for RoPE in the Hugging Face "rotate half" layout.

    Args:
        position_ids: ``[T]`` integer positions.
        head_dim: even head dimension.
        theta: base frequency (``rope_theta``).
        inv_freq: ``[head_dim/2]`` frequencies to use instead of ``theta^(-2i/head_dim)`` (YaRN's, :data:`ROPE_INIT`).
        scaling: factor on cos and sin (YaRN's attention factor; 1 otherwise).
    Returns:
        ``(cos, sin)``, each ``[T, head_dim]`` float32: frequency i is repeated at columns i and
        i + head_dim/2, matching transformers ``LlamaRotaryEmbedding``.
    """
    if inv_freq is None:
        even = torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device)  # (hd/2,): 0, 2, 4 ...
        inv_freq = 1.0 / (theta ** (even / head_dim))  # (hd/2,)
    freqs = position_ids.float()[:, None] * inv_freq.to(position_ids.device)[None, :]  # (T, hd/2)
    emb = torch.cat([freqs, freqs], dim=-1)  # (T, hd)
    if scaling == 1.0:
        return emb.cos(), emb.sin()
    return emb.cos() * scaling, emb.sin() * scaling


def yarn_inv_freq(config: ModelConfig, theta: float) -> tuple[torch.Tensor, float]:
    """YaRN's frequencies and attention factor (Peng et al. 2023, "YaRN"; transformers ``_compute_yarn_parameters``).

    Dimensions that turn fewer than ``rope_beta_slow`` times over the original context are interpolated (divided by
    ``rope_factor``), those turning more than ``rope_beta_fast`` times are kept, with a linear ramp between; cos and
    sin are multiplied by ``0.1 ln(factor) + 1``. Returns ``(inv_freq [head_dim/2], attention factor)``.
    """
    dim, factor = config.head_dim, config.rope_factor
    original = config.rope_original_max_position_embeddings

    def correction_dim(rotations: float) -> float:  # the dimension index that turns `rotations` times
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(theta))

    low, high = correction_dim(config.rope_beta_fast), correction_dim(config.rope_beta_slow)
    if config.rope_truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # no singular ramp
    ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)  # (hd/2,)
    pos_freqs = theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)  # (hd/2,): 1 / the plain frequencies
    keep = 1 - ramp  # 1 for fast dimensions (kept), 0 for slow ones (interpolated)
    inv_freq = 1.0 / (factor * pos_freqs) * (1 - keep) + 1.0 / pos_freqs * keep  # (hd/2,)
    return inv_freq, (0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0)


#: RoPE frequencies by ``config.rope_type``: ``(config, theta) -> (inv_freq [hd/2] or None, cos/sin factor)``.
ROPE_INIT: dict[str, Callable[[ModelConfig, float], tuple[Optional[torch.Tensor], float]]] = {
    "default": lambda config, theta: (None, 1.0),
    "yarn": yarn_inv_freq,
}


def rope_tables(config: ModelConfig, position_ids: torch.Tensor, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`rope_cos_sin` with ``config``'s frequency scheme (:data:`ROPE_INIT`) and base ``theta``."""
    inv_freq, scaling = ROPE_INIT[config.rope_type](config, theta)
    return rope_cos_sin(position_ids, config.head_dim, theta, inv_freq, scaling)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``[x1, x2] -> [-x2, x1]`` on the last dimension (halves, not interleaved pairs)."""
    x1, x2 = x.chunk(2, dim=-1)  # (..., hd/2) each
    return torch.cat([-x2, x1], dim=-1)  # (..., hd)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate queries or keys ``x`` ``[B, heads, T, head_dim]`` by position (Su et al. 2021, eq. 34).

    Each pair (i, i + head_dim/2) is rotated by angle ``position * theta^(-2i/head_dim)``, so the norm is
    kept and ``q_m . k_n`` depends only on ``m - n``.
    """
    return (x * cos.to(x.dtype) + rotate_half(x) * sin.to(x.dtype))  # (B, heads, T, hd)


# ---------------------------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------------------------


def causal_future_mask(T: int, device: torch.device | str | None = None, key_length: int | None = None) -> torch.Tensor:
    """``[T, S]`` boolean mask, True where query row i may NOT attend key j (a future key); ``S = key_length or T``.

    Aligned bottom-right: the T queries are the *last* T of the S positions (the earlier S - T are in the KV
    cache), so query i sits at position ``S - T + i`` and sees keys ``0 .. S - T + i``. For T == S this is the
    usual strict upper triangle. A top-left-aligned mask (what ``scaled_dot_product_attention(is_causal=True)``
    builds) would let a single new query against five keys see only key 0.

    :class:`engine.model.CausalLM` builds it once per forward pass and hands it to every layer (:class:`AttentionContext`).
    """
    S = T if key_length is None else key_length
    return torch.ones(T, S, dtype=torch.bool, device=device).triu(S - T + 1)  # (T, S)


def sliding_window_mask(T: int, past_length: int, window: int, device: torch.device | str | None = None) -> torch.Tensor:
    """``[T, S]`` boolean mask of a sliding-window layer, True where query i may NOT attend key j.

    The T queries sit at positions ``past_length .. past_length + T - 1``. A sliding layer's cache keeps only the
    last ``window - 1`` positions (:meth:`engine.kv_cache.KVCache.update`), so the keys are the ``kept =
    min(past_length, window - 1)`` cached ones and then the T new ones: ``S = kept + T``. Blocked: future keys, and
    keys ``window`` or more positions back (transformers' ``sliding_window_overlay``: ``kv_idx > q_idx - window``).
    """
    kept = min(past_length, window - 1)
    q_pos = torch.arange(past_length, past_length + T, device=device)[:, None]  # (T, 1)
    k_pos = torch.arange(past_length - kept, past_length + T, device=device)[None, :]  # (1, S)
    return (k_pos > q_pos) | (q_pos - k_pos >= window)  # (T, S)


def full_attention_mask(T: int, past_length: int, window: int | None = None,
                        device: torch.device | str | None = None) -> torch.Tensor:
    """``[T, past_length + T]``: :func:`causal_future_mask` (every cached key stays visible)."""
    return causal_future_mask(T, device, key_length=past_length + T)


#: The mask of each ``layer_types`` value: ``(T, past_length, sliding_window, device) -> [T, S]`` boolean, True =
#: blocked. :meth:`engine.model.CausalLM.attention_context` builds one per layer type present, once per forward.
ATTENTION_MASKS: dict[str, Callable[..., torch.Tensor]] = {
    "full_attention": full_attention_mask,
    "sliding_attention": sliding_window_mask,
}


@dataclass(frozen=True)
class AttentionContext:
    """What every layer's attention shares in one forward pass; :class:`engine.model.CausalLM` builds it once.

    Fields:
        attention: the function from :data:`ATTENTION_FUNCTIONS` (eager or SDPA).
        future_mask: :func:`causal_future_mask` ``[T, S]``, True where a query may NOT see a key.
        rope: ``(cos, sin)``, each ``[T, head_dim]`` (:func:`rope_cos_sin`), or None without RoPE.
        past_key_values: the :class:`engine.kv_cache.KVCache` (updated in place), or None.
        masks: layer type -> its ``[T, S_type]`` mask (:data:`ATTENTION_MASKS`); empty means every layer uses
            ``future_mask``.
        ropes: layer type -> its own ``(cos, sin)`` (Gemma 3's ``rope_local_base_freq`` on sliding layers).
    """

    attention: Callable[..., torch.Tensor]
    future_mask: torch.Tensor
    rope: Optional[tuple[torch.Tensor, torch.Tensor]] = None
    past_key_values: Optional[object] = None
    masks: dict = field(default_factory=dict)
    ropes: dict = field(default_factory=dict)

    def mask(self, layer_type: str) -> torch.Tensor:
        """The mask of a layer of type ``layer_type`` (``future_mask`` for "full_attention")."""
        return self.masks.get(layer_type, self.future_mask)

    def rope_for(self, layer_type: str) -> Optional[tuple[torch.Tensor, torch.Tensor]]:
        """The RoPE tables of a layer of type ``layer_type`` (``rope`` unless that type has its own base)."""
        return self.ropes.get(layer_type, self.rope)


def softmax_with_sinks(scores: torch.Tensor, sinks: torch.Tensor, rec: ActivationRecorder = NO_RECORDING) -> torch.Tensor:
    """Softmax over the keys plus one learned logit per head that has no value (gpt-oss ``sinks``; Xiao et al. 2023,
    "Efficient Streaming Language Models with Attention Sinks", as a learned column).

    Shapes: scores ``[B, n_heads, T, S]``, sinks ``[n_heads]``; returns the key weights ``[B, n_heads, T, S]``, which
    sum to ``1 - sink share`` per row (transformers ``GptOssAttention`` drops the sink column the same way). Records
    ``hook_sink`` ``[B, n_heads, T]``, the sink's share of each row. A sink of ``-inf`` gives plain softmax.
    """
    B, nh, T, _ = scores.shape
    column = sinks.to(scores.dtype).view(1, nh, 1, 1).expand(B, nh, T, 1)  # (B, nh, T, 1)
    probs = torch.softmax(torch.cat([scores, column], dim=-1), dim=-1)  # (B, nh, T, S+1)
    rec("hook_sink", probs[..., -1])  # (B, nh, T)
    return probs[..., :-1]  # (B, nh, T, S)


def soft_cap(scores: torch.Tensor, cap: float | None) -> torch.Tensor:
    """``cap * tanh(scores / cap)`` (Gemma 2's logit soft-capping: scores squashed into (-cap, cap)); None: unchanged."""
    return scores if cap is None else torch.tanh(scores / cap) * cap


def eager_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, future_mask: torch.Tensor,
                    rec: ActivationRecorder = NO_RECORDING, sinks: torch.Tensor | None = None,
                    causal: bool = True, scale: float | None = None, softcap: float | None = None) -> torch.Tensor:
    """``softmax(mask(Q K^T / sqrt(head_dim))) V``, written out: the reference, and the only path whose weights
    can be shown. The mask is a boolean fill of ``-inf``, so blocked keys (future ones, or outside a sliding window)
    get weight exactly 0. With ``sinks`` ``[n_heads]`` the softmax has one more column (:func:`softmax_with_sinks`).
    ``causal`` (whether the mask is the plain causal one) only matters to the SDPA path. ``scale`` replaces
    ``1 / sqrt(head_dim)``; ``softcap`` squashes the scaled scores before the mask (:func:`soft_cap`).

    Shapes: q ``[B, n_heads, T, head_dim]``; k, v ``[B, n_heads, S, head_dim]``; returns ``[B, n_heads, T, head_dim]``.
    Records ``hook_attn_scores_raw``, ``hook_attn_scores`` and ``hook_pattern`` (and ``hook_sink`` with sinks).
    """
    raw = rec("hook_attn_scores_raw", q @ k.transpose(-2, -1))  # (B, nh, T, S): Q K^T, before scaling and masking
    scores = soft_cap(raw / math.sqrt(q.shape[-1]) if scale is None else raw * scale, softcap)  # (B, nh, T, S)
    scores = rec("hook_attn_scores", scores.masked_fill(future_mask, float("-inf")))  # (B, nh, T, S), as in TL
    weights = torch.softmax(scores, dim=-1) if sinks is None else softmax_with_sinks(scores, sinks, rec)
    pattern = rec("hook_pattern", weights)  # (B, nh, T, S): exact zeros on blocked keys
    return pattern @ v  # (B, nh, T, hd)


def sdpa_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, future_mask: torch.Tensor,
                   rec: ActivationRecorder = NO_RECORDING, sinks: torch.Tensor | None = None,
                   causal: bool = True, scale: float | None = None, softcap: float | None = None) -> torch.Tensor:
    """The same result through ``F.scaled_dot_product_attention`` (fused, no weights to show or record).

    ``causal``: ``future_mask`` is the plain causal mask, so SDPA's own causal paths apply. Sinks become one extra
    key of zeros (score 0) with a zero value, whose additive mask entry is the sink logit. SDPA cannot soft-cap
    scores, so with ``softcap`` this is :func:`eager_attention` (as transformers' Gemma 2 refuses SDPA).
    """
    if softcap is not None:
        return eager_attention(q, k, v, future_mask, rec, sinks, causal, scale, softcap)
    T, S = q.shape[2], k.shape[2]
    if sinks is not None:
        nh = q.shape[1]
        bias = torch.zeros(T, S, dtype=q.dtype, device=q.device).masked_fill(future_mask, float("-inf"))  # (T, S)
        column = sinks.to(q.dtype).view(nh, 1, 1).expand(nh, T, 1)  # (nh, T, 1)
        bias = torch.cat([bias.expand(nh, T, S), column], dim=-1)  # (nh, T, S+1)
        zero = q.new_zeros(*k.shape[:2], 1, k.shape[3])  # (B, nh, 1, hd): the sink's key and value
        return F.scaled_dot_product_attention(q, torch.cat([k, zero], 2), torch.cat([v, zero], 2), attn_mask=bias,
                                              scale=scale)  # (B, nh, T, hd)
    if causal and S == T:  # no cache: the square causal mask, which is_causal=True builds (top-left = bottom-right)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)  # (B, nh, T, hd)
    if causal and T == 1:  # one new query, the last position: it may see every key, so no mask at all
        return F.scaled_dot_product_attention(q, k, v, scale=scale)  # (B, nh, 1, hd)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=~future_mask, scale=scale)  # True = may attend


#: Attention implementations by name, like transformers' ``attn_implementation``. ``CausalLM.forward`` picks
#: "eager" when weights or activations are requested, else "sdpa"; a test proves both agree.
ATTENTION_FUNCTIONS: dict[str, Callable[..., torch.Tensor]] = {"eager": eager_attention, "sdpa": sdpa_attention}


class CausalSelfAttention(nn.Module):
    """Multi-head (or grouped-query) causal self-attention with Llama-style projections.

    ``q_proj`` maps H -> n_heads*head_dim, ``k_proj``/``v_proj`` map H -> n_kv_heads*head_dim and ``o_proj``
    maps back to H. KV head j serves query heads ``j*g ... j*g+g-1`` with ``g = n_heads / n_kv_heads``.
    The score/softmax step is :data:`ATTENTION_FUNCTIONS`' eager or SDPA function (``ctx.attention``). There is
    no dropout, so the weights are the eval-mode probabilities: rows sum to 1 and the upper triangle is exactly 0.
    """

    def __init__(self, config: ModelConfig, layer_idx: int = 0):
        super().__init__()
        self.layer_idx = layer_idx  # which entry of a KV cache belongs to this layer
        self.n_heads = config.num_attention_heads
        self.n_kv_heads = config.kv_heads
        self.head_dim = config.head_dim
        H, hd = config.hidden_size, config.head_dim
        self.q_proj = Linear(H, self.n_heads * hd, bias=config.qkv_bias)
        self.k_proj = Linear(H, self.n_kv_heads * hd, bias=config.qkv_bias)
        self.v_proj = Linear(H, self.n_kv_heads * hd, bias=config.qkv_bias)
        self.o_proj = Linear(self.n_heads * hd, H, bias=config.bias)
        qk_norm = QK_NORMS[config.qk_norm]
        self.q_norm = qk_norm(config, self.n_heads * hd)  # (B, T, nh*hd) -> same; Identity for "none"
        self.k_norm = qk_norm(config, self.n_kv_heads * hd)  # (B, T, nkv*hd) -> same
        # scores = Q K^T * scale (head_dim^-0.5, or Gemma's query_pre_attn_scalar^-0.5), soft-capped when asked
        self.scale = (config.query_pre_attn_scalar or hd) ** -0.5
        self.softcap = config.attn_logit_softcapping
        self.layer_type = config.layer_type(layer_idx)  # "full_attention" or "sliding_attention": picks ctx's mask
        self.causal = self.layer_type == "full_attention"  # the plain causal mask (SDPA's fast paths apply)
        # How many positions this layer's KV cache keeps (None: all); a sliding layer needs only the last w - 1.
        self.cache_window = config.sliding_window if self.layer_type == "sliding_attention" else None
        # One learned softmax logit per head with no value (gpt-oss); None without sinks.
        self.sinks = nn.Parameter(torch.zeros(self.n_heads)) if config.attention_sinks else None  # (nh,)

    def forward(self, x: torch.Tensor, ctx: AttentionContext, rec: ActivationRecorder = NO_RECORDING) -> torch.Tensor:
        """Attend causally, over the cached keys too when ``ctx.past_key_values`` is given.

        Args:
            x: ``[B, T, H]`` normalised (Pre-Norm) or raw (Post-Norm) residual stream.
            ctx: the forward pass's shared inputs (attention function, causal mask, RoPE tables, KV cache).
            rec: records ``hook_q/k/v`` (after RoPE, k and v repeated for GQA), the eager path's scores and
                pattern, and ``hook_z`` (what it returns for ``hook_z`` goes on to ``o_proj``: interventions).
        Returns:
            ``[B, T, H]``.
        """
        B, T, _ = x.shape
        q = self.q_norm(self.q_proj(x)).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)  # (B, nh, T, hd)
        k = self.k_norm(self.k_proj(x)).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)  # (B, nkv, T, hd)
        v = self.v_proj(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)  # (B, nkv, T, hd)
        rope = ctx.rope_for(self.layer_type)
        if rope is not None:
            q, k = apply_rope(q, *rope), apply_rope(k, *rope)  # shapes unchanged
        if ctx.past_key_values is not None:  # cached keys/values first, then this forward's: positions 0 .. S-1
            k, v = ctx.past_key_values.update(k, v, self.layer_idx, self.cache_window)  # (B, nkv, S, hd) each
        groups = self.n_heads // self.n_kv_heads
        if groups > 1:  # GQA; with groups == 1 (multi-head attention) repeat_interleave would only copy
            k = k.repeat_interleave(groups, dim=1)  # (B, nh, S, hd): kv head j -> query heads j*g .. j*g+g-1
            v = v.repeat_interleave(groups, dim=1)  # (B, nh, S, hd)
        q, k, v = rec("hook_q", q), rec("hook_k", k), rec("hook_v", v)  # (B, nh, T or S, hd)
        z = ctx.attention(q, k, v, ctx.mask(self.layer_type), rec, sinks=self.sinks, causal=self.causal,
                          scale=self.scale, softcap=self.softcap)  # (B, nh, T, hd)
        z = rec("hook_z", z.transpose(1, 2))  # (B, T, nh, hd), TransformerLens layout; where head ablations act
        out = z.reshape(B, T, self.n_heads * self.head_dim)  # (B, T, nh*hd)
        return self.o_proj(out)  # (B, T, H)


# ---------------------------------------------------------------------------------------------------
# Feed-forward
# ---------------------------------------------------------------------------------------------------


def plain_glu(gate: torch.Tensor, up: torch.Tensor, act: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """``act(gate) * up`` (GLU variants; silu: SwiGLU)."""
    return act(gate) * up


def clamped_swiglu(gate: torch.Tensor, up: torch.Tensor, limit: float, alpha: float) -> torch.Tensor:
    """gpt-oss's SwiGLU: ``(clamp(up, -L, L) + 1) * g * sigmoid(alpha * g)`` with ``g = clamp(gate, max=L)``
    (transformers ``GptOssExperts._apply_gate``). Shapes unchanged."""
    g = gate.clamp(max=limit)
    return (up.clamp(-limit, limit) + 1) * g * torch.sigmoid(g * alpha)


class MLP(nn.Module):
    """Position-wise feed-forward network.

    Plain: ``down_proj(act(up_proj(x)))`` (GPT-2's ``c_fc``/``c_proj``).
    Gated: ``down_proj(act(gate_proj(x)) * up_proj(x))`` (Llama; SwiGLU with silu, Shazeer 2020).
    Shapes: ``[B, T, H] -> [B, T, I] -> [B, T, H]``.
    """

    def __init__(self, config: ModelConfig, intermediate_size: int | None = None):
        super().__init__()
        H, I = config.hidden_size, intermediate_size or config.intermediate_size
        self.act_fn = ACT2FN[config.hidden_act]
        # how the gate and up projections combine: act(gate) * up, or gpt-oss's clamped SwiGLU
        self.glu = (partial(clamped_swiglu, limit=config.swiglu_limit, alpha=config.swiglu_alpha)
                    if config.swiglu_limit is not None else partial(plain_glu, act=self.act_fn))
        self.gate_proj = Linear(H, I, bias=config.bias) if config.mlp_gated else None
        self.up_proj = Linear(H, I, bias=config.bias)
        self.down_proj = Linear(I, H, bias=config.bias)

    def forward(self, x: torch.Tensor, rec: ActivationRecorder = NO_RECORDING) -> torch.Tensor:
        if self.gate_proj is not None:
            pre = rec("hook_pre", self.gate_proj(x))  # (B, T, I)
            post = rec("hook_post", self.glu(pre, self.up_proj(x)))  # (B, T, I)
        else:
            pre = rec("hook_pre", self.up_proj(x))  # (B, T, I)
            post = rec("hook_post", self.act_fn(pre))  # (B, T, I)
        return self.down_proj(post)  # (B, T, H)


class MoE(nn.Module):
    """Mixture-of-experts FFN: a router picks k of E expert FFNs per token (Shazeer et al. 2017; Fedus et al. 2021,
    "Switch Transformers"; Jiang et al. 2024, Mixtral), plus an optional shared expert every token goes through
    (Qwen2-MoE, DeepSeekMoE).

    ``probs = softmax(gate(x))`` ``[B, T, E]``; the top-k probabilities (renormalised to sum 1 when
    ``norm_topk_prob``) weight the chosen experts' outputs: ``y = sum_j w_j * expert_{i_j}(x)``; with a shared
    expert, ``y += sigmoid(shared_expert_gate(x)) * shared_expert(x)``. Each expert is an :class:`MLP` of width
    ``config.expert_intermediate_size`` and runs only on the tokens routed to it (transformers' loop over the
    experts that were hit). Names: ``gate`` (router ``[E, H]``), ``experts.{e}.{gate,up,down}_proj``,
    ``shared_expert``, ``shared_expert_gate`` (Qwen-MoE's; Mixtral's files are renamed on load).

    Records ``hook_router_logits`` ``[B, T, E]``, ``hook_expert_indices`` and ``hook_expert_weights`` ``[B, T, k]``
    (TransformerLens' names); :func:`router_load` turns router logits into load statistics.
    Shapes: ``[B, T, H] -> [B, T, H]``.
    """

    def __init__(self, config: ModelConfig):
        super().__init__()
        H, E = config.hidden_size, config.num_local_experts
        self.top_k, self.norm_topk_prob = config.num_experts_per_tok, config.norm_topk_prob
        self.gate = Linear(H, E, bias=config.router_bias)  # router: (E, H) (+ (E,) for gpt-oss)
        self.experts = nn.ModuleList(MLP(config, config.expert_intermediate_size) for _ in range(E))
        shared = config.shared_expert_intermediate_size
        self.shared_expert = MLP(config, shared) if shared else None
        self.shared_expert_gate = Linear(H, 1, bias=False) if shared else None

    def forward(self, x: torch.Tensor, rec: ActivationRecorder = NO_RECORDING) -> torch.Tensor:
        B, T, H = x.shape
        flat = x.reshape(B * T, H)  # (N, H), N = B*T tokens
        logits = rec("hook_router_logits", self.gate(x)).reshape(B * T, -1)  # (N, E)
        probs = torch.softmax(logits.float(), dim=-1)  # (N, E), float32 as transformers
        weights, indices = torch.topk(probs, self.top_k, dim=-1)  # (N, k) each
        if self.norm_topk_prob:
            weights = weights / weights.sum(dim=-1, keepdim=True)  # (N, k): the chosen k sum to 1
        weights = weights.to(x.dtype)
        rec("hook_expert_indices", indices.view(B, T, -1))  # (B, T, k)
        rec("hook_expert_weights", weights.view(B, T, -1))  # (B, T, k)
        out = torch.zeros_like(flat)  # (N, H)
        for e in indices.unique().tolist():  # only the experts some token was routed to
            token, slot = torch.where(indices == e)  # (n_e,) each
            y = self.experts[e](flat[token]) * weights[token, slot, None]  # (n_e, H)
            out.index_add_(0, token, y)
        if self.shared_expert is not None:
            out = out + torch.sigmoid(self.shared_expert_gate(flat)) * self.shared_expert(flat)  # (N, H)
        return out.view(B, T, H)


#: The FFN of a block: "dense" (:class:`MLP`) or "moe" (:class:`MoE`, when ``num_local_experts`` > 0).
FEED_FORWARDS: dict[str, type[nn.Module]] = {"dense": MLP, "moe": MoE}


def build_feed_forward(config: ModelConfig) -> nn.Module:
    """The FFN ``config`` asks for (registry lookup; ``num_local_experts`` > 0 selects "moe")."""
    return FEED_FORWARDS["moe" if config.num_local_experts else "dense"](config)


def router_load(router_logits: list[torch.Tensor] | tuple[torch.Tensor, ...], top_k: int) -> dict[str, torch.Tensor]:
    """Load statistics of a mixture-of-experts model from its routers' logits (one ``[..., E]`` tensor per MoE layer).

    Returns:
        ``tokens_per_expert`` ``[E]``: routed slots per token going to each expert (sums to k), over all layers;
        ``prob_per_expert`` ``[E]``: mean router probability of each expert; ``aux_loss``: the Switch Transformer
        load-balancing loss ``E * sum_e tokens_per_expert[e] * prob_per_expert[e]`` (k when perfectly even:
        ``E * sum_e (k/E) * (1/E) = k``), as transformers' ``load_balancing_loss_func`` (Fedus et al. 2021, eq. 4).
    """
    flat = [g.reshape(-1, g.shape[-1]).float() for g in router_logits]  # per layer (N, E)
    E = flat[0].shape[-1]
    counts = torch.zeros(E)
    prob_sum = torch.zeros(E)
    rows = 0
    for logits in flat:
        probs = torch.softmax(logits, dim=-1)  # (N, E)
        chosen = torch.topk(probs, top_k, dim=-1).indices  # (N, k)
        counts += torch.bincount(chosen.reshape(-1).cpu(), minlength=E).float()
        prob_sum += probs.sum(dim=0).cpu()
        rows += probs.shape[0]
    tokens, prob = counts / rows, prob_sum / rows  # (E,) each
    return {"tokens_per_expert": tokens, "prob_per_expert": prob, "aux_loss": E * (tokens * prob).sum()}
