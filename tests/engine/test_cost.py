"""engine/cost.py against measurements: parameter counts of real models, the bytes of a real activation record,
FLOPs counted by torch's own ``FlopCounterMode``, and the budget's refusals and suggestions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from engine import CausalLM, ModelConfig
from analysis.trace import run_trace
from engine.cost import (
    MIB,
    Budget,
    build_cost,
    check,
    forward_flops,
    gradient_cost,
    parameter_count,
    trace_cost,
    train_cost,
)
from engine.config import NORM_POSITIONS, NORM_TYPES, QK_NORMS
from ui.sidebar import DEFAULTS, FFN_KINDS, MAX_LAYERS, MAX_TOKENS


@st.composite
def configs(draw) -> ModelConfig:
    heads = draw(st.sampled_from([1, 2, 4]))
    head_dim = draw(st.sampled_from([2, 4, 8]))
    act, gated = FFN_KINDS[draw(st.sampled_from(list(FFN_KINDS)))]
    return ModelConfig(
        vocab_size=draw(st.integers(8, 120)), hidden_size=heads * head_dim, num_hidden_layers=draw(st.integers(1, 3)),
        num_attention_heads=heads, num_key_value_heads=draw(st.sampled_from([d for d in (1, 2, 4) if heads % d == 0])),
        head_dim=draw(st.sampled_from([None, 2 * head_dim])),  # derived, or heads wider than H / n_heads
        intermediate_size=draw(st.integers(4, 40)), hidden_act=act, mlp_gated=gated,
        norm_type=draw(st.sampled_from(NORM_TYPES)), norm_position=draw(st.sampled_from(NORM_POSITIONS)),
        position_embedding=draw(st.sampled_from(["learned", "sinusoidal", "rope", "none"])),
        max_position_embeddings=32, bias=draw(st.booleans()), tie_word_embeddings=draw(st.booleans()),
        qk_norm=draw(st.sampled_from(QK_NORMS)), attention_sinks=draw(st.booleans()),
        sliding_window=draw(st.sampled_from([None, 3])),
        **draw(st.sampled_from([{}, dict(num_local_experts=3, num_experts_per_tok=2, moe_intermediate_size=6),
                                dict(num_local_experts=2, num_experts_per_tok=1, shared_expert_intermediate_size=5),
                                dict(num_local_experts=2, num_experts_per_tok=1, router_bias=True, swiglu_limit=1.0)])),
    )


def record_bytes(out) -> int:
    """Bytes of every distinct storage the traced output holds (shared storages counted once)."""
    storages = {}
    tensors = [out.logits, out.loss, out.token_losses, *out.hidden_states, *out.attentions, *out.activations.values()]
    for x in tensors:
        if isinstance(x, torch.Tensor):
            storages[x.untyped_storage().data_ptr()] = x.untyped_storage().nbytes()
    return sum(storages.values())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs())
def test_parameter_count_equals_the_built_model(config):
    model = CausalLM(config)
    assert parameter_count(config) == model.num_parameters()
    buffers = sum(b.numel() for b in model.buffers())
    assert build_cost(config).memory == 4 * (model.num_parameters() + buffers)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs(), T=st.integers(1, 32))
def test_trace_estimate_bounds_the_measured_record(config, T):
    """Never below what a trace really holds (it is an upper bound), and not wildly above (at most 1.5x)."""
    ids = torch.randint(0, config.vocab_size, (1, T), generator=torch.Generator().manual_seed(T))
    out = run_trace(CausalLM(config), ids, ids)
    measured, estimate = record_bytes(out), trace_cost(config, T).memory
    assert measured <= estimate <= 1.5 * measured, (measured, estimate)


def test_attention_maps_part_is_the_three_score_tensors_per_layer():
    config = ModelConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=4,
                         intermediate_size=32, max_position_embeddings=64)
    T = 20
    out = run_trace(CausalLM(config), torch.zeros(1, T, dtype=torch.long))
    maps = [v for k, v in out.activations.items() if v.shape[-2:] == (T, T)]
    assert len(maps) == 3 * config.num_hidden_layers
    assert trace_cost(config, T).parts["attention maps"] == sum(m.numel() * 4 for m in maps)


@pytest.mark.parametrize("T", [8, 64])
def test_forward_flops_match_torch_flop_counter(T):
    """Our formula against torch's count of the matmuls a real forward performs (eager attention, full T x T)."""
    config = ModelConfig(vocab_size=300, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=128, max_position_embeddings=64)
    model = CausalLM(config)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(torch.zeros(1, T, dtype=torch.long), output_attentions=True)
    counted = counter.get_total_flops()
    assert counted == pytest.approx(forward_flops(config, T), rel=0.02)


def test_gradient_cost_holds_one_gradient_per_weight_and_three_forwards():
    config = ModelConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=32)
    model = CausalLM(config)
    grads = torch.autograd.grad(model(torch.zeros(1, 9, dtype=torch.long), labels=torch.ones(1, 9, dtype=torch.long)).loss,
                                list(model.parameters()))
    cost = gradient_cost(config, 9)
    assert cost.parts["gradients"] == sum(g.numel() * 4 for g in grads)
    assert cost.flops == 3 * forward_flops(config, 9)


def slider_config(**changes) -> ModelConfig:
    s = {**DEFAULTS, **changes}
    act, gated = FFN_KINDS[s["cfg.ffn"]]
    return ModelConfig(vocab_size=s["cfg.vocab_size"], hidden_size=s["cfg.hidden_size"],
                       num_hidden_layers=s["cfg.num_hidden_layers"], num_attention_heads=s["cfg.num_attention_heads"],
                       num_key_value_heads=s["cfg.num_key_value_heads"], intermediate_size=s["cfg.intermediate_size"],
                       hidden_act=act, mlp_gated=gated, tie_word_embeddings=s["cfg.tie_word_embeddings"],
                       max_position_embeddings=MAX_TOKENS)


MAXIMA = dict(**{"cfg.vocab_size": 50257, "cfg.hidden_size": 768, "cfg.num_hidden_layers": MAX_LAYERS,
                 "cfg.intermediate_size": 3072, "cfg.num_attention_heads": 12, "cfg.num_key_value_heads": 12})


@pytest.mark.parametrize("tied", [True, False])
def test_slider_maxima_are_refused_with_a_fitting_suggestion(tied):
    budget = Budget()  # the defaults: a 2-core, 8 GB server
    config = slider_config(**MAXIMA, **{"cfg.tie_word_embeddings": tied})
    v = check("build", config, budget)
    assert not v.ok and v.cost.memory > budget.memory
    L = v.suggestions["layers"]
    assert 1 <= L < MAX_LAYERS
    assert budget.allows(build_cost(config.replace(num_hidden_layers=L)))  # the suggestion fits ...
    assert not budget.allows(build_cost(config.replace(num_hidden_layers=L + 1)))  # ... and is the nearest
    t = check("trace", config, budget, tokens=MAX_TOKENS)
    assert not t.ok
    T = t.suggestions["tokens"]
    assert budget.allows(trace_cost(config, T)) and not budget.allows(trace_cost(config, T + 1))


def test_defaults_and_presets_a_lecture_uses_fit_the_default_budget():
    budget = Budget()
    config = slider_config()
    for action, sizes in (("build", {}), ("trace", {"tokens": MAX_TOKENS}), ("gradient", {"tokens": MAX_TOKENS}),
                          ("train", {"steps": 300, "batch": 16, "seq_len": 64}),
                          ("race", {"steps": 100, "batch": 8, "seq_len": 32})):
        assert check(action, config.replace(num_hidden_layers=12) if action == "race" else config, budget, **sizes).ok
    from engine import PRESETS

    gpt2 = PRESETS["gpt2_small"]
    assert check("build", gpt2, budget).ok and check("trace", gpt2, budget, tokens=64).ok


def test_training_refusal_suggests_fewer_steps_that_fit():
    budget = Budget(train_gflop=100.0)
    config = slider_config()
    v = check("train", config, budget, steps=300, batch=16, seq_len=64)
    assert not v.ok
    n = v.suggestions["steps"]
    assert budget.allows(train_cost(config, n, 16, 64, eval_every=max(1, n // 10)))
    assert 1 <= n < 300


def test_budget_from_env_reads_positive_numbers_and_ignores_junk():
    b = Budget.from_env({"EXPLORER_MAX_ACTION_MB": "4096", "EXPLORER_MAX_ACTION_GFLOP": "1e3",
                         "EXPLORER_MAX_TRAIN_GFLOP": "nan"})
    assert b.memory == 4096 * MIB and b.gflop == 1000.0 and b.train_gflop == Budget().train_gflop
    assert Budget.from_env({"EXPLORER_MAX_ACTION_MB": "-1", "EXPLORER_MAX_ACTION_GFLOP": "inf"}) == Budget()
    assert Budget.from_env({"EXPLORER_MAX_ACTION_MB": "lots"}) == Budget()


def test_readme_quotes_the_maxima_refusal_as_the_app_computes_it():
    """docs/lecturers.md's "Deploying for a class" names the maxima's cost and nearest fit; they must be today's
    numbers."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "lecturers.md").read_text(encoding="utf-8")
    text = " ".join(readme.split())
    quoted = re.search(r"need ([\d,]+) MB \(tied embeddings, the default; ([\d,]+) MB untied\) for the weights alone "
                       r"against the default ([\d,]+) MB, and are refused with \"(\d+) layers\" \(tied; (\d+) untied\)",
                       text)
    assert quoted, "docs/lecturers.md no longer quotes the maxima refusal"
    budget = Budget()
    tied, untied = (check("build", slider_config(**MAXIMA, **{"cfg.tie_word_embeddings": t}), budget) for t in (True, False))
    mib = lambda n: f"{round(n / 2**20):,}"  # noqa: E731
    assert quoted.groups() == (mib(tied.cost.memory), mib(untied.cost.memory), mib(budget.memory),
                               str(tied.suggestions["layers"]), str(untied.suggestions["layers"]))
