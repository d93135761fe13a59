"""Answer keys of lesson 7, "What changed since GPT-2" (``lessons/070_variants.toml``): the block variants of
2024–2026 (a sliding window and its KV cache, the gpt-oss attention sink, a mixture of experts, RoPE's planes),
each read off the model of the step with the functions its page uses.
"""

from __future__ import annotations

import math

import numpy as np

from analysis.attention import attention_sink
from analysis.experts import expert_load, load_summary
from teaching.answers.core import Answer, StepInputs, answer
from teaching.answers.real import dtype_bytes, pick_distinct

from analysis.rope import frequencies
from engine.cost import active_parameter_count, parameter_count
from engine.kv_cache import config_kv_cache_bytes, kv_cache_bytes


@answer("window_kv_mib")
def window_kv_mib(s: StepInputs) -> Answer:
    """The KV cache in MiB of the step's model with its sliding-window layers at the Generate page's context and
    dtype: per layer ``2 · n_kv · head_dim · kept positions · bytes``, a sliding layer keeping ``window − 1``
    (:func:`engine.kv_cache.config_kv_cache_bytes`). Distractors: no window at all (every layer keeps T), the
    window on every layer (the global ones too), and every query head storing its own K and V (no GQA)."""
    c = s.config
    T, dtype = int(s.setting("gen.ctx", 32768)), str(s.setting("gen.dtype", "bfloat16"))
    b = dtype_bytes(dtype)
    mib = 2 ** 20
    correct = config_kv_cache_bytes(c, T, b) / mib
    full = kv_cache_bytes(c.num_hidden_layers, c.kv_heads, c.head_dim, T, b) / mib
    local = sum(c.layer_type(i) == "sliding_attention" for i in range(c.num_hidden_layers))
    every = kv_cache_bytes(c.num_hidden_layers, c.kv_heads, c.head_dim, min(T, c.sliding_window - 1), b) / mib
    per_query_head = correct * c.num_attention_heads / c.kv_heads  # as if every query head stored its K and V
    wrong = pick_distinct(correct, [full, every, per_query_head], 3, key=lambda v: f"{v:.3g}")
    return Answer(correct=correct, distractors=wrong,
                  values={"T": f"{T:,}", "dtype": dtype, "L": c.num_hidden_layers, "local": local,
                          "full_layers": c.num_hidden_layers - local, "w": c.sliding_window, "kept": c.sliding_window - 1,
                          "full": f"{full:.3g}", "share": f"{correct / full:.1%}"},
                  option_labels={"en": "{} MiB", "zh": "{} MiB"})


@answer("sink_share")
def sink_share(s: StepInputs) -> Answer:
    """The share of the last query's softmax that the head's sink takes (Attention page, ``attn.layer`` /
    ``attn.head``): :func:`analysis.attention.attention_sink`. With the sink logit at its init (0) and scores near 0,
    the sink is one more column among the query's t + 1 keys: about 1/(t + 2). Distractors: nothing (a sink-less
    softmax), half, and 1/(t + 1) (the sink taken for one of the keys)."""
    layer, head = int(s.setting("attn.layer", 1)) - 1, int(s.setting("attn.head", 1)) - 1
    share = attention_sink(s.trace(), layer, head)  # (T,)
    assert share is not None, "the step's model has no attention sinks"
    T = len(share)
    correct = float(share[-1])
    wrong = pick_distinct(correct, [0.0, 0.5, 1 / T, 1 / (T + 1) * 2], 3, key=lambda v: f"{v:.2f}")
    return Answer(correct=correct, distractors=wrong,
                  values={"T": T, "q": T - 1, "even": f"{1 / (T + 1):.3f}", "keys": f"{1 - correct:.3f}",
                          "first": f"{float(share[0]):.3f}"},
                  highlight={"x": T, "y": T - 1})


@answer("active_parameter_share")
def active_parameter_share(s: StepInputs) -> Answer:
    """The share of the model's parameters one token passes through with a mixture of experts (k of E experts per
    block): :func:`engine.cost.active_parameter_count` / :func:`engine.cost.parameter_count`. Distractors: k/E
    (as if the experts were the whole model), everything, and 1/E."""
    c = s.config
    total, active = parameter_count(c), active_parameter_count(c)
    E, k = c.num_local_experts, c.num_experts_per_tok
    correct = 100 * active / total  # percent
    wrong = pick_distinct(correct, [100 * k / E, 100.0, 100 / E], 3, key=lambda v: f"{v:.0f}")
    return Answer(correct=correct, distractors=wrong,
                  values={"E": E, "k": k, "active": f"{active:,}", "total": f"{total:,}", "ke": f"{k / E:.0%}"},
                  option_labels={"en": "{} %", "zh": "{}%"})


@answer("busiest_expert")
def busiest_expert(s: StepInputs) -> Answer:
    """The expert the most tokens are routed to in block ``experts.layer`` (Experts page):
    :func:`analysis.experts.expert_load` and :func:`analysis.experts.load_summary`. The other experts are the
    distractors (the lowest index wins a tie, as on the page)."""
    layer = int(s.setting("experts.layer", 1)) - 1
    load = expert_load(s.trace(), layer)
    summary = load_summary(load, s.config.num_experts_per_tok)
    E = len(load)
    correct = summary["most"] + 1
    return Answer(correct=correct, distractors=[e + 1 for e in range(E) if e + 1 != correct][:4],
                  values={"share": f"{summary['most_share']:.0%}", "uniform": f"{summary['uniform']:.0%}",
                          "ratio": f"{summary['most_ratio']:.2f}", "least": summary["least"] + 1,
                          "least_share": f"{summary['least_share']:.0%}", "E": E, "k": s.config.num_experts_per_tok},
                  highlight={"x": summary["most"]},
                  option_labels={"en": "expert {}", "zh": "专家 {}"})


@answer("longest_wavelength")
def longest_wavelength(s: StepInputs) -> Answer:
    """The longest wavelength of the step's RoPE, in tokens: 2π/θ of the slowest plane (the engine's frequencies,
    :func:`analysis.rope.frequencies`; plain RoPE: 2π · rope_theta^((d − 2)/d)). Distractors: 2π · rope_theta (as if
    the exponent reached 1), rope_theta itself, and 2π (the fastest plane's)."""
    c = s.config
    freq = frequencies(c)
    correct = float(2 * math.pi / np.min(freq))
    theta = float(c.rope_theta)
    wrong = pick_distinct(correct, [2 * math.pi * theta, theta, 2 * math.pi], 3, key=lambda v: f"{v:.3g}")
    return Answer(correct=correct, distractors=wrong,
                  values={"theta": f"{theta:,.0f}", "d": c.head_dim, "planes": len(freq),
                          "context": f"{c.max_position_embeddings:,}", "turns": f"{c.max_position_embeddings * np.min(freq) / (2 * math.pi):.2g}"},
                  highlight={"x": len(freq) - 1},
                  option_labels={"en": "{} tokens", "zh": "{} 个 token"})
