"""Interventions: change one activation inside a forward pass and see what the model does without it.

Two kinds, both frozen dataclasses passed as ``model(input_ids, interventions=[...])`` (layers and heads counted from 0,
as in the activation names):

* :class:`HeadAblation` ``(layer, head, kind)``: one head's output before ``o_proj`` (``blocks.{layer}.attn.hook_z``,
  ``[B, T, n_heads, head_dim]``) replaced by 0 (``kind="zero"``) or by its mean over a reference run (``kind="mean"``,
  positions kept: :func:`mean_head_ablation` computes it from a record). With grouped-query attention the other
  query heads that share its key/value head are untouched: the slice is one query head's output.
* :class:`ActivationPatch` ``(name, positions, value)``: the activation ``name`` (``blocks.{i}.hook_resid_pre``,
  ``blocks.{i}.hook_attn_out``, ``blocks.{i}.hook_mlp_out``, ``blocks.{i}.attn.hook_z`` with ``head=`` for one head)
  at the sequence ``positions`` replaced by ``value[:, positions]``, where ``value`` is that activation in another
  run (the record's tensor as it is, ``[B or 1, T, ...]``).

How they reach the block: :class:`engine.model.CausalLM` compiles the list once per call into ``{name: edit}``
(:func:`compile_interventions`) and gives it to that call's :class:`engine.recorder.ActivationRecorder`; the block's
``rec(name, tensor)`` calls, which already name every activation, return the edited tensor. Nothing is attached to
a module, so two sessions sharing one model never see each other's interventions (no hooks: TransformerLens'
``run_with_hooks`` semantics, without its mechanism).

Positions are absolute (0 = the first token of the whole sequence). With a KV cache a call computes only its own
positions ``past_length .. past_length + T - 1``: a patch's earlier positions were computed, and patched, by the call
that filled the cache, and later ones are patched by the call that computes them (pass the same list to every
step); without a cache a position beyond the sequence is an error.

Fast sweeps (:func:`sweep`): many intervened runs of one prompt, each a row of one batch. Layers before a row's
first intervened layer and positions before its first patched position equal the base run's, so a row joins the
batch at its first intervened layer, from the base run's residual stream, and computes only the positions from its
first patched one, over the base run's keys and values before them (a KV cache). All 270 single-head ablations of
SmolLM2 (30 layers x 9 heads) then cost about 139 plain forwards: sum over l of 9 (30 - l) / 30.

Reference: Meng et al. 2022, "Locating and Editing Factual Associations in GPT" (activation patching); Wang et al.
2022, "Interpretability in the Wild" (IOI, path patching, the logit difference); Olsson et al. 2022 (induction
heads); TransformerLens ``run_with_hooks`` / ``ActivationCache`` (names).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Union

import torch

from .kv_cache import KVCache
from .layers import soft_cap
from .recorder import ActivationRecorder

#: The activations an :class:`ActivationPatch` may replace (suffixes of ``blocks.{i}.``).
PATCHABLE = ("hook_resid_pre", "hook_attn_out", "hook_mlp_out", "attn.hook_z")
#: :class:`HeadAblation` kinds.
ABLATION_KINDS = ("zero", "mean")

_NAME = re.compile(r"^blocks\.(\d+)\.(" + "|".join(re.escape(s) for s in PATCHABLE) + r")$")

#: One compiled intervention: ``tensor -> tensor`` applied where the block records ``name``.
Edit = Callable[[torch.Tensor], torch.Tensor]


def _positions(positions) -> Optional[tuple[int, ...]]:
    """``None`` (every position), an int, or a sequence of ints -> sorted unique tuple; ValueError if empty/negative."""
    if positions is None:
        return None
    if isinstance(positions, int):
        positions = (positions,)
    elif isinstance(positions, torch.Tensor):
        positions = positions.reshape(-1).tolist()
    out = tuple(sorted({int(p) for p in positions}))
    if not out:
        raise ValueError("positions is empty: give at least one position, or None for every position")
    if out[0] < 0:
        raise ValueError(f"positions count from 0 (the first token), got {out[0]}")
    return out


@dataclass(frozen=True)
class HeadAblation:
    """Remove one attention head: its output before ``o_proj`` (``blocks.{layer}.attn.hook_z[:, :, head]``,
    ``[B, T, head_dim]``) is replaced.

    Fields:
        layer, head: counted from 0; ``head`` is a query head (GQA: the heads sharing its KV head are unchanged).
        kind: ``"zero"`` (0 at every position) or ``"mean"`` (``mean`` at every position).
        mean: for ``"mean"``: ``[T_ref, head_dim]`` (the head's output averaged over a reference batch, per
            position: position p gets ``mean[p]``, so ``T_ref`` must cover the sequence) or ``[head_dim]`` (the same
            vector everywhere). :func:`mean_head_ablation` builds it from a record. Not part of equality.
    """

    layer: int
    head: int
    kind: str = "zero"
    mean: Optional[torch.Tensor] = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.kind not in ABLATION_KINDS:
            raise ValueError(f"kind must be one of {ABLATION_KINDS}, got {self.kind!r}")
        if (self.kind == "mean") != (self.mean is not None):
            raise ValueError("kind='mean' needs mean= (see mean_head_ablation); kind='zero' takes no mean")
        if self.mean is not None and self.mean.dim() not in (1, 2):
            raise ValueError(f"mean must be [T, head_dim] or [head_dim], got {tuple(self.mean.shape)}")
        if self.layer < 0 or self.head < 0:
            raise ValueError(f"layer and head count from 0, got layer {self.layer}, head {self.head}")

    @property
    def name(self) -> str:
        return f"blocks.{self.layer}.attn.hook_z"

    @property
    def first_position(self) -> int:
        """The first position it changes: every position, so 0."""
        return 0


@dataclass(frozen=True, eq=False)
class ActivationPatch:
    """Replace activation ``name`` at ``positions`` with another run's values.

    Fields:
        name: ``blocks.{i}.`` + one of :data:`PATCHABLE`.
        positions: the absolute sequence positions replaced: an int, a sequence of ints, or ``None`` for all.
        value: that activation in the other run, as its record holds it: ``[B or 1, T_other, ...]`` (``hook_z``:
            ``[B, T, n_heads, head_dim]``, or ``[B, T, head_dim]`` with ``head``); position p gets ``value[:, p]``.
        head: ``attn.hook_z`` only: patch this query head's slice (``None``: every head).
    Equality is identity (the value is a tensor).
    """

    name: str
    positions: Union[None, int, Sequence[int]]
    value: torch.Tensor
    head: Optional[int] = None

    def __post_init__(self):
        m = _NAME.match(self.name)
        if m is None:
            raise ValueError(f"cannot patch {self.name!r}: patchable are blocks.{{i}}. + one of {', '.join(PATCHABLE)}")
        if self.head is not None and m.group(2) != "attn.hook_z":
            raise ValueError(f"head= applies to blocks.{{i}}.attn.hook_z only, not {self.name!r}")
        if self.head is not None and self.head < 0:
            raise ValueError(f"heads count from 0, got {self.head}")
        object.__setattr__(self, "positions", _positions(self.positions))
        if not isinstance(self.value, torch.Tensor) or self.value.dim() < 2:
            raise ValueError("value must be a tensor [B, T, ...] taken from another run's record")

    @property
    def layer(self) -> int:
        return int(_NAME.match(self.name).group(1))

    @property
    def first_position(self) -> int:
        return 0 if self.positions is None else self.positions[0]


Intervention = Union[HeadAblation, ActivationPatch]


def mean_head_ablation(record: dict[str, torch.Tensor], layer: int, head: int, over_positions: bool = False
                       ) -> HeadAblation:
    """A ``kind="mean"`` ablation whose values are the head's mean output in ``record`` (a reference run's
    ``output_activations`` record): averaged over the batch per position (``[T, head_dim]``, positions kept), or with
    ``over_positions`` over batch and positions too (``[head_dim]``, for a reference of one prompt)."""
    z = record[f"blocks.{layer}.attn.hook_z"][:, :, head].detach()  # (B, T, hd)
    mean = z.mean(dim=(0, 1)) if over_positions else z.mean(dim=0)  # (hd,) or (T, hd)
    return HeadAblation(layer, head, "mean", mean)


def _layer_of(iv: Intervention) -> int:
    return iv.layer


def _ablate(a: HeadAblation, past: int, z: torch.Tensor) -> torch.Tensor:
    """``z`` ``[B, T, nh, hd]`` (positions past .. past+T-1) with head ``a.head`` zeroed or set to its mean."""
    out = z.clone()
    if a.kind == "zero":
        out[:, :, a.head] = 0
        return out
    mean = a.mean
    if mean.dim() == 2:  # (T_ref, hd): per position
        if mean.shape[0] < past + z.shape[1]:
            raise ValueError(f"the mean covers {mean.shape[0]} positions, the sequence has {past + z.shape[1]}")
        mean = mean[past:past + z.shape[1]]  # (T, hd)
    out[:, :, a.head] = mean.to(z)
    return out


def _patch(p: ActivationPatch, past: int, cached: bool, t: torch.Tensor) -> torch.Tensor:
    """``t`` ``[B, T, ...]`` (positions past .. past+T-1) with ``p``'s positions taken from ``p.value``; ``cached``:
    this call is one step of several over a KV cache, so positions outside it belong to other steps."""
    T = t.shape[1]
    wanted = range(past, past + T) if p.positions is None else p.positions
    if wanted[-1] >= past + T and not cached:
        raise ValueError(f"{p.name}: position {wanted[-1]} is beyond the sequence (length {past + T})")
    kept = [q for q in wanted if past <= q < past + T]  # this call's positions
    if not kept:
        return t
    if p.value.shape[1] <= kept[-1]:
        raise ValueError(f"{p.name}: value has {p.value.shape[1]} positions, position {kept[-1]} was asked for")
    src = p.value[:, kept]  # (Bv, P, ...)
    if p.head is not None and src.dim() == t.dim():  # the whole hook_z (Bv, P, nh, hd): take the head
        src = src[:, :, p.head]  # (Bv, P, hd)
    local = [q - past for q in kept]
    out = t.clone()
    target = out[:, local] if p.head is None else out[:, local, p.head]  # (B, P, ...), a copy: for the shape check
    if src.shape[0] not in (1, t.shape[0]) or src.shape[2:] != target.shape[2:]:
        raise ValueError(f"{p.name}: value at the patched positions is {tuple(src.shape)}, "
                         f"the activation there is {tuple(target.shape)}")
    if p.head is None:
        out[:, local] = src.to(t)
    else:
        out[:, local, p.head] = src.to(t)
    return out


def _apply(iv: Intervention, past: int, cached: bool) -> Edit:
    if isinstance(iv, HeadAblation):
        return lambda z: _ablate(iv, past, z)
    return lambda t: _patch(iv, past, cached, t)


def _chain(edits: list[Edit]) -> Edit:
    if len(edits) == 1:
        return edits[0]

    def run(t: torch.Tensor) -> torch.Tensor:
        for edit in edits:
            t = edit(t)
        return t
    return run


def compile_interventions(interventions: Sequence[Intervention], config, past_length: int = 0,
                          cached: bool = False) -> dict[str, Edit]:
    """``{activation name: edit}`` for one forward call whose first position is ``past_length`` (``cached``: the call
    runs over a KV cache, see the module docstring on positions); several interventions on one name apply in list
    order. Raises ``TypeError`` for something else than the two classes and
    ``ValueError`` for a layer or head the model does not have."""
    L, nh = config.num_hidden_layers, config.num_attention_heads
    edits: dict[str, list[Edit]] = {}
    for iv in interventions:
        if not isinstance(iv, (HeadAblation, ActivationPatch)):
            raise TypeError(f"interventions are HeadAblation or ActivationPatch, got {type(iv).__name__}")
        if iv.layer >= L:
            raise ValueError(f"layer {iv.layer} does not exist: the model has layers 0 .. {L - 1}")
        head = iv.head
        if head is not None and head >= nh:
            raise ValueError(f"head {head} does not exist: layer {iv.layer} has heads 0 .. {nh - 1}")
        edits.setdefault(iv.name, []).append(_apply(iv, past_length, cached))
    return {name: _chain(fns) for name, fns in edits.items()}


# ---------------------------------------------------------------------------------------------------
# Sweeps: many intervened runs of one prompt
# ---------------------------------------------------------------------------------------------------


class _KeepAllCache(KVCache):
    """A cache that keeps every position, sliding-window layers too (the base run's keys and values, whole)."""

    def update(self, key, value, layer_idx, sliding_window=None):
        return super().update(key, value, layer_idx, None)


@dataclass
class BaseRun:
    """The run interventions are compared with (batch 1): what a sweep starts its rows from.

    Fields:
        input_ids: ``[1, T]``.
        logits: ``[1, T, V]``.
        resid_pre: per layer ``[1, T, H]``, the input of block i (``blocks.{i}.hook_resid_pre``).
        keys, values: per layer ``[1, n_kv_heads, T, head_dim]`` (keys after RoPE), every position.
    """

    input_ids: torch.Tensor
    logits: torch.Tensor
    resid_pre: list[torch.Tensor]
    keys: list[torch.Tensor]
    values: list[torch.Tensor]


@torch.no_grad()
def base_run(model, input_ids: torch.Tensor) -> BaseRun:
    """One plain forward of ``input_ids`` ``[1, T]`` keeping what :func:`sweep` needs (SDPA attention)."""
    if input_ids.dim() != 2 or input_ids.shape[0] != 1:
        raise ValueError(f"a sweep runs one prompt: input_ids must be [1, T], got {tuple(input_ids.shape)}")
    cache = _KeepAllCache()
    out = model(input_ids, output_hidden_states=True, past_key_values=cache)
    resid = list(out.hidden_states[:-1])  # L x (1, T, H): hidden_states[i] is block i's input for i < L
    return BaseRun(input_ids, out.logits, resid, list(cache.key_cache), list(cache.value_cache))


@dataclass
class _Row:
    index: int  # position in the caller's list
    start: int  # first intervened layer
    edits: dict[str, Edit]


def _plain_forwards(rows: int, layers: int, positions: int, L: int, T: int) -> float:
    """Work of ``rows`` rows through ``layers`` layers at ``positions`` positions, in plain forwards of T tokens."""
    return rows * layers * positions / (L * T)


def _row_edits(rows: list[_Row]) -> dict[str, Edit]:
    """Merge the rows' edits: row r's edit of name n acts on ``t[r:r+1]`` only."""
    by_name: dict[str, list[tuple[int, Edit]]] = {}
    for r, row in enumerate(rows):
        for name, edit in row.edits.items():
            by_name.setdefault(name, []).append((r, edit))

    def merged(items):
        def run(t: torch.Tensor) -> torch.Tensor:  # (rows so far, T_new, ...)
            out = t.clone()
            for r, edit in items:
                out[r:r + 1] = edit(t[r:r + 1])
            return out
        return run
    return {name: merged(items) for name, items in by_name.items()}


def _grow_pass(model, base: BaseRun, p0: int, rows: list[_Row], logit_positions: list[int], metric,
               tick: Callable[[float], None]) -> list[torch.Tensor]:
    """Run ``rows`` (sorted by start layer) from position ``p0``: row r joins the batch at its start layer with the
    base run's residual stream there; returns each row's ``metric`` value."""
    L, T = len(model.layers), base.input_ids.shape[1]
    first = rows[0].start
    counts = [sum(1 for r in rows if r.start <= k) for k in range(L)]  # rows in the batch at layer k
    cache = None
    if p0 > 0:  # positions before p0 are the base run's in every layer: their keys and values as a cache
        cache = KVCache()
        for k, layer in enumerate(model.layers):
            cache.update(base.keys[k][:, :, :p0], base.values[k][:, :, :p0], k, layer.self_attn.cache_window)
            if k >= first:
                cache.key_cache[k] = cache.key_cache[k].expand(counts[k], -1, -1, -1)  # (rows, nkv, S, hd)
                cache.value_cache[k] = cache.value_cache[k].expand(counts[k], -1, -1, -1)
    position_ids = torch.arange(p0, T, device=base.input_ids.device)  # (T - p0,)
    ctx = model.attention_context(position_ids, cache, None, eager=False)
    rec = ActivationRecorder(None, edits=_row_edits(rows))
    x = base.resid_pre[first][:, p0:].expand(counts[first], -1, -1)  # (rows, T - p0, H)
    for k in range(first, L):
        joining = counts[k] - x.shape[0]
        if joining:
            x = torch.cat([x, base.resid_pre[k][:, p0:].expand(joining, -1, -1)])  # (rows, T - p0, H)
        x = model.layers[k](x, ctx, rec.scope(f"blocks.{k}"))  # (rows, T - p0, H)
        tick(_plain_forwards(counts[k], 1, T - p0, L, T))
    return _row_metrics(model, base, x, p0, logit_positions, metric)


def _row_metrics(model, base: BaseRun, x: torch.Tensor, p0: int, logit_positions: list[int], metric
                 ) -> list[torch.Tensor]:
    """``metric`` of each row's logits at ``logit_positions`` ``[rows, P, V]``, in chunks of bounded memory;
    positions before ``p0`` are the base run's logits."""
    before = [i for i, p in enumerate(logit_positions) if p < p0]
    after = [i for i, p in enumerate(logit_positions) if p >= p0]
    local = [logit_positions[i] - p0 for i in after]
    V = base.logits.shape[-1]
    chunk = max(1, 2 ** 25 // (len(logit_positions) * V))  # at most ~128 MB of float32 logits at once
    values = []
    for r0 in range(0, x.shape[0], chunk):
        h = model.norm(x[r0:r0 + chunk, local])  # (c, P_after, H)
        computed = soft_cap(model.lm_head(h), model.config.final_logit_softcapping)  # (c, P_after, V)
        if before:
            logits = computed.new_empty(computed.shape[0], len(logit_positions), V)  # (c, P, V)
            logits[:, after] = computed
            logits[:, before] = base.logits[:, [logit_positions[i] for i in before]].to(computed)
        else:
            logits = computed
        values.extend(metric(logits).unbind(0))
    return values


@torch.no_grad()
def sweep(model, input_ids: torch.Tensor, runs: Sequence[Sequence[Intervention]],
          metric: Callable[[torch.Tensor], torch.Tensor], *, logit_positions: Optional[Sequence[int]] = None,
          base: Optional[BaseRun] = None, progress: Optional[Callable[[float, float], None]] = None,
          max_tokens: Optional[int] = None) -> torch.Tensor:
    """``metric`` of many intervened runs of one prompt, batched (see the module docstring for why it is cheap).

    Args:
        input_ids: ``[1, T]``, the prompt every run intervenes on (the base run).
        runs: one list of interventions per run (an empty list is the base run itself).
        metric: ``logits [rows, P, V] -> [rows, ...]`` at ``logit_positions``; e.g. the loss on target positions.
        logit_positions: the absolute positions whose logits ``metric`` reads (default: all T).
        base: :func:`base_run` of ``input_ids`` when already computed.
        progress: called as ``progress(done, total)`` after every layer, in plain forwards of the prompt; raise in
            it to stop the sweep.
        max_tokens: most rows x positions in one batch (default: about 256 MB per ``[rows, T, max(H, I)]`` tensor);
            more rows run as several batches.
    Returns:
        ``[len(runs), ...]``: the metric of each run, in order. Equal (up to float rounding) to
        ``metric(model(input_ids, interventions=run).logits[:, logit_positions])`` run by run.
    """
    base = base if base is not None else base_run(model, input_ids)
    L, T = len(model.layers), input_ids.shape[1]
    positions = list(range(T)) if logit_positions is None else [int(p) for p in logit_positions]
    cfg = model.config
    if max_tokens is None:
        max_tokens = max(T, 2 ** 26 // max(cfg.hidden_size, cfg.intermediate_size))
    groups: dict[int, list[_Row]] = {}
    results: list[Optional[torch.Tensor]] = [None] * len(runs)
    for i, run in enumerate(runs):
        if not run:  # no intervention: the base run
            results[i] = metric(base.logits[:, positions])[0]
            continue
        p0 = min(iv.first_position for iv in run)
        if p0 >= T:
            raise ValueError(f"position {p0} is beyond the sequence (length {T})")
        edits = compile_interventions(run, cfg, past_length=p0)
        groups.setdefault(p0, []).append(_Row(i, min(_layer_of(iv) for iv in run), edits))
    total = sum(_plain_forwards(1, L - r.start, T - p0, L, T) for p0, rows in groups.items() for r in rows)
    done = 0.0

    def tick(work: float) -> None:
        nonlocal done
        done += work
        if progress is not None:
            progress(min(done, total), total)

    for p0, rows in sorted(groups.items()):
        rows.sort(key=lambda r: r.start)
        per_batch = max(1, max_tokens // (T - p0))
        for b0 in range(0, len(rows), per_batch):
            batch = rows[b0:b0 + per_batch]
            for row, value in zip(batch, _grow_pass(model, base, p0, batch, positions, metric, tick)):
                results[row.index] = value
    return torch.stack(results)


def sweep_cost(model, T: int, runs: Sequence[Sequence[Intervention]]) -> float:
    """What :func:`sweep` of ``runs`` on a prompt of T tokens costs, in plain forwards of that prompt (layers x
    positions computed; attention over the cached prefix is not counted)."""
    L = len(model.layers)
    return sum(_plain_forwards(1, L - min(_layer_of(iv) for iv in run), T - min(iv.first_position for iv in run), L, T)
               for run in runs if run)
