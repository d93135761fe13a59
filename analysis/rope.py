"""RoPE up close: the rotation of a q/k pair plane by plane, each plane's wavelength, the check that a rotated
pair's score depends only on the distance m − n, and a real head's score against distance.

Every rotation here is the engine's own (:func:`engine.layers.rope_tables`, which applies the config's frequency
scheme, YaRN included, and :func:`engine.layers.apply_rope`); nothing re-derives RoPE. Plane i is the pair of
dimensions (i, i + head_dim/2) of the Hugging Face "rotate half" layout, i = 0 .. head_dim/2 − 1; the engine turns
it by the angle m·θ_i at position m, θ_i = rope_theta^(−2i/head_dim) for the plain scheme (Su et al. 2021).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from engine import ModelConfig
from engine.layers import apply_rope, rope_tables

#: The engine's default base (``ModelConfig.rope_theta``): what a model without RoPE is shown with.
DEFAULT_THETA = float(ModelConfig.__dataclass_fields__["rope_theta"].default)


def rope_config(config: ModelConfig) -> ModelConfig:
    """``config`` itself when it uses RoPE; else the same model as if it used plain RoPE with the default base
    (:data:`DEFAULT_THETA`) and its head dimension (one more when odd: RoPE turns pairs of dimensions)."""
    if config.position_embedding == "rope":
        return config
    hd = config.head_dim + config.head_dim % 2
    return config.replace(position_embedding="rope", rope_theta=DEFAULT_THETA, rope_type="default",
                          rope_local_base_freq=None, head_dim=hd)


def layer_theta(config: ModelConfig, layer: int) -> float:
    """The RoPE base of 0-based ``layer``: ``rope_local_base_freq`` on a sliding layer when set (Gemma 3), else
    ``rope_theta`` (what :class:`engine.model.CausalLM` hands that layer)."""
    local = config.rope_local_base_freq
    return float(local) if local is not None and config.layer_type(layer) == "sliding_attention" else float(config.rope_theta)


def rope_bases(config: ModelConfig) -> list[float]:
    """The distinct RoPE bases a model's layers use, global first (one for most models, two for Gemma 3)."""
    bases = [float(config.rope_theta)]
    for i in range(config.num_hidden_layers):
        theta = layer_theta(config, i)
        if theta not in bases:
            bases.append(theta)
    return bases


def frequencies(config: ModelConfig, theta: float | None = None) -> np.ndarray:
    """θ_i of every plane, ``[head_dim/2]`` (radians per position), as the engine uses them: the angle its own
    tables (:func:`engine.layers.rope_tables`, YaRN's frequencies when ``rope_type="yarn"``) turn each plane by in
    one position step. Every θ_i is at most 1 radian, so ``atan2(sin, cos)`` at position 1 is θ_i itself."""
    cos, sin = rope_tables(config, torch.tensor([1]), config.rope_theta if theta is None else theta)  # (1, hd) each
    half = config.head_dim // 2
    return np.arctan2(sin[0, :half].double().numpy(), cos[0, :half].double().numpy())  # (hd/2,)


def rotate(config: ModelConfig, x: torch.Tensor, positions: torch.Tensor, theta: float | None = None) -> torch.Tensor:
    """Vectors ``x`` ``[P, head_dim]`` rotated by the engine to ``positions`` ``[P]`` (row p to positions[p])."""
    cos, sin = rope_tables(config, positions, config.rope_theta if theta is None else theta)  # (P, hd) each
    return apply_rope(x[None, None].float(), cos, sin)[0, 0]  # (P, hd)


def planes_to_show(head_dim: int) -> list[int]:
    """The first plane, a middle one and the last (fewer when the head has fewer than three planes)."""
    half = head_dim // 2
    return sorted({0, half // 2, half - 1})


def rotation_path(config: ModelConfig, planes: list[int], last_position: int,
                  theta: float | None = None) -> pd.DataFrame:
    """Where the unit vector (1, 0) of each plane in ``planes`` goes at positions 0 .. ``last_position``.

    Returns one row per (plane, position): ``plane``, ``position`` m, ``x`` and ``y`` (the rotated pair, as the
    engine's :func:`~engine.layers.apply_rope` writes it at dimensions i and i + head_dim/2), ``angle`` = m·θ_i in
    radians (unwrapped), ``turns`` = angle / 2π, ``theta_i`` (θ_i of the plane) and ``partner`` (i + head_dim/2,
    the plane's second dimension).
    """
    hd, half = config.head_dim, config.head_dim // 2
    positions = torch.arange(last_position + 1)  # (P,)
    x = torch.zeros(len(positions), hd)
    x[:, planes] = 1.0  # every plane's (1, 0) at once: RoPE turns each plane on its own
    rotated = rotate(config, x, positions, theta).double().numpy()  # (P, hd)
    freq = frequencies(config, theta)
    rows = []
    for i in planes:
        angle = positions.double().numpy() * freq[i]
        rows.append(pd.DataFrame({"plane": i, "position": positions.numpy(), "x": rotated[:, i],
                                  "y": rotated[:, i + half], "angle": angle, "turns": angle / (2 * math.pi),
                                  "theta_i": freq[i], "partner": i + half}))
    return pd.concat(rows, ignore_index=True)


def wavelengths(config: ModelConfig, bases: list[float] | None = None, context: int | None = None) -> pd.DataFrame:
    """Every plane's wavelength 2π/θ_i in tokens (positions per full turn), for each base in ``bases``.

    Returns one row per (base, plane): ``base`` (the rope_theta used), ``plane`` i, ``theta_i`` (radians per
    position), ``wavelength`` (tokens) and ``turns`` = ``context`` / wavelength (full turns within the context,
    ``config.max_position_embeddings`` when not given).
    """
    context = config.max_position_embeddings if context is None else context
    rows = []
    for base in bases or [float(config.rope_theta)]:
        freq = frequencies(config, base)
        wave = 2 * math.pi / freq
        rows.append(pd.DataFrame({"base": float(base), "plane": np.arange(len(freq)), "theta_i": freq,
                                  "wavelength": wave, "turns": context / wave}))
    return pd.concat(rows, ignore_index=True)


def relative_check(config: ModelConfig, n_positions: int = 48, seed: int = 0, theta: float | None = None,
                   first_position: int = 0) -> pd.DataFrame:
    """The score q_m · k_n of one random unit q and one random unit k, each rotated by the engine to every
    position m, n in ``first_position`` .. ``first_position + n_positions - 1``.

    RoPE promises that the score depends only on m − n (each plane's angles subtract). Returns one row per pair:
    ``m``, ``n``, ``distance`` = m − n, ``score`` (float64 of the engine's float32 dot product).
    """
    gen = torch.Generator().manual_seed(seed)
    hd = config.head_dim
    q, k = torch.randn(hd, generator=gen), torch.randn(hd, generator=gen)
    q, k = q / q.norm(), k / k.norm()  # unit vectors: the score lies in [-1, 1] before the rotation factor
    positions = torch.arange(first_position, first_position + n_positions)  # (N,)
    qs = rotate(config, q.expand(n_positions, hd), positions, theta)  # (N, hd)
    ks = rotate(config, k.expand(n_positions, hd), positions, theta)  # (N, hd)
    scores = (qs @ ks.T).double().numpy()  # (N, N): row m, column n
    m, n = np.meshgrid(positions.numpy(), positions.numpy(), indexing="ij")
    return pd.DataFrame({"m": m.ravel(), "n": n.ravel(), "distance": (m - n).ravel(), "score": scores.ravel()})


def relative_spread(check: pd.DataFrame) -> dict:
    """What :func:`relative_check` measured: ``spread`` (the largest max − min of the scores over the pairs that
    share a distance), ``distance`` (where it is largest), ``range`` (max − min over all pairs: how much the
    score does change with the distance), ``pairs`` and ``distances`` (how many)."""
    by = check.groupby("distance")["score"]
    spreads = by.max() - by.min()
    return {"spread": float(spreads.max()), "distance": int(spreads.idxmax()),
            "range": float(check["score"].max() - check["score"].min()), "pairs": len(check),
            "distances": int(spreads.size)}


def head_scores_by_distance(out, layer: int, head: int, scale: float) -> pd.DataFrame:
    """A head's score q_m · k_n · ``scale`` (before the mask and softmax) for its real, rotated q and k, averaged
    over the pairs of each distance m − n ≥ 0 (key n at or before query m).

    ``out`` is a forward with ``output_activations=True``: ``blocks.{layer}.attn.hook_q`` and ``hook_k`` are
    recorded after RoPE (k repeated for GQA). Returns one row per distance: ``distance``, ``mean``, ``min``,
    ``max`` and ``pairs`` (T − distance).
    """
    q = out.activations[f"blocks.{layer}.attn.hook_q"][0, head].double()  # (T, hd)
    k = out.activations[f"blocks.{layer}.attn.hook_k"][0, head].double()  # (S, hd)
    scores = (q @ k.T * scale).numpy()  # (T, S)
    T = scores.shape[0]
    rows = []
    for d in range(T):
        diag = np.diagonal(scores, offset=-d)  # (T - d,): query m, key m - d
        rows.append({"distance": d, "mean": float(diag.mean()), "min": float(diag.min()), "max": float(diag.max()),
                     "pairs": int(diag.size)})
    return pd.DataFrame(rows)


def attention_scale(config: ModelConfig) -> float:
    """The factor on q · k in every layer: 1/√head_dim (Gemma's ``query_pre_attn_scalar`` instead when set)."""
    return float(config.query_pre_attn_scalar or config.head_dim) ** -0.5

