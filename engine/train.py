"""A small, readable training loop for :class:`engine.model.CausalLM` (torch only; no streamlit, no plotly).

What is here
------------
* :class:`TrainConfig`: the optimisation hyper-parameters, validated at construction.
* :func:`lr_at`: linear warmup then cosine decay of the learning rate.
* :func:`split_ids` / :func:`get_batch`: a contiguous train/validation split of the token stream and random
  training windows.
* :class:`Trainer` (one optimisation step at a time) and :func:`train` (the whole loop). Every step reports a
  :class:`StepInfo` to an optional callback; a ``stop`` event ends the run between steps.
* :func:`clone_model`: the copy a caller must train instead of a shared (cached) model.
* :func:`race_pre_post`: the same initial weights and the same batches, trained once with Pre-Norm and once
  with Post-Norm, step by step in turn.
* :func:`measure_poem_structure` and :func:`head_slot_attention`: two probes of what a model trained on the
  Tang poems learned (where the punctuation goes; which heads look at the same slot of the previous line).

Units: losses are mean cross-entropy in nats per predicted token; learning rates are AdamW step sizes;
gradient norms are L2 norms over the named parameters; times are wall-clock seconds.

References
----------
* I. Loshchilov, F. Hutter, "Decoupled Weight Decay Regularization", ICLR 2019 (AdamW) -- the optimiser,
  used as ``torch.optim.AdamW``.
* Linear warmup + cosine decay to a floor: T. Brown et al. 2020 (GPT-3, appendix B) and A. Karpathy's nanoGPT
  (``get_lr`` in ``train.py``).
* R. Pascanu, T. Mikolov, Y. Bengio, "On the difficulty of training recurrent neural networks", ICML 2013 --
  clipping the global gradient norm, used as ``torch.nn.utils.clip_grad_norm_``.
* R. Xiong et al., "On Layer Normalization in the Transformer Architecture", ICML 2020 -- why Pre-Norm
  trains without warmup while Post-Norm's gradients depend on depth (see :func:`race_pre_post`).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Union

import torch

from .config import ModelConfig
from .model import CausalLM
from .seeding import seeded

__all__ = [
    "TrainConfig",
    "StepInfo",
    "TrainResult",
    "RaceResult",
    "PoemStructure",
    "Trainer",
    "lr_at",
    "split_ids",
    "get_batch",
    "train",
    "clone_model",
    "race_pre_post",
    "measure_poem_structure",
    "poem_slot_pairs",
    "head_slot_attention",
    "LINE_OFFSET_5",
]

#: A ``stop`` argument: a ``threading.Event`` (stop when set) or any callable returning True to stop.
StopSignal = Union[threading.Event, Callable[[], bool], None]


# =====================================================================================================
# Configuration and learning-rate schedule
# =====================================================================================================


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


# =====================================================================================================
# Data: contiguous split and random windows
# =====================================================================================================


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


# =====================================================================================================
# Results
# =====================================================================================================


@dataclass
class StepInfo:
    """What the callback receives after each update (``step = 1..steps``).

    Fields:
        step: number of updates done, 1-based.
        loss: training loss of this step's batch (nats/token), measured before the update.
        lr: learning rate used by this update (:func:`lr_at`).
        grad_norm: global L2 norm of all gradients BEFORE clipping (tied embedding/head counted once).
        layer_grad_norms: L floats; entry i is the L2 norm over all gradients of ``model.layers[i]``.
        other_grad_norm: L2 norm over the gradients outside the blocks (token and position embeddings, final
            norm, untied head), so ``sum(layer_grad_norms**2) + other_grad_norm**2 == grad_norm**2``.
        tokens_per_s: ``B * T`` input tokens of this step divided by its wall time (forward, backward, update;
            validation excluded).
        elapsed_s: seconds since :func:`train` started (validation included).
        val_loss: mean validation loss on ``eval_batches`` fixed batches at steps that are multiples of
            ``eval_every`` and at the last step; None otherwise (and when ``val_fraction == 0``).
    """

    step: int
    loss: float
    lr: float
    grad_norm: float
    layer_grad_norms: list[float]
    other_grad_norm: float
    tokens_per_s: float
    elapsed_s: float
    val_loss: Optional[float] = None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class TrainResult:
    """Outcome of :func:`train`.

    Fields:
        history: one :class:`StepInfo` per update done, in order.
        initial_val_loss: validation loss before the first update (None when ``val_fraction == 0``).
        final_val_loss: validation loss after the last update done (also when stopped early).
        stopped: True when the ``stop`` signal ended the run before ``cfg.steps`` updates.
        elapsed_s: wall time of the whole run, validation included.
        config: the :class:`TrainConfig` used.
    """

    history: list[StepInfo]
    initial_val_loss: Optional[float]
    final_val_loss: Optional[float]
    stopped: bool
    elapsed_s: float
    config: TrainConfig

    @property
    def steps_done(self) -> int:
        return len(self.history)

    @property
    def losses(self) -> list[float]:
        """Training loss of every step."""
        return [h.loss for h in self.history]

    def history_dicts(self) -> list[dict]:
        """History as plain dicts (for a DataFrame or JSON)."""
        return [h.to_dict() for h in self.history]


# =====================================================================================================
# The training loop
# =====================================================================================================


def _should_stop(stop: StopSignal) -> bool:
    if stop is None:
        return False
    if isinstance(stop, threading.Event):
        return stop.is_set()
    return bool(stop())


def _l2(tensors: list[torch.Tensor]) -> float:
    """L2 norm over a list of tensors, as a Python float (0.0 for an empty list)."""
    if not tensors:
        return 0.0
    return float(torch.sqrt(sum(t.detach().float().pow(2).sum() for t in tensors)))


class Trainer:
    """One training run, one update at a time (:meth:`step`), so two runs can be interleaved.

    The model passed in IS the model trained: its weights change. To train a model that is also kept
    elsewhere (e.g. cached by the app), pass ``clone_model(cached)`` (= ``copy.deepcopy(cached)``).

    Optimiser (Loshchilov & Hutter 2019): ``torch.optim.AdamW`` with betas (0.9, 0.95) as in GPT-3/nanoGPT and
    two parameter groups. Weight decay applies only to the 2-D weight matrices inside the blocks (q/k/v/o
    projections and the MLP). Not decayed: biases and norm weights (decaying a norm gain towards 0 would
    shrink the signal, not regularise it), and the token/position embeddings (a tied LM head shares the token
    embedding). This is minGPT's choice; nanoGPT decays every >= 2-D tensor, embeddings included.

    Determinism: the training batches come from a ``torch.Generator`` seeded with ``cfg.seed`` and the
    validation batches from one seeded with ``cfg.seed + 1``; the model has no dropout, so nothing else is
    random. The same model weights, token ids and config give the same losses on the same machine.

    Raises (at construction):
        ValueError: the training split is shorter than ``seq_len``, the validation split (when
            ``val_fraction > 0``) is shorter than ``seq_len``, ``seq_len`` exceeds the model's position limit,
            or a token id is outside the model's vocabulary.
    """

    def __init__(self, model: CausalLM, token_ids: Union[Sequence[int], torch.Tensor], cfg: TrainConfig):
        self.model = model
        self.cfg = cfg
        device = model.device
        mc = model.config
        if mc.has_position_limit and cfg.seq_len > mc.max_position_embeddings:
            raise ValueError(
                f"seq_len={cfg.seq_len} exceeds the model's max_position_embeddings={mc.max_position_embeddings}"
            )
        ids = torch.as_tensor(token_ids, dtype=torch.long)
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= mc.vocab_size):
            raise ValueError(
                f"token ids span [{int(ids.min())}, {int(ids.max())}] but the model's vocab_size is {mc.vocab_size}"
            )
        self.train_ids, self.val_ids = split_ids(ids, cfg.val_fraction)
        if len(self.train_ids) < cfg.seq_len:
            raise ValueError(
                f"the training split has {len(self.train_ids)} tokens, fewer than seq_len={cfg.seq_len}"
            )
        if cfg.val_fraction > 0 and len(self.val_ids) < cfg.seq_len:
            raise ValueError(
                f"the validation split has {len(self.val_ids)} tokens (val_fraction={cfg.val_fraction}), "
                f"fewer than seq_len={cfg.seq_len}; use more text, a larger val_fraction or val_fraction=0"
            )
        self.train_ids = self.train_ids.to(device)
        self.val_ids = self.val_ids.to(device)
        self.generator = torch.Generator().manual_seed(cfg.seed)  # draws the training windows

        # Parameter groups (named_parameters() yields a tied Parameter once).
        decay, no_decay = [], []
        for name, p in model.named_parameters():
            in_block = name.startswith("layers.")
            (decay if (in_block and p.dim() >= 2) else no_decay).append(p)
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=cfg.learning_rate, betas=(0.9, 0.95), eps=1e-8,
        )
        # Gradient groups for the norms reported in StepInfo.
        self.layer_params = [list(layer.parameters()) for layer in model.layers]
        in_layers = {id(p) for ps in self.layer_params for p in ps}
        self.other_params = [p for p in model.parameters() if id(p) not in in_layers]
        self.step_count = 0
        self.t0 = time.perf_counter()

    # ------------------------------------------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self) -> Optional[float]:
        """Mean loss over ``cfg.eval_batches`` fixed validation batches (None without a validation split).

        Runs in eval mode and restores the previous mode afterwards.
        """
        if self.cfg.val_fraction == 0:
            return None
        was_training = self.model.training
        self.model.eval()
        g = torch.Generator().manual_seed(self.cfg.seed + 1)  # the same batches at every evaluation
        total = 0.0
        for _ in range(self.cfg.eval_batches):
            x, y = get_batch(self.val_ids, self.cfg.batch_size, self.cfg.seq_len, g)
            total += float(self.model(x, labels=y).loss)
        self.model.train(was_training)
        return total / self.cfg.eval_batches

    def step(self) -> StepInfo:
        """Do one update: batch -> forward -> backward -> norms -> clip -> AdamW step. Returns its StepInfo."""
        cfg, model = self.cfg, self.model
        self.step_count += 1
        step = self.step_count
        t_start = time.perf_counter()
        model.train()

        # 1. the learning rate of this update
        lr = lr_at(step, cfg)
        for group in self.optimizer.param_groups:
            group["lr"] = lr

        # 2. a batch of random windows and the next-token loss (labels = inputs, shifted inside the model)
        x, y = get_batch(self.train_ids, cfg.batch_size, cfg.seq_len, self.generator)  # (B, T), (B, T)
        loss = model(x, labels=y).loss  # () mean cross-entropy over B * (T - 1) targets

        # 3. gradients
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()

        # 4. gradient norms before clipping: per block, outside the blocks, and global
        layer_norms = [_l2([p.grad for p in ps if p.grad is not None]) for ps in self.layer_params]
        other_norm = _l2([p.grad for p in self.other_params if p.grad is not None])
        grad_norm = math.sqrt(sum(n * n for n in layer_norms) + other_norm ** 2)

        # 5. clip the global norm to cfg.grad_clip (Pascanu et al. 2013): g <- g * min(1, clip / ||g||)
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)

        # 6. AdamW update (decoupled weight decay: p <- p - lr * wd * p, then the Adam step)
        self.optimizer.step()
        seconds = time.perf_counter() - t_start

        # 7. validation loss on the evaluation steps and at the last step
        val = self.evaluate() if (step % cfg.eval_every == 0 or step == cfg.steps) else None
        return StepInfo(
            step=step,
            loss=float(loss.detach()),
            lr=lr,
            grad_norm=grad_norm,
            layer_grad_norms=layer_norms,
            other_grad_norm=other_norm,
            tokens_per_s=cfg.batch_size * cfg.seq_len / max(seconds, 1e-9),
            elapsed_s=time.perf_counter() - self.t0,
            val_loss=val,
        )


def train(
    model: CausalLM,
    token_ids: Union[Sequence[int], torch.Tensor],
    cfg: TrainConfig = TrainConfig(),
    callback: Optional[Callable[[StepInfo], None]] = None,
    stop: StopSignal = None,
) -> TrainResult:
    """Train ``model`` in place on a token stream; return the loss history.

    The model passed in is modified. Callers that keep a model elsewhere (a Streamlit cache, a
    checkpoint in memory) must pass a copy: ``train(clone_model(cached_model), ids, cfg)``.

    Args:
        model: the :class:`CausalLM` to train (put in train mode during the run, eval mode after, also on error).
        token_ids: 1-D token stream (list of ints or int tensor), e.g. ``tokenizer.encode(load_corpus("zh"))``;
            split into train/validation by ``cfg.val_fraction`` (validation at the end, see :func:`split_ids`).
        cfg: hyper-parameters.
        callback: called with the :class:`StepInfo` of every update, after the update.
        stop: a ``threading.Event`` or a callable returning bool, checked before each update: once it is set,
            no further update starts (at most the update in progress finishes), the final validation loss is
            computed and ``stopped=True`` is returned.
    Returns:
        :class:`TrainResult`.
    Raises:
        ValueError: see :class:`Trainer` (text too short for ``seq_len``, ids outside the vocabulary, ...).
    """
    trainer = Trainer(model, token_ids, cfg)
    history: list[StepInfo] = []
    stopped = False
    try:
        initial = trainer.evaluate()  # step 0: before any update
        final = initial
        for _ in range(cfg.steps):
            if _should_stop(stop):
                stopped = True
                break
            info = trainer.step()
            history.append(info)
            if callback is not None:
                callback(info)
        if history:
            last = history[-1]
            final = last.val_loss if last.val_loss is not None else trainer.evaluate()
    finally:
        model.eval()
    return TrainResult(
        history=history,
        initial_val_loss=initial,
        final_val_loss=final,
        stopped=stopped,
        elapsed_s=time.perf_counter() - trainer.t0,
        config=cfg,
    )


def clone_model(model: CausalLM) -> CausalLM:
    """An independent deep copy of ``model`` (``copy.deepcopy``): training it never touches the original.

    ``deepcopy`` copies a shared Parameter once, so a tied LM head stays tied in the copy
    (``clone.lm_head.weight is clone.embed_tokens.weight``) and is not tied to the original.
    """
    return copy.deepcopy(model)


# =====================================================================================================
# Pre-Norm vs Post-Norm race
# =====================================================================================================


@dataclass
class RaceResult:
    """Outcome of :func:`race_pre_post`: one :class:`TrainResult` per norm placement."""

    pre: TrainResult
    post: TrainResult

    def results(self) -> dict[str, TrainResult]:
        return {"pre": self.pre, "post": self.post}


def race_pre_post(
    config: ModelConfig,
    token_ids: Union[Sequence[int], torch.Tensor],
    cfg: TrainConfig = TrainConfig(),
    callback: Optional[Callable[[str, StepInfo], None]] = None,
    stop: StopSignal = None,
) -> RaceResult:
    """Train a Pre-Norm and a Post-Norm model from the same initial weights on the same batches.

    One model is built from ``config`` with ``torch.manual_seed(cfg.seed)`` (inside ``engine.seeding.seeded``,
    so the caller's global RNG state is untouched); its state dict is loaded into two models built from
    ``config.replace(norm_position="pre")`` and ``config.replace(norm_position="post")`` (both placements own
    the same parameter names). Each run has its own batch generator seeded with ``cfg.seed``, so both see the
    same batches. The two runs advance in turn, one update each (pre, then post), which suits a live chart.

    Args:
        callback: called as ``callback("pre" | "post", StepInfo)`` after each update.
        stop: as in :func:`train`; checked before each pair of updates, ends both runs.
    Returns:
        :class:`RaceResult` with both histories; the models are not returned (they are built here).

    What our runs show (``bench/race_pre_post.py``: 12 layers, hidden 64, 4 heads, batch 8, seq 32, 100 steps,
    lr 3e-3, warmup 0 and 20, seeds 0-2, Tang poems with a 512-token vocabulary):

    * final loss: Pre-Norm ended lower in all 6 runs (mean val loss 4.53 vs 4.76 without warmup, 4.37 vs 4.76
      with 20 warmup steps; warmup helped Pre-Norm only). At 6 layers and 40 steps the two were within noise.
    * gradient norm across depth, Post-Norm: at step 1 the FIRST block's gradient is ~15x the others and blocks
      2..L are flat (the first norm divides by the tiny std of the 0.02-initialised embeddings). During
      training blocks 2..L grow towards the output (mean over steps ~0.002 in the middle, ~0.08 at the last
      block): Xiong et al. 2020's "larger near the output" holds for them, but not for block 1.
    * gradient norm across depth, Pre-Norm: NOT flat; it decreases with depth (first block ~3x the last at
      step 1, ~10x averaged over training).
    """
    with seeded(cfg.seed):  # serialised with other threads' seeded builds (engine.seeding)
        base = CausalLM(config)
    state = base.state_dict()
    models = {}
    for placement in ("pre", "post"):
        m = CausalLM(config.replace(norm_position=placement))
        m.load_state_dict(state)
        models[placement] = m
    trainers = {k: Trainer(m, token_ids, cfg) for k, m in models.items()}
    histories: dict[str, list[StepInfo]] = {k: [] for k in trainers}
    initial = {k: t.evaluate() for k, t in trainers.items()}
    stopped = False
    try:
        for _ in range(cfg.steps):
            if _should_stop(stop):
                stopped = True
                break
            for placement, trainer in trainers.items():
                info = trainer.step()
                histories[placement].append(info)
                if callback is not None:
                    callback(placement, info)
    finally:
        for m in models.values():
            m.eval()
    out = {}
    for placement, trainer in trainers.items():
        hist = histories[placement]
        final = initial[placement]
        if hist:
            final = hist[-1].val_loss if hist[-1].val_loss is not None else trainer.evaluate()
        out[placement] = TrainResult(
            history=hist, initial_val_loss=initial[placement], final_val_loss=final, stopped=stopped,
            elapsed_s=time.perf_counter() - trainer.t0, config=cfg,
        )
    return RaceResult(pre=out["pre"], post=out["post"])


# =====================================================================================================
# Probes on the Tang poems
# =====================================================================================================

# A 5-character line of the corpus: five characters, "，", five characters, "。" (then a newline).
_HAN5 = r"[^\s，。？！、：；《》・]{5}"
_LINE5 = re.compile(rf"({_HAN5})，({_HAN5})。")

#: Token distance between a position in a 5-character line and the same slot in the previous line, when every
#: character is one token: 5 chars + "，" + 5 chars + "。" = 12 tokens, plus the newline token = 13.
#: (The same slot in the previous HALF-line is 6 tokens back.)
LINE_OFFSET_5 = 13


@dataclass
class PoemStructure:
    """Result of :func:`measure_poem_structure` (probabilities in [0, 1], averaged over lines).

    Fields:
        comma_prob: mean p("，" | the line's first 5 characters and the preceding context).
        period_prob: mean p("。" | ... the 10th character).
        init_comma_prob, init_period_prob: the same for the baseline model (the untrained initialisation).
        uniform_prob: 1 / vocab_size, what a model that knows nothing would give.
        n_lines: number of lines averaged over.
        context_len: tokens of context fed for each line (the line and what precedes it in the corpus).
    """

    comma_prob: float
    period_prob: float
    init_comma_prob: float
    init_period_prob: float
    uniform_prob: float
    n_lines: int
    context_len: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _single_token(tokenizer, text: str) -> int:
    ids = tokenizer.encode(text)
    if len(ids) != 1:
        raise ValueError(f"{text!r} is not a single token for this tokenizer (encodes to {ids})")
    return ids[0]


def _aligned_poem_stream(tokenizer, text: str) -> tuple[list[int], list[tuple[int, int, int]]]:
    """Encode ``text`` and locate its 5-character lines in the token stream.

    Returns ``(ids, lines)`` where each entry of ``lines`` is ``(line_start, comma_pos, period_pos)``: token
    positions of the line's first token, of its "，" and of its "。". The text is encoded piece by piece
    (newline runs and lines separately, then the halves of each 5-character line) and the pieces are checked
    to concatenate to ``tokenizer.encode(text)``; a line whose halves merge with the punctuation is skipped.

    Raises:
        ValueError: "，" or "。" is not a single token, or the tokenizer merges across line breaks.
    """
    comma, period = _single_token(tokenizer, "，"), _single_token(tokenizer, "。")
    ids: list[int] = []
    lines: list[tuple[int, int, int]] = []
    for piece in re.split(r"(\n+)", text):
        if not piece:
            continue
        piece_ids = tokenizer.encode(piece)
        m = _LINE5.fullmatch(piece)
        if m:
            first, second = tokenizer.encode(m.group(1)), tokenizer.encode(m.group(2))
            if first + [comma] + second + [period] == piece_ids:
                start = len(ids)
                comma_pos = start + len(first)
                lines.append((start, comma_pos, comma_pos + 1 + len(second)))
        ids.extend(piece_ids)
    if ids != tokenizer.encode(text):
        raise ValueError("this tokenizer merges tokens across line breaks; poem lines cannot be located")
    return ids, lines


@torch.no_grad()
def _punctuation_probs(model: CausalLM, windows: torch.Tensor, comma_at: torch.Tensor, comma: int, period: int,
                       chunk: int = 64) -> tuple[float, float]:
    """Mean p(comma) at logits positions ``comma_at`` and p(period) at the last position of each window."""
    was_training = model.training
    model.eval()
    pc, pp = [], []
    for i in range(0, len(windows), chunk):
        w = windows[i:i + chunk].to(model.device)  # (n, C)
        probs = torch.softmax(model(w).logits.float(), dim=-1)  # (n, C, V)
        rows = torch.arange(len(w))
        pc.append(probs[rows, comma_at[i:i + chunk], comma])  # (n,)
        pp.append(probs[:, -1, period])  # (n,)
    model.train(was_training)
    return float(torch.cat(pc).mean()), float(torch.cat(pp).mean())


def measure_poem_structure(
    model: CausalLM,
    tokenizer,
    init_model: Optional[CausalLM] = None,
    context_len: int = 64,
    text: Optional[str] = None,
    max_lines: Optional[int] = None,
) -> PoemStructure:
    """How sure is the model that a 5-character line ends its first half with "，" and its second with "。"?

    For every line of the Tang-poem corpus of the form ``XXXXX，YYYYY。`` the model reads the corpus up to
    the 10th character (the last ``context_len`` tokens: the poem so far and whatever precedes it, exactly as
    in training windows) and we read off p("，") at the position of the 5th character and p("。") at the
    position of the 10th. Both are averaged over lines.

    Which lines: all such lines of the corpus (652 in ``tang_poems.txt``), i.e. mostly TRAINING lines. A
    held-out set is not practical here: the corpus is ordered by form and the last 10% (the validation split
    of ``train`` on ``"zh"``) holds only 3 such lines. The punctuation is a structural regularity, not a
    memorised fact, but read the numbers as "learned on the training text".

    Multi-character tokens: "，" and "。" must each be one token (true for :func:`engine.tokenizer.train_bpe`,
    whose pre-tokenizer isolates punctuation). The characters may merge into multi-character tokens (the
    model then predicts "，" after the token that ends the 5th character); a line whose characters merge with
    the punctuation is skipped. Characters outside the vocabulary are ``[UNK]`` tokens and count as characters.

    Args:
        model: the trained model.
        tokenizer: the tokenizer whose ids the model was trained on (``encode`` / ``vocab_size``).
        init_model: the baseline; pass the untrained model you cloned before training for the exact
            "before" numbers. None builds a fresh ``CausalLM(model.config)`` with seed 0.
        context_len: tokens per window (capped at the model's position limit); use the training ``seq_len``.
        text: the poem text (default ``load_corpus("zh")``).
        max_lines: use at most this many lines (the first ones), for speed.
    Returns:
        :class:`PoemStructure`.
    Raises:
        ValueError: no usable 5-character line, or "，"/"。" is not a single token.
    """
    if text is None:
        from .tokenizer import load_corpus
        text = load_corpus("zh")
    if model.config.has_position_limit:
        context_len = min(context_len, model.config.max_position_embeddings)
    comma, period = _single_token(tokenizer, "，"), _single_token(tokenizer, "。")
    ids, lines = _aligned_poem_stream(tokenizer, text)
    stream = torch.tensor(ids, dtype=torch.long)
    windows, comma_at = [], []
    for _start, comma_pos, period_pos in lines:
        begin = period_pos - context_len  # the window is stream[begin : period_pos]; its last logits predict "。"
        if begin < 0:
            continue
        windows.append(stream[begin:period_pos])
        comma_at.append(comma_pos - 1 - begin)  # logits position that predicts "，"
        if max_lines is not None and len(windows) >= max_lines:
            break
    if not windows:
        raise ValueError("no 5-character poem line with enough context was found")
    W = torch.stack(windows)  # (n_lines, context_len)
    at = torch.tensor(comma_at)  # (n_lines,)
    if init_model is None:
        with seeded(0):
            init_model = CausalLM(model.config).to(model.device)
    c, p = _punctuation_probs(model, W, at, comma, period)
    c0, p0 = _punctuation_probs(init_model, W, at, comma, period)
    return PoemStructure(
        comma_prob=c, period_prob=p, init_comma_prob=c0, init_period_prob=p0,
        uniform_prob=1.0 / model.config.vocab_size, n_lines=len(windows), context_len=context_len,
    )


def poem_slot_pairs(tokenizer, n_tokens: int = 64, text: Optional[str] = None) -> tuple[list[int], list[tuple[int, int]]]:
    """A window of the Tang poems and its (query, key) pairs "same slot, previous line".

    Picks the ``n_tokens``-token window, starting at a poem title, that holds the most pairs. A pair is
    ``(p, p - 13)`` for each of the 12 slots (5 characters, "，", 5 characters, "。") of a 5-character line
    whose previous line, in the same poem, is also a 5-character line, and where both lines are exactly 12
    single-character tokens (so "same slot" is well defined). 13 = 12 tokens of the previous line plus its
    newline token (:data:`LINE_OFFSET_5`), not 12.

    Returns:
        ``(ids, pairs)``: ``n_tokens`` ids (fewer if the text is shorter) and positions within them.
    Raises:
        ValueError: as in :func:`measure_poem_structure`, or no pair exists.
    """
    if text is None:
        from .tokenizer import load_corpus
        text = load_corpus("zh")
    ids, lines = _aligned_poem_stream(tokenizer, text)
    # consecutive 5-char lines, each 12 tokens, separated by exactly one newline token
    starts = [s for s, c, p in lines if c - s == 5 and p - c == 6]
    start_set = set(starts)
    keys = [s for s in starts if s - LINE_OFFSET_5 in start_set]  # line starts with a same-shape previous line
    if not keys:
        raise ValueError("no two consecutive single-character-token 5-character lines found")
    title = tokenizer.encode("《")
    title_starts = [i for i in range(len(ids)) if ids[i:i + len(title)] == title] or [0]
    best, best_pairs = 0, []
    for w0 in title_starts:
        pairs = [(s + j - w0, s + j - LINE_OFFSET_5 - w0) for s in keys if w0 <= s - LINE_OFFSET_5
                 and s + 12 <= w0 + n_tokens for j in range(12)]
        if len(pairs) > len(best_pairs):
            best, best_pairs = w0, pairs
    if not best_pairs:
        raise ValueError(f"no window of {n_tokens} tokens holds two consecutive 5-character lines")
    return ids[best:best + n_tokens], best_pairs


@torch.no_grad()
def head_slot_attention(
    model: CausalLM,
    ids: Union[Sequence[int], torch.Tensor],
    pairs: Optional[Sequence[tuple[int, int]]] = None,
    offset: int = LINE_OFFSET_5,
) -> list[tuple[int, int, float]]:
    """Mean attention weight from a position to "the same slot of the previous line", per layer and head.

    Args:
        model: the model (run in eval mode with ``output_attentions=True``; its mode is restored).
        ids: ``[T]`` or ``[B, T]`` token ids, e.g. the window from :func:`poem_slot_pairs`.
        pairs: ``(query, key)`` positions to average ``attention[query, key]`` over (and over the batch).
            None uses every ``(p, p - offset)`` with ``p >= offset``.
        offset: the distance when ``pairs`` is None. In a 5-character line ``白日依山尽，黄河入海流。`` followed by
            a newline, with one token per character, the same slot in the previous line is 13 tokens back
            (12 tokens of the line + 1 newline; :data:`LINE_OFFSET_5`); the previous half-line is 6 back.
    Returns:
        ``[(layer, head, score), ...]`` for every layer and head, in order; score in [0, 1]. Uniform causal
        attention would give about ``1 / (query + 1)`` per pair.
    Raises:
        ValueError: no pair, or a pair with ``key > query`` or outside ``[0, T)``.
    """
    x = torch.as_tensor(ids, dtype=torch.long)
    if x.dim() == 1:
        x = x[None]  # (1, T)
    T = x.shape[1]
    if pairs is None:
        pairs = [(p, p - offset) for p in range(offset, T)]
    pairs = list(pairs)
    if not pairs:
        raise ValueError(f"no (query, key) pair: the sequence of {T} tokens is not longer than offset={offset}")
    for q, k in pairs:
        if not (0 <= k <= q < T):
            raise ValueError(f"pair (query={q}, key={k}) must satisfy 0 <= key <= query < T={T}")
    was_training = model.training
    model.eval()
    attentions = model(x.to(model.device), output_attentions=True).attentions  # L x (B, n_heads, T, T)
    model.train(was_training)
    q_idx = torch.tensor([q for q, _ in pairs])
    k_idx = torch.tensor([k for _, k in pairs])
    out = []
    for layer, pattern in enumerate(attentions):
        score = pattern[:, :, q_idx, k_idx].float().mean(dim=(0, 2))  # (n_heads,)
        out.extend((layer, head, float(s)) for head, s in enumerate(score))
    return out
