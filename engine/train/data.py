"""Training data: a contiguous train/validation split of a token stream, and random training windows."""

from __future__ import annotations

from typing import Sequence, Union

import torch


def split_ids(token_ids: Union[Sequence[int], torch.Tensor], val_fraction: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Split a token stream into ``(train_ids, val_ids)``: 1-D int64 tensors, validation at the END.

    The split is contiguous (``n_val = floor(N * val_fraction)``), not shuffled, so no validation window
    overlaps a training window. On ``load_corpus("all")`` the end is English prose; on ``"zh"`` it is the
    last poems (mostly 7-character quatrains).

    Raises:
        ValueError: ``token_ids`` is not 1-D, or ``val_fraction`` is outside [0, 0.5].
    """
    ids = torch.as_tensor(token_ids, dtype=torch.long)
    if ids.dim() != 1:
        raise ValueError(f"token_ids must be a 1-D sequence of ids, got shape {tuple(ids.shape)}")
    if not 0.0 <= val_fraction <= 0.5:
        raise ValueError(f"val_fraction must be in [0, 0.5], got {val_fraction!r}")
    n_val = int(len(ids) * val_fraction)
    return ids[: len(ids) - n_val], ids[len(ids) - n_val:]


def get_batch(
    ids: torch.Tensor, batch_size: int, seq_len: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample ``batch_size`` random windows of ``seq_len`` consecutive tokens.

    Args:
        ids: 1-D int64 token stream, at least ``seq_len`` long.
        generator: the ``torch.Generator`` that draws the window starts (uniform over ``[0, len - seq_len]``);
            the same generator state gives the same batch.
    Returns:
        ``(x, y)``, both ``[B, T]`` int64 with ``T = seq_len``, and ``y`` is ``x`` itself. Our model takes
        labels ALIGNED with the input and shifts them once inside (``logits[:, t]`` predicts ``labels[:, t+1]``,
        see ``engine.loss``), so ``model(x, labels=y)`` is the next-token loss over the ``T - 1`` targets of each
        window. (nanoGPT instead returns ``y = ids[i+1 : i+1+T]`` because its loss does not shift.)
    Raises:
        ValueError: the stream is shorter than ``seq_len``.
    """
    if len(ids) < seq_len:
        raise ValueError(f"token stream of {len(ids)} tokens is shorter than seq_len={seq_len}")
    starts = torch.randint(0, len(ids) - seq_len + 1, (batch_size,), generator=generator)  # (B,)
    offsets = torch.arange(seq_len)  # (T,)
    x = ids[starts[:, None] + offsets[None, :]]  # (B, T): row b is ids[starts[b] : starts[b] + T]
    return x, x
