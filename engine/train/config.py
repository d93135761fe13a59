"""Training hyper-parameters (:class:`TrainConfig`, validated at construction) and the learning-rate schedule
(:func:`lr_at`: linear warmup, then cosine decay to a floor).

References: T. Brown et al. 2020 (GPT-3, appendix B) and A. Karpathy's nanoGPT (``get_lr`` in ``train.py``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation hyper-parameters. Defaults: a ~10-second CPU run that learns the poem line structure.

    Fields:
        steps: number of optimiser updates (positive int).
        learning_rate: peak learning rate of AdamW (> 0).
        warmup_steps: updates of linear warmup from ``learning_rate / warmup_steps`` up to the peak
            (int >= 0, < steps; 0 switches warmup off).
        min_lr_ratio: the cosine decays to ``learning_rate * min_lr_ratio`` at the last step (in [0, 1]).
        batch_size: B, windows per step (positive int).
        seq_len: T, tokens per window (int >= 2: one window of T tokens gives T-1 next-token targets).
        weight_decay: AdamW decoupled weight decay on the matrices of the blocks (>= 0; see :class:`Trainer`).
        grad_clip: clip the global gradient L2 norm to this value (> 0), or 0 for no clipping.
        eval_every: estimate the validation loss every this many steps (positive int); it is also estimated
            before the first step (step 0) and after the last.
        eval_batches: batches of the validation estimate (positive int). They are the same batches every time
            (a generator seeded with ``seed + 1``), so validation losses are comparable across steps.
        seed: seeds the generator of the training batches (and, in :func:`race_pre_post`, the initial weights).
        val_fraction: share of the token stream held out for validation, taken from the END of the stream
            (in [0, 0.5]; 0 means no validation loss, reported as None).

    Raises:
        ValueError: any field out of range; the message names the field, the value and the valid range.
    """

    steps: int = 300
    learning_rate: float = 3e-3
    warmup_steps: int = 30
    min_lr_ratio: float = 0.1
    batch_size: int = 16
    seq_len: int = 64
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_every: int = 50
    eval_batches: int = 8
    seed: int = 0
    val_fraction: float = 0.1

    def __post_init__(self) -> None:
        def is_int(v: object) -> bool:
            return isinstance(v, int) and not isinstance(v, bool)

        for name in ("steps", "batch_size", "eval_every", "eval_batches"):
            v = getattr(self, name)
            if not is_int(v) or v <= 0:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not is_int(self.seq_len) or self.seq_len < 2:
            raise ValueError(f"seq_len must be an integer >= 2 (T tokens give T-1 targets), got {self.seq_len!r}")
        if not is_int(self.warmup_steps) or not 0 <= self.warmup_steps < self.steps:
            raise ValueError(
                f"warmup_steps must be an integer in [0, steps={self.steps}), got {self.warmup_steps!r}"
            )
        if not is_int(self.seed):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        if not (isinstance(self.learning_rate, (int, float)) and math.isfinite(self.learning_rate)
                and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be a finite number > 0, got {self.learning_rate!r}")
        for name, lo, hi in (("min_lr_ratio", 0.0, 1.0), ("val_fraction", 0.0, 0.5)):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and lo <= v <= hi):
                raise ValueError(f"{name} must be a number in [{lo}, {hi}], got {v!r}")
        for name in ("weight_decay", "grad_clip"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")

    def replace(self, **changes) -> "TrainConfig":
        """Validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate of update number ``step`` (1-based: ``step = 1`` is the first update, ``cfg.steps`` the last).

    Schedule (GPT-3 appendix B; nanoGPT ``get_lr``), with ``peak = cfg.learning_rate``,
    ``floor = peak * cfg.min_lr_ratio`` and ``W = cfg.warmup_steps``:

    * warmup, ``1 <= step <= W``: linear, ``peak * step / W`` (reaches the peak at ``step = W``);
    * decay, ``W < step <= steps``: ``floor + (peak - floor) * (1 + cos(pi * r)) / 2`` with
      ``r = (step - W) / (steps - W)``, so the last update uses exactly ``floor``.
    * ``step = 0`` (before training) returns the rate the schedule starts from: 0 with warmup, the peak without.

    With ``W = 0`` there is no warmup: the cosine starts at the peak.

    Raises:
        ValueError: ``step`` outside ``[0, cfg.steps]``.
    """
    if not 0 <= step <= cfg.steps:
        raise ValueError(f"step must be in [0, steps={cfg.steps}], got {step}")
    peak = cfg.learning_rate
    floor = peak * cfg.min_lr_ratio
    W = cfg.warmup_steps
    if W > 0 and step <= W:
        return peak * step / W
    r = (step - W) / (cfg.steps - W)  # 0 at the end of warmup, 1 at the last step
    return floor + (peak - floor) * 0.5 * (1.0 + math.cos(math.pi * r))
