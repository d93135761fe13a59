"""Generation: prefill + decode with the KV cache, and the sampling filters that shape each step's distribution.

Decoding one token (Pope et al. 2022; transformers ``generate``):

    out = model(prompt_ids, use_cache=True)                          # prefill: T tokens, fills the cache
    next_id = pick(out.logits[:, -1])                                # greedy argmax or a filtered sample
    out = model(next_id, past_key_values=out.past_key_values, use_cache=True)   # 1 token, 1 query row

Sampling filters, applied in this order (the order transformers' ``generate`` uses):

    1. temperature  logits / temperature            (< 1 sharpens, > 1 flattens; never removes a token)
    2. top-k        keep the k highest logits        (tokens tied with the k-th are kept too)
    3. top-p        keep the smallest set of most probable tokens whose probability sums to >= p (nucleus;
                    Holtzman et al. 2019); the most probable token is always kept
    4. min-p        keep tokens with probability >= min_p * (probability of the most probable token)
                    (Nguyen et al. 2024)

Each filter works on the distribution the previous one left (renormalised), and :func:`sampling_filters`
returns the distribution before and after every filter so a page can show what each one removed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .config import ModelConfig
from .kv_cache import KVCache
from .model import CausalLM

FILTER_ORDER = ("temperature", "top_k", "top_p", "min_p")


@dataclass
class FilterStep:
    """One sampling filter: its setting and the probabilities ``[..., V]`` before and after it."""

    name: str
    value: float
    before: torch.Tensor
    after: torch.Tensor

    @property
    def removed(self) -> torch.Tensor:
        """``[..., V]`` bool: tokens this filter set to probability 0 (they had some before)."""
        return (self.before > 0) & (self.after == 0)


def check_sampling(temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0) -> None:
    """Raise ``ValueError`` naming the bad setting: temperature > 0, top_k >= 0, 0 < top_p <= 1, 0 <= min_p < 1."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0 (use do_sample=False for greedy), got {temperature}")
    if int(top_k) != top_k or top_k < 0:
        raise ValueError(f"top_k must be an integer >= 0 (0 = off), got {top_k}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1] (1 = off), got {top_p}")
    if not 0 <= min_p < 1:
        raise ValueError(f"min_p must be in [0, 1) (0 = off), got {min_p}")


def apply_temperature(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """``logits / temperature`` ``[..., V]``: changes the shape of the distribution, removes nothing."""
    return logits / temperature  # (..., V)


def top_k_filter(logits: torch.Tensor, top_k: int) -> torch.Tensor:
    """``-inf`` for every logit below the k-th highest ``[..., V]``; ``top_k`` 0 or >= V leaves all tokens."""
    if top_k <= 0 or top_k >= logits.shape[-1]:
        return logits
    kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]  # (..., 1): the k-th highest logit
    return logits.masked_fill(logits < kth, float("-inf"))  # (..., V)


def top_p_filter(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Nucleus: keep the most probable tokens until their probability reaches ``top_p``; ``-inf`` elsewhere.

    A token is kept when the probability of the tokens ranked above it is still below ``top_p``, so the most
    probable token is always kept and the kept set is the smallest one with total probability >= top_p.
    """
    if top_p >= 1:
        return logits
    probs = torch.softmax(logits.double(), dim=-1)  # (..., V), float64 so the running sums round less
    sorted_probs, order = probs.sort(dim=-1, descending=True)  # (..., V) each
    mass_above = sorted_probs.cumsum(dim=-1) - sorted_probs  # (..., V): probability ranked above each token
    keep_sorted = (mass_above < top_p) & (sorted_probs > 0)  # (..., V)
    keep_sorted[..., 0] = True  # the most probable token survives any p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)  # (..., V) back in vocabulary order
    return logits.masked_fill(~keep, float("-inf"))  # (..., V)


def min_p_filter(logits: torch.Tensor, min_p: float) -> torch.Tensor:
    """Keep tokens whose probability is at least ``min_p`` times the top token's; ``-inf`` elsewhere."""
    if min_p <= 0:
        return logits
    probs = torch.softmax(logits.double(), dim=-1)  # (..., V)
    threshold = min_p * probs.max(dim=-1, keepdim=True).values  # (..., 1)
    return logits.masked_fill(probs < threshold, float("-inf"))  # (..., V)


def sampling_filters(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0,
                     min_p: float = 0.0) -> tuple[torch.Tensor, list[FilterStep]]:
    """Apply temperature, top-k, top-p and min-p in that order (see the module docstring).

    Args:
        logits: ``[..., V]`` raw next-token scores.
    Returns:
        ``(filtered logits [..., V] with -inf on removed tokens, [FilterStep per filter in FILTER_ORDER])``;
        each step's ``before``/``after`` are float64 probabilities ``[..., V]`` (softmax of its input/output).
    Raises:
        ValueError: a setting out of range (see :func:`check_sampling`).
    """
    check_sampling(temperature, top_k, top_p, min_p)
    filters = (("temperature", temperature, apply_temperature), ("top_k", top_k, top_k_filter),
               ("top_p", top_p, top_p_filter), ("min_p", min_p, min_p_filter))
    steps = []
    x = logits.double()  # (..., V)
    for name, value, fn in filters:
        before = torch.softmax(x, dim=-1)  # (..., V)
        x = fn(x, value)  # (..., V)
        steps.append(FilterStep(name, value, before, torch.softmax(x, dim=-1)))
    return x, steps


def step_generator(seed: int, step: int) -> torch.Generator:
    """The random generator of decode step ``step`` (0-based) of a run seeded ``seed``.

    One generator per step, so any step of a run can be replayed on its own with the same draw.
    """
    return torch.Generator().manual_seed(int(seed) * 100_003 + int(step))


def pick_next(logits: torch.Tensor, do_sample: bool = False, temperature: float = 1.0, top_k: int = 0,
              top_p: float = 1.0, min_p: float = 0.0, seed: int = 0, step: int = 0) -> torch.Tensor:
    """Next token ids ``[B]`` from last-position logits ``[B, V]``: argmax, or a sample after the filters."""
    if not do_sample:
        return logits.argmax(dim=-1)  # (B,)
    filtered, _ = sampling_filters(logits, temperature, top_k, top_p, min_p)  # (B, V)
    probs = torch.softmax(filtered, dim=-1)  # (B, V)
    return torch.multinomial(probs, 1, generator=step_generator(seed, step))[:, 0]  # (B,)


@torch.no_grad()
def generate(model: CausalLM, input_ids: torch.Tensor, max_new_tokens: int, *, use_cache: bool = True,
             do_sample: bool = False, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0,
             min_p: float = 0.0, seed: int = 0) -> torch.Tensor:
    """Continue ``input_ids`` ``[B, T]`` by up to ``max_new_tokens`` tokens.

    With ``use_cache`` the prompt is prefilled once and each new token is one forward of a single position
    against the KV cache; without it every step reruns the whole sequence (same tokens, more work). Stops
    early at ``max_position_embeddings`` for learned or sinusoidal positions.

    Returns:
        ``[B, T + n]``: the prompt followed by the n new tokens.
    Raises:
        ValueError: invalid ids or sampling settings.
    """
    if do_sample:
        check_sampling(temperature, top_k, top_p, min_p)
    ids = input_ids  # (B, T)
    limit = model.config.max_position_embeddings if model.config.has_position_limit else None
    cache = None
    for step in range(max_new_tokens):
        if limit is not None and ids.shape[1] >= limit:
            break
        if not use_cache:
            logits = model(ids, logits_to_keep=1).logits[:, -1]  # (B, V): whole sequence again
        elif cache is None:
            out = model(ids, use_cache=True, logits_to_keep=1)  # prefill
            logits, cache = out.logits[:, -1], out.past_key_values  # (B, V)
        else:
            out = model(ids[:, -1:], past_key_values=cache, use_cache=True)  # one new position
            logits, cache = out.logits[:, -1], out.past_key_values  # (B, V)
        nxt = pick_next(logits, do_sample, temperature, top_k, top_p, min_p, seed, step)  # (B,)
        ids = torch.cat([ids, nxt[:, None].to(ids.dtype)], dim=1)  # (B, T + step + 1)
    return ids


def forward_flops(config: ModelConfig, new_tokens: int, key_length: int, logits_positions: int = 1) -> int:
    """Multiply-add FLOPs (2 per multiply-accumulate) of one forward of ``new_tokens`` positions.

    Counts the matrix products: Q/K/V/O projections and the MLP for each new position, ``Q K^T`` and
    ``pattern @ V`` of ``new_tokens`` query rows against ``key_length`` keys in every head, and the LM head
    for ``logits_positions`` positions. Norms, softmax and embedding lookups (O(H) per token) are left out.

    A decode step with the cache is ``forward_flops(c, 1, t + 1)``; recomputing instead is
    ``forward_flops(c, t + 1, t + 1)`` (the full square of scores is computed, the mask only zeroes half).
    """
    H, I, V = config.hidden_size, config.intermediate_size, config.vocab_size
    nh, nkv, hd = config.num_attention_heads, config.kv_heads, config.head_dim
    projections = 2 * H * nh * hd + 2 * 2 * H * nkv * hd + 2 * nh * hd * H  # q, k and v, o per token
    mlp = 2 * H * I * (3 if config.mlp_gated else 2)  # gate/up/down or up/down per token
    per_layer = new_tokens * (projections + mlp) + 2 * 2 * nh * new_tokens * key_length * hd  # + QK^T, PV
    return config.num_hidden_layers * per_layer + 2 * H * V * logits_positions


@dataclass
class DecodeStep:
    """One decode step of a batch-of-one run (see :func:`decode_step`).

    Fields:
        token_id: the token picked from ``filters``' distribution and fed to the model.
        probability: its probability in the distribution it was drawn from (after every filter; the plain
            softmax when greedy).
        raw_probability: its probability under ``softmax(logits)``, before any filter.
        filters: the :class:`FilterStep` list of that distribution (``[V]`` tensors).
        logits: ``[V]`` the next position's logits, computed from the cache.
        attentions: L tensors ``[n_heads, S]``: the new token's query row over all S cached keys (its own
            key included), one row per head.
        past_key_values: the cache after the step (S positions).
    """

    token_id: int
    probability: float
    raw_probability: float
    filters: list[FilterStep]
    logits: torch.Tensor
    attentions: tuple[torch.Tensor, ...]
    past_key_values: KVCache


@torch.no_grad()
def decode_step(model: CausalLM, logits: torch.Tensor, past_key_values: KVCache, do_sample: bool = False,
                temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0, seed: int = 0,
                step: int = 0) -> DecodeStep:
    """Pick the next token from ``logits`` ``[V]`` and run it through ``model`` against the cache.

    The token is the argmax (``do_sample=False``) or a draw after the filters with the generator of
    ``(seed, step)``, so replaying a run with the same seed and settings gives the same tokens. The filters are
    computed in both modes so a page can show them. Only one query row per layer and head is computed: the
    new token attends over the ``S = cached + 1`` keys.
    """
    filtered, filters = sampling_filters(logits, temperature, top_k, top_p, min_p)  # (V,), 4 steps
    token = pick_next(logits[None], do_sample, temperature, top_k, top_p, min_p, seed, step)  # (1,)
    token_id = int(token[0])
    raw = float(filters[0].before[token_id])
    prob = float(filters[-1].after[token_id]) if do_sample else raw
    out = model(token[None], past_key_values=past_key_values, use_cache=True, output_attentions=True)
    rows = tuple(a[0, :, -1] for a in out.attentions)  # L x (n_heads, S)
    return DecodeStep(token_id, prob, raw, filters, out.logits[0, -1], rows, out.past_key_values)
