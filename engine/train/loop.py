"""The training loop: :class:`Trainer` (one update at a time), :func:`train` (the whole run), what every step
reports (:class:`StepInfo`) and the outcome (:class:`TrainResult`), and :func:`clone_model`.

Units: losses are mean cross-entropy in nats per predicted token; learning rates are AdamW step sizes;
gradient norms are L2 norms over the named parameters; times are wall-clock seconds.

References: I. Loshchilov, F. Hutter, "Decoupled Weight Decay Regularization", ICLR 2019 (AdamW, used as
``torch.optim.AdamW``); R. Pascanu, T. Mikolov, Y. Bengio, "On the difficulty of training recurrent neural
networks", ICML 2013 (clipping the global gradient norm, used as ``torch.nn.utils.clip_grad_norm_``).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

import torch

from ..model import CausalLM
from .config import TrainConfig, lr_at
from .data import get_batch, split_ids


#: A ``stop`` argument: a ``threading.Event`` (stop when set) or any callable returning True to stop.
StopSignal = Union[threading.Event, Callable[[], bool], None]


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


def should_stop(stop: StopSignal) -> bool:
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
            if should_stop(stop):
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
