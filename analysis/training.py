"""A training run's logs as tidy frames: loss per step, gradient norm per block and step, the per-block profile,
and the poem-slot attention scores (the Training lab)."""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd


def training_history(history: Sequence, initial_val_loss: float | None = None) -> pd.DataFrame:
    """A training run's per-step log (``engine.train.StepInfo`` objects) as one row per step.

    Columns: ``step`` (int; 1-based updates, plus a step-0 row when ``initial_val_loss`` is given),
    ``loss`` (training loss of the step's batch, nats; NaN on the step-0 row), ``val_loss`` (nats; NaN where
    not measured), ``lr``, ``grad_norm`` (global L2 norm before clipping), ``tokens_per_s``, ``elapsed_s``.
    Empty history and no initial loss -> an empty frame with these columns.
    """
    cols = ["step", "loss", "val_loss", "lr", "grad_norm", "tokens_per_s", "elapsed_s"]
    rows = []
    if initial_val_loss is not None:
        rows.append((0, math.nan, float(initial_val_loss), math.nan, math.nan, math.nan, 0.0))
    for h in history:
        rows.append((int(h.step), float(h.loss), math.nan if h.val_loss is None else float(h.val_loss),
                     float(h.lr), float(h.grad_norm), float(h.tokens_per_s), float(h.elapsed_s)))
    return pd.DataFrame(rows, columns=cols)


def layer_grad_history(history: Sequence) -> pd.DataFrame:
    """Gradient L2 norm of every block at every step of a run (``StepInfo.layer_grad_norms``), long format.

    Columns: ``step`` (1-based), ``layer`` (0-based block index), ``grad_norm`` (L2 norm over all gradients
    of that block, before clipping).
    """
    rows = [(int(h.step), i, float(v)) for h in history for i, v in enumerate(h.layer_grad_norms)]
    return pd.DataFrame(rows, columns=["step", "layer", "grad_norm"])


def layer_grad_profile(history: Sequence) -> pd.DataFrame:
    """Per-block gradient L2 norm at the first step and averaged over all steps of a run.

    Columns: ``layer`` (0-based), ``first_step`` (norm at the run's first step), ``mean_grad_norm`` (mean over
    the steps). Empty history -> empty frame. Xiong et al. 2020 compare such depth profiles for Pre-Norm and
    Post-Norm.
    """
    grads = layer_grad_history(history)
    if grads.empty:
        return pd.DataFrame(columns=["layer", "first_step", "mean_grad_norm"])
    first = grads[grads["step"] == grads["step"].min()].set_index("layer")["grad_norm"]
    mean = grads.groupby("layer")["grad_norm"].mean()
    return pd.DataFrame({"layer": mean.index.to_numpy(), "first_step": first.reindex(mean.index).to_numpy(),
                         "mean_grad_norm": mean.to_numpy()})


def slot_attention_table(scores: Sequence[tuple[int, int, float]]) -> pd.DataFrame:
    """``analysis.probes.head_slot_attention`` output as a frame: columns ``layer``, ``head`` (0-based) and
    ``score`` (mean attention probability to the same slot of the previous line, in [0, 1])."""
    return pd.DataFrame(list(scores), columns=["layer", "head", "score"])


ETA_WINDOW = 20  # the latest steps whose pace predicts the remaining ones
EVAL_WINDOW = 3  # the latest validation estimates whose cost predicts the next ones
FORWARD_SHARE = 1 / 3  # a forward pass's share of a training step (forward, backward ~2x, update): no validation


def time_left(history: Sequence, cfg, after_tokens: int = 0, phase: str | None = None, phase_elapsed: float = 0.0,
              window: int = ETA_WINDOW, after_scale: float = 1.0) -> float | None:
    """Seconds until a run (or race) has ended, from its own log, or None before it can be told (no two steps yet).

    ``history``: its ``StepInfo`` objects so far (``elapsed_s`` counts from the start, validation included;
    ``val_loss`` is set on the steps that measured it). ``cfg``: its ``TrainConfig`` (steps, eval_every,
    eval_batches, batch_size, seq_len, val_fraction). ``after_tokens``: forward tokens of the measurement after
    the steps (the Training lab's poem probe), 0 for none. ``phase``: None while it steps, else the phase after
    the steps it is in (``"final_eval"``: a stopped run's last validation, then ``"after"``), begun
    ``phase_elapsed`` seconds ago.

    The parts, each measured on the run itself:

    * a step: the mean gap between consecutive steps over the latest ``window`` steps that measured no
      validation (the first step is left out: its gap holds the start-up and the first validation), so a run that
      slows down when others start is re-estimated within ``window`` steps;
    * a validation: the mean extra gap of the latest :data:`EVAL_WINDOW` steps that measured one (the gap minus a
      step); before the first of them, the first step's extra (start-up and the validation before step 1);
    * the steps left times a step, plus the validations left (every ``eval_every`` steps and at the last step)
      times a validation, plus the measurement after the steps: ``after_tokens`` forward tokens at the
      validation's cost per token (``eval_batches * batch_size * seq_len`` tokens), or at a step's cost per
      token times :data:`FORWARD_SHARE` when no validation was measured;
      ``after_scale`` corrects that estimate by what earlier measurements took against theirs (its fixed
      costs, such as building the tokenizer, do not grow with the tokens);
    * in a phase after the steps: what is left of it (never below 0) and of the phases after it.

    With ``eval_every == 1`` no step is free of validation: the pace of all steps then includes it.
    """
    done = len(history)
    if done < 2:
        return None
    gaps = [float(history[0].elapsed_s)] + [float(b.elapsed_s - a.elapsed_s) for a, b in zip(history, history[1:])]
    measured = [h.val_loss is not None for h in history]
    plain = [g for g, m in zip(gaps[1:], measured[1:]) if not m][-window:]
    folded = not plain  # every step measured a validation: their pace includes it
    if folded:
        plain = gaps[1:][-window:]
    step_s = sum(plain) / len(plain)
    validates = cfg.val_fraction > 0 and not folded
    extras = [max(0.0, g - step_s) for g, m in zip(gaps[1:], measured[1:]) if m][-EVAL_WINDOW:]
    eval_s = (sum(extras) / len(extras) if extras else max(0.0, gaps[0] - step_s)) if validates else 0.0
    tokens = cfg.batch_size * cfg.seq_len
    if after_tokens <= 0:
        after_s = 0.0
    elif eval_s > 0:
        after_s = after_tokens / (cfg.eval_batches * tokens) * eval_s
    else:
        after_s = after_tokens / tokens * FORWARD_SHARE * step_s
    after_s *= after_scale
    if phase == "after":
        return max(0.0, after_s - phase_elapsed)
    if phase == "final_eval":
        last_eval = eval_s if history[-1].val_loss is None else 0.0
        return max(0.0, last_eval - phase_elapsed) + after_s
    steps, every = cfg.steps, cfg.eval_every
    evals_left = (steps // every - done // every + (1 if steps % every else 0)) if done < steps else 0
    return (steps - done) * step_s + (evals_left * eval_s if validates else 0.0) + after_s
