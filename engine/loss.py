"""Next-token cross-entropy with the shift done exactly once, and label-masking helpers.

Convention (Hugging Face causal LMs): ``labels`` are aligned with ``input_ids``; the logits at position t
predict ``labels[t+1]``; a label of ``IGNORE_INDEX`` (-100) is "not supervised". The loss is the mean over
supervised targets only, i.e. ``sum(token losses) / (number of supervised targets)``.
"""

from __future__ import annotations

import torch

IGNORE_INDEX = -100


def shifted_token_losses(logits: torch.Tensor, labels: torch.Tensor, ignore_index: int = IGNORE_INDEX) -> torch.Tensor:
    """Per-position next-token losses.

    Args:
        logits: ``[B, T, V]`` scores for every position.
        labels: ``[B, T]`` token ids aligned with the input, ``ignore_index`` where not supervised.
    Returns:
        ``[B, T-1]`` float tensor: entry ``[b, t]`` is ``-log softmax(logits[b, t])[labels[b, t+1]]`` in nats,
        NaN where ``labels[b, t+1] == ignore_index``.
    Raises:
        ValueError: if shapes disagree or a supervised label is outside ``[0, V)``.
    """
    if logits.dim() != 3 or labels.shape != logits.shape[:2]:
        raise ValueError(f"labels {tuple(labels.shape)} must match logits [B, T] = {tuple(logits.shape[:2])}")
    V = logits.shape[-1]
    shift_logits = logits[:, :-1, :]  # (B, T-1, V): position t ...
    shift_labels = labels[:, 1:]  # (B, T-1): ... predicts token t+1
    supervised = shift_labels != ignore_index  # (B, T-1)
    bad = supervised & ((shift_labels < 0) | (shift_labels >= V))
    if bad.any():
        raise ValueError(f"label {int(shift_labels[bad][0])} is outside the vocabulary [0, {V})")
    log_probs = torch.log_softmax(shift_logits.float(), dim=-1)  # (B, T-1, V)
    safe = shift_labels.clamp(min=0)  # (B, T-1): any valid index where masked; overwritten below
    nll = -log_probs.gather(-1, safe.unsqueeze(-1)).squeeze(-1)  # (B, T-1)
    return nll.masked_fill(~supervised, float("nan"))  # (B, T-1)


def mean_supervised_loss(token_losses: torch.Tensor) -> torch.Tensor:
    """Mean over supervised (non-NaN) entries of ``token_losses`` ``[B, T-1]``; a 0-dim tensor.

    NaN when no target is supervised: there is nothing to average, and the app says so in words.
    """
    supervised = ~torch.isnan(token_losses)  # (B, T-1)
    n = supervised.sum()
    total = torch.where(supervised, token_losses, torch.zeros_like(token_losses)).sum()
    return total / n if n > 0 else total * float("nan")


def mask_prompt(labels: torch.Tensor, n_prompt: int, ignore_index: int = IGNORE_INDEX) -> torch.Tensor:
    """Copy of ``labels`` ``[B, T]`` with the first ``n_prompt`` positions set to ``ignore_index``.

    Raises:
        ValueError: if ``n_prompt`` is negative.
    """
    if n_prompt < 0:
        raise ValueError(f"n_prompt must be >= 0, got {n_prompt}")
    out = labels.clone()
    out[:, :n_prompt] = ignore_index
    return out


def mask_positions(labels: torch.Tensor, positions, ignore_index: int = IGNORE_INDEX) -> torch.Tensor:
    """Copy of ``labels`` ``[B, T]`` with the given positions (along T) set to ``ignore_index``."""
    out = labels.clone()
    idx = [int(p) for p in positions if 0 <= int(p) < labels.shape[1]]
    if idx:
        out[:, idx] = ignore_index
    return out
