"""What an action will cost before it starts: memory and FLOPs from a :class:`ModelConfig` and a token count.

Plain arithmetic (no torch): the server calls it before building a model, tracing, computing gradients or
training, and refuses what exceeds its budget instead of attempting it. Every figure is float32 (4 bytes per
number), as the engine computes.

Conventions (dimension vocabulary of ``engine/__init__.py``): V vocab, H hidden, L layers, n_heads,
n_kv_heads, head_dim, I FFN size, T tokens, B batch.

* Parameters: counted exactly as :class:`engine.model.CausalLM` creates them (a tied head counted once).
* Activation record of one traced forward (``output_hidden_states``, ``output_attentions``,
  ``output_activations``): every tensor the record keeps, counted without de-duplicating the ones that share
  storage, so it is an upper bound of the measured record (tests check ``measured <= estimate <= 1.5 x``).
* Attention maps: the ``[n_heads, T, T]`` tensors of the record (raw scores, scaled scores, softmax) per layer.
* Forward FLOPs: ``2 * T * (matmul weights per layer * L + V * H) + 4 * L * T^2 * n_heads * head_dim``
  (Kaplan et al. 2020, "Scaling laws", table 1, with the attention term kept because T is not small here);
  backward = 2 x forward, so a gradient or a training step costs 3 x forward.
* Training (AdamW): the trained clone, the frozen "before" clone, gradients and two moment buffers
  (5 x the weights), the tensors autograd keeps for a ``[B, T]`` batch, and the logits with their softmax
  and gradient.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from .config import ModelConfig

BYTES = 4  # float32
ACTIONS = ("build", "trace", "gradient", "train", "race")
MIB = 2**20


def parameter_count(config: ModelConfig) -> int:
    """Distinct parameters of ``CausalLM(config)`` (a tied LM head counted once)."""
    V, H, L, I = config.vocab_size, config.hidden_size, config.num_hidden_layers, config.intermediate_size
    hd, nh, nkv = config.head_dim, config.num_attention_heads, config.kv_heads
    norm = 2 * H if config.norm_type == "layernorm" else H  # LayerNorm: weight + bias; RMSNorm: weight
    qkv_b, b = config.qkv_bias, config.bias
    attn = H * nh * hd + 2 * H * nkv * hd + nh * hd * H  # q, k, v, o weights
    attn += (nh * hd + 2 * nkv * hd if qkv_b else 0) + (H if b else 0)
    attn += {"none": 0, "per_head": 2 * hd, "per_projection": (nh + nkv) * hd}[config.qk_norm]  # q_norm, k_norm
    attn += nh if config.attention_sinks else 0  # one sink logit per head
    mlp = _ffn_parameters(config, I)
    if config.num_local_experts:  # E experts of their own width, the router, a shared expert and its gate
        mlp = config.num_local_experts * (_ffn_parameters(config, config.expert_intermediate_size) + H
                                          + (1 if config.router_bias else 0))
        if config.shared_expert_intermediate_size:
            mlp += _ffn_parameters(config, config.shared_expert_intermediate_size) + H
    n_norms = {"pre": 2, "post": 2, "sandwich": 4, "post_sublayer": 2}[config.norm_position]
    block = n_norms * norm + attn + mlp
    positions = config.max_position_embeddings * H if config.position_embedding == "learned" else 0
    head = 0 if config.tie_word_embeddings else V * H
    return V * H + positions + L * block + norm + head


def _ffn_parameters(config: ModelConfig, width: int) -> int:
    """Parameters of one :class:`engine.layers.MLP` of hidden width ``width``."""
    n_mats = 3 if config.mlp_gated else 2
    return n_mats * config.hidden_size * width + ((n_mats - 1) * width + config.hidden_size if config.bias else 0)


def active_parameter_count(config: ModelConfig) -> int:
    """Parameters one token passes through: with a mixture of experts, k of the E routed experts (all the rest
    counted as in :func:`parameter_count`); without one, :func:`parameter_count` itself."""
    idle = config.num_local_experts - config.num_experts_per_tok if config.num_local_experts else 0
    return parameter_count(config) - config.num_hidden_layers * idle * _ffn_parameters(config, config.expert_intermediate_size)


def buffer_count(config: ModelConfig) -> int:
    """Numbers held in buffers (the sinusoidal table ``[P, H]``); RoPE tables are built per forward."""
    return config.max_position_embeddings * config.hidden_size if config.position_embedding == "sinusoidal" else 0


def _matmul_weights_per_layer(config: ModelConfig) -> int:
    H, I, hd = config.hidden_size, config.intermediate_size, config.head_dim
    nh, nkv = config.num_attention_heads, config.kv_heads
    mats = 3 if config.mlp_gated else 2
    ffn = mats * H * I
    if config.num_local_experts:  # the k experts a token is routed to, the router, the shared expert and its gate
        ffn = config.num_experts_per_tok * mats * H * config.expert_intermediate_size + H * config.num_local_experts
        ffn += (mats * H * config.shared_expert_intermediate_size + H) if config.shared_expert_intermediate_size else 0
    return H * nh * hd + 2 * H * nkv * hd + nh * hd * H + ffn


def forward_flops(config: ModelConfig, tokens: int, batch: int = 1) -> float:
    """Multiply-adds x 2 of one forward pass over ``batch`` sequences of ``tokens`` tokens."""
    T, L = tokens, config.num_hidden_layers
    dense = 2 * T * (_matmul_weights_per_layer(config) * L + config.vocab_size * config.hidden_size)
    attention = 4 * L * T * T * config.num_attention_heads * config.head_dim  # QK^T and (softmax)V, full T x T
    return float(batch * (dense + attention))


def lens_flops(config: ModelConfig, cells: int) -> float:
    """Multiply-adds x 2 of the logit lens of ``cells`` (depth, position) cells: each cell's residual row through
    the LM head (the final norm's few per row are left out); every depth of T positions is ``(L + 1) * T`` cells."""
    return float(2 * cells * config.hidden_size * config.vocab_size)


def attention_map_numbers(config: ModelConfig, tokens: int, batch: int = 1) -> int:
    """Numbers in the record's ``[B, n_heads, T, T]`` maps: raw scores, scaled scores, softmax, per layer."""
    return batch * config.num_hidden_layers * 3 * config.num_attention_heads * tokens * tokens


def record_numbers(config: ModelConfig, tokens: int, batch: int = 1) -> int:
    """Numbers in one traced forward's record besides the attention maps (upper bound, see module docstring).

    Per block: 7 residual-width tensors (resid pre/mid/post, two normalised inputs, attention and MLP outputs; 9
    with the sandwich's two post-norms), q, k, v (k and v repeated to n_heads) and z (``4 * n_heads * head_dim``,
    plus the sinks' share ``n_heads``), the MLP's pre- and post-activation (``2 * I``, 3 when gated; with experts
    instead the router logits ``E``, the expert weights ``k`` and the int64 indices ``2k``); plus L+1 hidden states,
    the final norm's output and the logits.
    """
    T, H, L, I = tokens, config.hidden_size, config.num_hidden_layers, config.intermediate_size
    width = 4 * config.num_attention_heads * config.head_dim + (config.num_attention_heads if config.attention_sinks else 0)
    mlp = (3 if config.mlp_gated else 2) * I
    if config.num_local_experts:  # no pre/post activations recorded; router logits, weights, int64 expert indices
        mlp = config.num_local_experts + 3 * config.num_experts_per_tok
    residual = 9 if config.norm_position == "sandwich" else 7  # the sandwich also records both post-norm outputs
    per_block = T * (residual * H + width + mlp)
    return batch * (L * per_block + (L + 2) * T * H + T * config.vocab_size + T)


@dataclass(frozen=True)
class Cost:
    """An action's estimated peak memory (bytes, by part) and its FLOPs.

    ``parts`` names what the memory is: "parameters", "buffers", "activations", "attention maps", "gradients",
    "optimizer", "logits". ``memory`` is their sum.
    """

    action: str
    parts: Mapping[str, int]
    flops: float

    @property
    def memory(self) -> int:
        return int(sum(self.parts.values()))

    @property
    def gflop(self) -> float:
        return self.flops / 1e9


def build_cost(config: ModelConfig) -> Cost:
    """Building a random-init model: its weights and buffers; init draws about 10 operations per weight."""
    n = parameter_count(config)
    return Cost("build", {"parameters": n * BYTES, "buffers": buffer_count(config) * BYTES}, 10.0 * n)


def trace_cost(config: ModelConfig, tokens: int) -> Cost:
    """One forward of ``tokens`` tokens with the full activation record (the model itself already exists)."""
    return Cost("trace", {"activations": record_numbers(config, tokens) * BYTES,
                          "attention maps": attention_map_numbers(config, tokens) * BYTES},
                forward_flops(config, tokens))


def gradient_cost(config: ModelConfig, tokens: int) -> Cost:
    """Forward + backward of the LM loss on one sequence: what autograd keeps, and one gradient per weight."""
    return Cost("gradient", {"activations": record_numbers(config, tokens) * BYTES,
                             "attention maps": attention_map_numbers(config, tokens) * BYTES,
                             "gradients": parameter_count(config) * BYTES},
                3.0 * forward_flops(config, tokens))


def _train_parts(config: ModelConfig, batch: int, seq_len: int, models: int) -> dict[str, int]:
    n = parameter_count(config) * BYTES
    return {
        "parameters": models * n,  # the clones (trained + "before"; race: pre + post)
        "gradients": n,
        "optimizer": 2 * n,  # AdamW's two moments
        "activations": record_numbers(config, seq_len, batch) * BYTES,
        "attention maps": attention_map_numbers(config, seq_len, batch) * BYTES,
        "logits": 2 * batch * seq_len * config.vocab_size * BYTES,  # softmax and its gradient, besides the logits
    }


def train_cost(config: ModelConfig, steps: int, batch: int, seq_len: int, eval_every: int = 50,
               eval_batches: int = 8) -> Cost:
    """A training run: ``steps`` updates on ``[batch, seq_len]`` and the validation passes."""
    evals = steps // max(1, eval_every) + 1
    flops = steps * 3.0 * forward_flops(config, seq_len, batch) + evals * eval_batches * forward_flops(config, seq_len, batch)
    return Cost("train", _train_parts(config, batch, seq_len, models=2), flops)


def race_cost(config: ModelConfig, steps: int, batch: int, seq_len: int, eval_every: int = 20,
              eval_batches: int = 4) -> Cost:
    """A Pre-Norm vs Post-Norm race: two models, each trained ``steps`` updates, with two optimizers."""
    one = train_cost(config, steps, batch, seq_len, eval_every, eval_batches)
    parts = _train_parts(config, batch, seq_len, models=2)
    parts["gradients"] *= 2
    parts["optimizer"] *= 2
    return Cost("race", parts, 2.0 * one.flops)


# ---- budgets ------------------------------------------------------------------------------------------------
ENV_MEMORY = "EXPLORER_MAX_ACTION_MB"
ENV_GFLOP = "EXPLORER_MAX_ACTION_GFLOP"
ENV_TRAIN_GFLOP = "EXPLORER_MAX_TRAIN_GFLOP"
# Defaults sized for a 2-core, 8 GB server shared by a class: one action may take 1 GiB (the GPT-2-small preset's
# weights are 475 MiB; the slider maxima's 1.4 GiB are refused), an interactive action 200 GFLOP (a few seconds at
# the ~170 GFLOP/s matmul rate measured on 2 cores; GPT-2 small over 256 tokens is ~65), a training run or race
# 20 TFLOP (the default run is ~0.5 TFLOP; 20 TFLOP is about 2 minutes alone).
DEFAULT_MEMORY_MB = 1024
DEFAULT_GFLOP = 200.0
DEFAULT_TRAIN_GFLOP = 20_000.0


@dataclass(frozen=True)
class Budget:
    """Per-action limits: ``memory`` bytes for any action; ``gflop`` for build/trace/gradient;
    ``train_gflop`` for a training run or a race."""

    memory: int = DEFAULT_MEMORY_MB * MIB
    gflop: float = DEFAULT_GFLOP
    train_gflop: float = DEFAULT_TRAIN_GFLOP

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None) -> "Budget":
        """Read ``EXPLORER_MAX_ACTION_MB``, ``EXPLORER_MAX_ACTION_GFLOP`` and ``EXPLORER_MAX_TRAIN_GFLOP``
        (positive numbers); a missing, unparsable or non-positive value keeps the default."""
        env = os.environ if env is None else env

        def number(name: str, default: float) -> float:
            try:
                v = float(env.get(name, default))
            except (TypeError, ValueError):
                return default
            return v if v > 0 and v == v and v != float("inf") else default

        return cls(memory=int(number(ENV_MEMORY, DEFAULT_MEMORY_MB) * MIB), gflop=number(ENV_GFLOP, DEFAULT_GFLOP),
                   train_gflop=number(ENV_TRAIN_GFLOP, DEFAULT_TRAIN_GFLOP))

    def gflop_for(self, action: str) -> float:
        return self.train_gflop if action in ("train", "race") else self.gflop

    def allows(self, cost: Cost) -> bool:
        return cost.memory <= self.memory and cost.gflop <= self.gflop_for(cost.action)


@dataclass(frozen=True)
class Verdict:
    """Whether ``cost`` fits ``budget``; if not, the nearest affordable settings (None where none helps).

    ``suggestions`` maps a knob ("tokens", "layers", "steps", "seq_len") to the largest value below the asked
    one at which the action fits, everything else unchanged.
    """

    cost: Cost
    budget: Budget
    suggestions: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.budget.allows(self.cost)


def _largest_fitting(fits: Callable[[int], bool], below: int, lowest: int = 1) -> Optional[int]:
    """Largest n in [lowest, below) with fits(n), assuming cost grows with n (binary search); None if none."""
    if below <= lowest or not fits(lowest):
        return None
    lo, hi = lowest, below - 1  # fits(lo) holds
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def check(action: str, config: ModelConfig, budget: Budget, tokens: int = 0, steps: int = 0, batch: int = 1,
          seq_len: int = 0) -> Verdict:
    """Estimate ``action`` ("build", "trace", "gradient", "train" or "race") and suggest affordable settings.

    ``tokens`` is the input length (trace, gradient); ``steps``, ``batch``, ``seq_len`` describe a run (train,
    race). Suggestions: fewer tokens and fewer layers (trace, gradient), fewer layers (build, race), fewer
    steps and a shorter sequence (train, race).
    """
    def cost_of(cfg: ModelConfig, T: int = tokens, n_steps: int = steps, S: int = seq_len) -> Cost:
        if action == "build":
            return build_cost(cfg)
        if action == "trace":
            return trace_cost(cfg, T)
        if action == "gradient":
            return gradient_cost(cfg, T)
        if action == "train":
            return train_cost(cfg, n_steps, batch, S, eval_every=max(1, n_steps // 10))
        if action == "race":
            return race_cost(cfg, n_steps, batch, S, eval_every=max(1, n_steps // 5))
        raise ValueError(f"unknown action {action!r}; valid: {', '.join(ACTIONS)}")

    cost = cost_of(config)
    verdict = Verdict(cost, budget)
    if verdict.ok:
        return verdict
    L = config.num_hidden_layers
    knobs: dict[str, Callable[[int], Cost]] = {}
    if action in ("trace", "gradient"):
        knobs["tokens"] = lambda n: cost_of(config, T=n)
    if action in ("trace", "gradient", "build", "race"):
        knobs["layers"] = lambda n: cost_of(config.replace(num_hidden_layers=n))
    if action in ("train", "race"):
        knobs["steps"] = lambda n: cost_of(config, n_steps=n)
        knobs["seq_len"] = lambda n: cost_of(config, S=n)
    current = {"tokens": tokens, "layers": L, "steps": steps, "seq_len": seq_len}
    lowest = {"seq_len": 2}
    for knob, make in knobs.items():
        best = _largest_fitting(lambda n: budget.allows(make(n)), current[knob], lowest.get(knob, 1))
        if best is not None:
            verdict.suggestions[knob] = best
    return verdict
