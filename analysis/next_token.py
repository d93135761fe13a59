"""The next-token distribution: top-k table, one token's probability and rank, a short continuation
(the Next token page)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from engine import generation
from engine.model import CausalLM


def next_token_table(logits: torch.Tensor, token_strings, k: int = 10, temperature: float = 1.0) -> pd.DataFrame:
    """Top-k next-token probabilities from one position's logits ``[V]``.

    ``p = softmax(logits / temperature)``. Columns: ``rank`` (1-based), ``token_id``, ``token``,
    ``logit``, ``probability``.

    Args:
        token_strings: callable ``list[int] -> list[str]`` giving display strings.
    Raises:
        ValueError: temperature <= 0 or k < 1.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    probs = torch.softmax(logits.double() / temperature, dim=-1)  # (V,)
    top = torch.topk(probs, min(k, probs.numel()))
    ids = top.indices.tolist()
    return pd.DataFrame({
        "rank": np.arange(1, len(ids) + 1),
        "token_id": ids,
        "token": token_strings(ids),
        "logit": logits[ids].double().cpu().numpy(),
        "probability": top.values.cpu().numpy(),
    })


def token_probability(logits: torch.Tensor, token_id: int, temperature: float = 1.0) -> tuple[float, int]:
    """Probability and rank of one token under ``softmax(logits / temperature)``; logits ``[V]``.

    Returns:
        ``(probability in [0, 1], rank)`` where rank 1 = most likely (ties share the better rank).
    Raises:
        ValueError: temperature <= 0 or ``token_id`` outside ``[0, V)``.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    V = logits.shape[-1]
    if not 0 <= token_id < V:
        raise ValueError(f"token id {token_id} is outside the vocabulary [0, {V})")
    probs = torch.softmax(logits.double() / temperature, dim=-1)  # (V,)
    p = probs[token_id]
    return float(p), int((probs > p).sum()) + 1


@torch.no_grad()
def generate(model: CausalLM, input_ids: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             greedy: bool = True, seed: int = 0) -> list[int]:
    """Continue ``input_ids`` ``[1, T]`` by ``max_new_tokens`` tokens (greedy argmax or sampling at
    ``temperature``) with :func:`engine.generation.generate` (KV cache, seeded per step).

    Stops early at the model's position limit. Returns the new token ids (without the prompt).
    """
    out = generation.generate(model, input_ids, max_new_tokens, do_sample=not greedy, temperature=temperature,
                              seed=seed)  # (1, T + n)
    return out[0, input_ids.shape[1]:].tolist()
