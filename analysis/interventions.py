"""Interventions as experiments (the Interventions page): metrics, the built-in experiments and their numbers.

Metrics:
    * loss on chosen target positions: mean next-token cross-entropy (nats) of the tokens at those positions;
    * logit difference ``logit(correct) - logit(wrong)`` at the last position, and the fraction of it a patch
      restores: ``(patched - corrupted) / (clean - corrupted)`` (1 = the clean run's difference, 0 = the corrupted
      run's; NaN when the two runs' differences are equal, so nothing can be restored).

Experiments (each returns a DataFrame and a ``summary`` dict of the numbers its sentences need; the page words them):
    1. induction: random tokens repeated once; the loss on the second copy (tokens n+1 .. 2n-1, the ones an induction
       head can copy); every head ablated in turn -> layers x heads loss increase, next to each head's
       previous-token and induction scores on the same sequence (:mod:`analysis.heads`); heads ablated together;
    2. facts ("The capital of France is" -> " Paris" vs "The capital of Italy is" -> " Rome"), 3. names (IOI:
       "When Mary and John went to the store, John gave a drink to" -> " Mary" vs the same with Mary as the giver
       -> " John"), 4. the learner's own pair: ``hook_resid_pre`` patched from the clean run into the corrupted one at
       every (layer, position) -> layer x position map of the fraction restored; then ``hook_z`` per head.

Sweeps go through :func:`engine.interventions.sweep` (batched, from the base run's residual stream and KV cache);
``progress(done, total)`` counts plain forwards of the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
import pandas as pd
import torch

from engine.interventions import ActivationPatch, HeadAblation, sweep, sweep_cost
from engine.model import CausalLM

from .heads import induction_scores, previous_token_scores, repeated_random_tokens
from .tokenizers import special_ids

INDUCTION_PERIOD = 24  # random tokens per copy
RESTORED = 0.5  # a patch "carries the answer" when it restores at least half the logit difference
MATTER_LAYERS = 4  # the layers that matter (:func:`layers_that_matter`): where each head is patched after the sweep

Progress = Optional[Callable[[float, float], None]]


@dataclass(frozen=True)
class PromptPair:
    """A clean and a corrupted prompt of the same token length and the two answers compared."""

    clean: str
    corrupt: str
    correct: str  # the clean prompt's answer (a single token, with its leading space)
    wrong: str  # the corrupted prompt's answer


FACTS = PromptPair("The capital of France is", "The capital of Italy is", " Paris", " Rome")
NAMES = PromptPair("When Mary and John went to the store, John gave a drink to",
                   "When Mary and John went to the store, Mary gave a drink to", " Mary", " John")
BUILT_IN_PAIRS = {"facts": FACTS, "names": NAMES}


# ---------------------------------------------------------------------------------------------------------- metrics


def loss_metric(input_ids: torch.Tensor, positions: Sequence[int]) -> Callable[[torch.Tensor], torch.Tensor]:
    """For :func:`engine.interventions.sweep` with ``logit_positions=positions``: logits ``[n, P, V]`` -> ``[n]``, the
    mean cross-entropy of the token after each position (``input_ids[0, p + 1]``)."""
    targets = input_ids[0, [p + 1 for p in positions]]  # (P,)

    def metric(logits: torch.Tensor) -> torch.Tensor:
        logp = torch.log_softmax(logits.float(), dim=-1)  # (n, P, V)
        return -logp[:, torch.arange(len(targets)), targets].mean(-1)  # (n,)
    return metric


def logit_diff_metric(correct: int, wrong: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """Logits ``[n, P, V]`` -> ``[n]``: ``logit(correct) - logit(wrong)`` at the last of the P positions."""
    def metric(logits: torch.Tensor) -> torch.Tensor:
        return (logits[:, -1, correct] - logits[:, -1, wrong]).float()  # (n,)
    return metric


def fraction_restored(patched, clean: float, corrupted: float):
    """``(patched - corrupted) / (clean - corrupted)``; NaN where the clean and corrupted differences are equal
    (within 1e-6 of the larger): nothing to restore."""
    gap = clean - corrupted
    if abs(gap) <= 1e-6 * max(abs(clean), abs(corrupted), 1.0):
        return np.full(np.shape(patched), np.nan) if np.ndim(patched) else float("nan")
    return (np.asarray(patched, dtype=float) - corrupted) / gap if np.ndim(patched) else (patched - corrupted) / gap


# -------------------------------------------------------------------------------------------------------- induction


def induction_period(config) -> int:
    """Random tokens per copy for a model of ``config``: :data:`INDUCTION_PERIOD`, or half its position limit when
    two copies would not fit (at least 2)."""
    limit = config.max_position_embeddings if config.has_position_limit else 2 * INDUCTION_PERIOD
    return max(2, min(INDUCTION_PERIOD, limit // 2))


def induction_ids(model: CausalLM, tokenizer=None, period: int = INDUCTION_PERIOD, seed: int = 0) -> torch.Tensor:
    """``[1, 2n]``: ``period`` random tokens (no special tokens when a tokenizer is given) and the same again."""
    exclude = special_ids(tokenizer) if tokenizer is not None else ()
    return repeated_random_tokens(model.config.vocab_size, period, seed=seed, exclude=exclude)


def second_copy_positions(period: int) -> list[int]:
    """The positions whose next token is in the second copy and can be copied: n .. 2n-2 (predicting n+1 .. 2n-1)."""
    return list(range(period, 2 * period - 1))


def induction_loss(model: CausalLM, ids: torch.Tensor, period: int, heads: Sequence[tuple[int, int]] = (),
                   kind: str = "zero") -> float:
    """The loss on the second copy with ``heads`` ``[(layer, head), ...]`` ablated together (none: the plain run)."""
    positions = second_copy_positions(period)
    with torch.no_grad():
        logits = model(ids, interventions=[HeadAblation(l, h, kind) for l, h in heads]).logits[:, positions]
    return float(loss_metric(ids, positions)(logits)[0])


def score_frame(attentions: Sequence[torch.Tensor], period: int) -> pd.DataFrame:
    """Each head's previous-token and induction score (:mod:`analysis.heads`) on a repeated sequence of ``period``
    tokens per copy: one row per (layer, head), 0-based, layer-major: ``layer``, ``head``, ``prev_token``,
    ``induction``."""
    prev, ind = previous_token_scores(attentions), induction_scores(attentions, period)  # (L, nh) each
    layer, head = np.divmod(np.arange(prev.size), prev.shape[1])
    return pd.DataFrame({"layer": layer, "head": head, "prev_token": prev.reshape(-1), "induction": ind.reshape(-1)})


def induction_ablation(model: CausalLM, ids: torch.Tensor, period: int, progress: Progress = None
                       ) -> tuple[pd.DataFrame, dict]:
    """Every head zero-ablated in turn on the repeated sequence ``ids`` ``[1, 2n]``.

    Returns:
        frame: one row per (layer, head), 0-based: ``loss`` (second copy, the head ablated), ``increase`` (over the
            plain run), ``prev_token`` and ``induction`` (the head's attention scores on ``ids``).
        summary: ``base_loss``; ``top``: the row with the largest increase and ``runner_up_increase`` (the largest
            of every other head); ``prev_head`` / ``induction_head``: the head with the highest previous-token /
            induction score, with its score and increase; ``prev_over_induction``: the ratio of those increases
            (NaN when the induction head's is <= 0).
    """
    L, nh = model.config.num_hidden_layers, model.config.num_attention_heads
    positions = second_copy_positions(period)
    metric = loss_metric(ids, positions)
    with torch.no_grad():
        out = model(ids, output_attentions=True)
    base = float(metric(out.logits[:, positions])[0])
    runs = [[HeadAblation(l, h)] for l in range(L) for h in range(nh)]
    losses = sweep(model, ids, runs, metric, logit_positions=positions, progress=progress).double().numpy()
    frame = score_frame(out.attentions, period)
    frame.insert(2, "loss", losses)
    frame.insert(3, "increase", losses - base)

    def row(i: int, score: str | None = None) -> dict:
        r = frame.iloc[i]
        d = {"layer": int(r["layer"]), "head": int(r["head"]), "loss": float(r["loss"]), "increase": float(r["increase"])}
        if score:
            d["score"] = float(r[score])
        return d

    order = np.argsort(-frame["increase"].to_numpy(), kind="stable")
    prev_head = row(int(np.argmax(frame["prev_token"].to_numpy())), "prev_token")
    ind_head = row(int(np.argmax(frame["induction"].to_numpy())), "induction")
    summary = {
        "base_loss": base,
        "top": row(int(order[0])),
        "runner_up_increase": float(frame["increase"].iloc[order[1]]) if len(order) > 1 else float("nan"),
        "prev_head": prev_head,
        "induction_head": ind_head,
        "prev_over_induction": prev_head["increase"] / ind_head["increase"] if ind_head["increase"] > 0
        else float("nan"),
    }
    return frame, summary


def top_heads(frame: pd.DataFrame, k: int = 2) -> list[tuple[int, int]]:
    """The ``k`` heads whose ablation raised the loss most, ``[(layer, head), ...]``."""
    rows = frame.sort_values(["increase", "layer", "head"], ascending=[False, True, True]).head(k)
    return [(int(r.layer), int(r.head)) for r in rows.itertuples()]


# -------------------------------------------------------------------------------------------------- prompt pairs


@dataclass(frozen=True)
class PairCheck:
    """A prompt pair tokenized and checked. ``error`` is None or a code the page words: ``"empty"`` (a prompt has no
    tokens), ``"length"`` (token counts differ: ``clean_length`` vs ``corrupt_length``), ``"same_prompt"``,
    ``"answer_tokens"`` (an answer is not exactly one token: ``correct_length``/``wrong_length`` say how many),
    ``"same_answer"``."""

    error: Optional[str]
    clean_ids: torch.Tensor  # (1, T)
    corrupt_ids: torch.Tensor  # (1, T')
    correct_id: Optional[int]
    wrong_id: Optional[int]
    clean_length: int
    corrupt_length: int
    correct_length: int
    wrong_length: int


def check_pair(tokenizer, pair: PromptPair) -> PairCheck:
    """Tokenize ``pair`` (no BOS added: the prompts as written) and check it can be patched (see :class:`PairCheck`)."""
    clean, corrupt = (tokenizer.encode(t) for t in (pair.clean, pair.corrupt))
    correct, wrong = (tokenizer.encode(t) for t in (pair.correct, pair.wrong))
    if not clean or not corrupt:
        error = "empty"
    elif len(clean) != len(corrupt):
        error = "length"
    elif clean == corrupt:
        error = "same_prompt"
    elif len(correct) != 1 or len(wrong) != 1:
        error = "answer_tokens"
    elif correct == wrong:
        error = "same_answer"
    else:
        error = None
    return PairCheck(error, torch.tensor([clean], dtype=torch.long), torch.tensor([corrupt], dtype=torch.long),
                     correct[0] if len(correct) == 1 else None, wrong[0] if len(wrong) == 1 else None,
                     len(clean), len(corrupt), len(correct), len(wrong))


def _pair_runs(model: CausalLM, check: PairCheck):
    if check.error is not None:
        raise ValueError(f"the prompt pair cannot be patched: {check.error}")
    metric = logit_diff_metric(check.correct_id, check.wrong_id)
    T = check.clean_ids.shape[1]
    with torch.no_grad():
        record = model(check.clean_ids, output_activations=True).activations
        clean = float(metric(model(check.clean_ids).logits[:, -1:])[0])
        corrupted = float(metric(model(check.corrupt_ids).logits[:, -1:])[0])
    return metric, T, record, clean, corrupted


def residual_patching(model: CausalLM, check: PairCheck, progress: Progress = None) -> tuple[pd.DataFrame, dict]:
    """``blocks.{l}.hook_resid_pre`` patched from the clean run into the corrupted one at each (layer, position).

    Returns:
        frame: one row per (layer, position): ``logit_diff`` (patched run), ``restored``
            (:func:`fraction_restored`), ``changed`` (whether the two prompts' tokens differ at that position).
        summary: ``clean_diff``, ``corrupted_diff``; ``best``: the cell restoring most (layer, position, restored);
            ``changed_positions``; ``carried_until``: the last layer whose patch at a changed position still restores
            at least :data:`RESTORED` (None: none does); ``last_from``: the first layer from which patching the last
            position restores at least :data:`RESTORED` (None: none does).
    """
    metric, T, record, clean, corrupted = _pair_runs(model, check)
    L = model.config.num_hidden_layers
    cells = [(l, p) for l in range(L) for p in range(T)]
    runs = [[ActivationPatch(f"blocks.{l}.hook_resid_pre", [p], record[f"blocks.{l}.hook_resid_pre"])] for l, p in cells]
    diffs = sweep(model, check.corrupt_ids, runs, metric, logit_positions=[T - 1], progress=progress).double().numpy()
    changed = (check.clean_ids[0] != check.corrupt_ids[0]).numpy()  # (T,)
    layer, position = np.array(cells).T
    frame = pd.DataFrame({"layer": layer, "position": position, "logit_diff": diffs,
                          "restored": fraction_restored(diffs, clean, corrupted), "changed": changed[position]})
    grid = frame.pivot(index="layer", columns="position", values="restored").to_numpy()  # (L, T)
    changed_pos = [int(p) for p in np.flatnonzero(changed)]
    carried = [l for l in range(L) if changed_pos and np.nanmax(grid[l, changed_pos]) >= RESTORED]
    last = [l for l in range(L) if grid[l, T - 1] >= RESTORED]
    best = frame.iloc[int(np.nanargmax(frame["restored"].to_numpy()))] if frame["restored"].notna().any() else None
    summary = {
        "clean_diff": clean, "corrupted_diff": corrupted,
        "best": None if best is None else {"layer": int(best.layer), "position": int(best.position),
                                           "restored": float(best.restored)},
        "changed_positions": changed_pos,
        "carried_until": max(carried) if carried else None,
        "last_from": min(last) if last else None,
    }
    return frame, summary


def head_patching(model: CausalLM, check: PairCheck, layers: Optional[Sequence[int]] = None,
                  progress: Progress = None) -> tuple[pd.DataFrame, dict]:
    """Each head's output (``blocks.{l}.attn.hook_z``, that head, every position) patched from the clean run into
    the corrupted one, in ``layers`` (default: all).

    Returns:
        frame: one row per (layer, head): ``logit_diff``, ``restored``.
        summary: ``clean_diff``, ``corrupted_diff``, ``best`` (layer, head, restored) and ``runner_up_restored``.
    """
    metric, T, record, clean, corrupted = _pair_runs(model, check)
    nh = model.config.num_attention_heads
    layers = list(range(model.config.num_hidden_layers)) if layers is None else [int(l) for l in layers]
    cells = [(l, h) for l in layers for h in range(nh)]
    runs = [[ActivationPatch(f"blocks.{l}.attn.hook_z", None, record[f"blocks.{l}.attn.hook_z"], head=h)]
            for l, h in cells]
    diffs = sweep(model, check.corrupt_ids, runs, metric, logit_positions=[T - 1], progress=progress).double().numpy()
    layer, head = (np.array(cells).T if cells else (np.array([], int), np.array([], int)))
    frame = pd.DataFrame({"layer": layer, "head": head, "logit_diff": diffs,
                          "restored": fraction_restored(diffs, clean, corrupted)})
    order = frame.sort_values("restored", ascending=False, na_position="last")
    best = order.iloc[0] if len(order) and pd.notna(order.iloc[0].restored) else None
    summary = {
        "clean_diff": clean, "corrupted_diff": corrupted,
        "best": None if best is None else {"layer": int(best["layer"]), "head": int(best["head"]),
                                           "restored": float(best["restored"])},
        "runner_up_restored": float(order.iloc[1].restored) if len(order) > 1 else float("nan"),
    }
    return frame, summary


def layers_that_matter(frame: pd.DataFrame, k: int = MATTER_LAYERS) -> list[int]:
    """From :func:`residual_patching`'s frame: the ``k`` layers where patching the last position gains most over the
    layer before (where the answer moves to the last position), in layer order."""
    last = frame[frame.position == frame.position.max()].sort_values("layer")["restored"].to_numpy()
    gain = np.diff(np.concatenate([[0.0], np.nan_to_num(last)]))
    return sorted(int(l) for l in np.argsort(-gain, kind="stable")[:k])


# -------------------------------------------------------------------------------------------------- one cell


def before_after(model: CausalLM, ids: torch.Tensor, interventions: Sequence, layer: int, token_strings,
                 position: int = -1, k: int = 5) -> dict:
    """What one intervention changes: the attention patterns of ``layer`` and the top next tokens at ``position``,
    without and with it.

    Returns:
        ``{"patterns": (before, after)}`` each ``[n_heads, T, T]``; ``"tokens"``: a DataFrame with ``rank``,
        ``token_id``, ``token``, ``before`` and ``after`` probabilities of the union of both runs' top ``k``
        (ranked by ``before``), and ``"top_before"`` / ``"top_after"`` the most likely token id of each run.
    """
    with torch.no_grad():
        plain = model(ids, output_attentions=True)
        cut = model(ids, output_attentions=True, interventions=list(interventions))
    p0, p1 = (torch.softmax(o.logits[0, position].double(), -1) for o in (plain, cut))  # (V,) each
    tokens = top_tokens(p0, p1, token_strings, k)
    tokens.insert(0, "rank", np.arange(1, len(tokens) + 1))
    return {"patterns": (plain.attentions[layer][0], cut.attentions[layer][0]), "tokens": tokens,
            "top_before": int(p0.argmax()), "top_after": int(p1.argmax())}


def top_tokens(before: torch.Tensor, after: torch.Tensor, token_strings, k: int = 5) -> pd.DataFrame:
    """The union of the top ``k`` tokens of two next-token distributions ``[V]``, most likely ``before`` first: a
    DataFrame of ``token_id``, ``token`` (``token_strings(ids)``), ``before`` and ``after`` probabilities."""
    union = list(dict.fromkeys(torch.topk(before, k).indices.tolist() + torch.topk(after, k).indices.tolist()))
    union.sort(key=lambda i: -float(before[i]))
    return pd.DataFrame({"token_id": union, "token": token_strings(union), "before": before[union].numpy(),
                         "after": after[union].numpy()})


def experiment_cost(model: CausalLM, T: int, experiment: str) -> float:
    """Plain forwards of the prompt an experiment's sweep costs (for an ETA before it starts): ``"induction"``
    (every head ablated), ``"residual"`` (every layer x position), ``"heads"`` (every head's hook_z)."""
    L, nh = model.config.num_hidden_layers, model.config.num_attention_heads
    dummy = torch.zeros(1, 1, 1)
    if experiment == "residual":
        runs = [[ActivationPatch(f"blocks.{l}.hook_resid_pre", [p], dummy)] for l in range(L) for p in range(T)]
    elif experiment in ("induction", "heads"):
        runs = [[HeadAblation(l, h)] for l in range(L) for h in range(nh)]
    else:
        raise ValueError(f"unknown experiment {experiment!r}")
    return sweep_cost(model, T, runs)
