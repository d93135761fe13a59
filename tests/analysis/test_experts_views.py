"""The Experts page's analysis (analysis/experts.py) and figures against an independent reference: the router's
probabilities computed by hand as softmax(x · W_routerᵀ + b) from the model's own weights and the FFN's input
caught by a forward hook, the top-k chosen from them, loads counted from that choice, and the active parameter
count by hand from the model's modules."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

import analysis
from analysis.experts import expert_load, load_summary, moe_layers, routed_expert_parameters, router_table
from engine import VARIANT_PRESETS, CausalLM, ModelConfig
from engine.cost import active_parameter_count, parameter_count
from engine.layers import router_load
from ui.figures.experts import load_bar, router_heatmap


def _moe(**kw) -> ModelConfig:
    base = dict(vocab_size=97, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=48,
                hidden_act="silu", mlp_gated=True, norm_type="rmsnorm", position_embedding="rope", bias=False,
                num_local_experts=5, num_experts_per_tok=2, moe_intermediate_size=24)
    return ModelConfig(**{**base, **kw})


def _by_hand(model: CausalLM, ids: torch.Tensor) -> list[torch.Tensor]:
    """Per block the router probabilities ``[T, E]`` (float64), from the FFN's input (a forward hook on
    ``layers.{i}.mlp``) and the router's weight and bias, without the activation record."""
    inputs: list[torch.Tensor] = []
    hooks = [layer.mlp.register_forward_hook(lambda m, args, out: inputs.append(args[0].detach()))
             for layer in model.layers]
    try:
        with torch.no_grad():
            model(ids)
    finally:
        for h in hooks:
            h.remove()
    probs = []
    for layer, x in zip(model.layers, inputs):
        W = layer.mlp.gate.weight.detach().double()  # (E, H)
        b = layer.mlp.gate.bias.detach().double() if layer.mlp.gate.bias is not None else 0.0
        probs.append(torch.softmax(x[0].double() @ W.T + b, dim=-1))  # (T, E)
    return probs


@pytest.fixture(params=[dict(), dict(router_bias=True, norm_topk_prob=False), dict(num_experts_per_tok=1)],
                ids=["renormalised", "biased-raw", "top1"])
def routed(request):
    config = _moe(**request.param)
    torch.manual_seed(3)
    model = CausalLM(config)
    if config.router_bias:
        with torch.no_grad():
            for layer in model.layers:
                layer.mlp.gate.bias.normal_(0.0, 0.5)  # a bias that matters
    ids = torch.randint(0, config.vocab_size, (1, 17), generator=torch.Generator().manual_seed(1))
    return config, model, ids, analysis.run_trace(model, ids), _by_hand(model, ids)


def test_router_table_equals_softmax_of_the_router_by_hand(routed):
    config, model, ids, out, ref = routed
    E, k, T = config.num_local_experts, config.num_experts_per_tok, ids.shape[1]
    assert moe_layers(out) == list(range(config.num_hidden_layers))
    for layer, probs in enumerate(ref):
        table = router_table(out, layer)
        assert len(table) == T * E
        p = table["probability"].to_numpy().reshape(T, E)
        np.testing.assert_allclose(p, probs.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
        top = torch.topk(probs, k, dim=-1)  # (T, k): the experts each token goes to, by hand
        chosen = table["chosen"].to_numpy().reshape(T, E)
        rank = table["rank"].to_numpy().reshape(T, E)
        weight = table["weight"].to_numpy().reshape(T, E)
        assert (chosen.sum(axis=1) == k).all()
        expected = top.values / top.values.sum(-1, keepdim=True) if config.norm_topk_prob else top.values
        for t in range(T):
            assert set(np.nonzero(chosen[t])[0]) == set(top.indices[t].tolist())
            assert [int(rank[t, e]) for e in top.indices[t].tolist()] == list(range(1, k + 1))  # 1 = most likely
            np.testing.assert_allclose([weight[t, e] for e in top.indices[t].tolist()], expected[t].numpy(), rtol=1e-5)
        assert (weight[~chosen] == 0).all() and (rank[~chosen] == 0).all()
        if config.norm_topk_prob:
            np.testing.assert_allclose(weight.sum(axis=1), 1.0, rtol=1e-5)


def test_expert_load_counts_the_choice_by_hand(routed):
    config, model, ids, out, ref = routed
    E, k, T, L = config.num_local_experts, config.num_experts_per_tok, ids.shape[1], config.num_hidden_layers
    counts = []
    for layer, probs in enumerate(ref):
        c = np.bincount(torch.topk(probs, k, dim=-1).indices.reshape(-1).numpy(), minlength=E)
        counts.append(c)
        load = expert_load(out, layer)
        assert load["tokens"].tolist() == c.tolist()
        np.testing.assert_allclose(load["share"], c / T)
        assert load["share"].sum() == pytest.approx(k)  # every token goes to k experts
        assert load["load"].sum() == pytest.approx(1.0)
        np.testing.assert_allclose(load["mean_probability"], probs.mean(0).numpy(), rtol=1e-5, atol=1e-7)
        assert load["mean_probability"].sum() == pytest.approx(1.0)
    every = expert_load(out)  # all blocks: the tokens of every block pooled
    total = np.sum(counts, axis=0)
    assert every["tokens"].tolist() == total.tolist()
    np.testing.assert_allclose(every["share"], total / (T * L))
    assert every["share"].sum() == pytest.approx(k) and every["load"].sum() == pytest.approx(1.0)
    # the engine's own statistics (a second implementation, from the router logits)
    stats = router_load([out.activations[f"blocks.{i}.mlp.hook_router_logits"] for i in range(L)], k)
    np.testing.assert_allclose(every["share"], stats["tokens_per_expert"].numpy(), rtol=1e-6)
    assert load_summary(every, k)["aux_loss"] == pytest.approx(float(stats["aux_loss"]), rel=1e-5)


def test_load_summary_on_a_hand_made_load():
    load = pd.DataFrame({"expert": [0, 1, 2, 3], "tokens": [6, 0, 6, 4], "share": [0.75, 0.0, 0.75, 0.5],
                         "load": [0.375, 0.0, 0.375, 0.25], "mean_probability": [0.4, 0.1, 0.3, 0.2]})
    s = load_summary(load, top_k=2)
    assert s["uniform"] == pytest.approx(0.5)  # k/E = 2/4
    assert (s["most"], s["least"]) == (0, 1)  # a tie: the lower expert
    assert s["most_ratio"] == pytest.approx(1.5) and s["least_ratio"] == 0.0
    assert s["idle"] == 1 and s["spread"] == pytest.approx(0.75)
    assert s["aux_loss"] == pytest.approx(4 * (0.75 * 0.4 + 0.75 * 0.3 + 0.5 * 0.2))
    even = load.assign(share=[0.5] * 4, mean_probability=[0.25] * 4)
    assert load_summary(even, 2)["aux_loss"] == pytest.approx(2.0)  # k when perfectly even
    assert load_summary(even, 2)["spread"] == 0.0


def test_a_dense_model_has_no_router():
    config = ModelConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32)
    torch.manual_seed(0)
    out = analysis.run_trace(CausalLM(config), torch.tensor([[1, 2, 3]]))
    assert moe_layers(out) == []
    with pytest.raises(ValueError):
        expert_load(out)
    with pytest.raises(ValueError):
        router_table(out, 0)


@pytest.mark.parametrize("name", ["minimind_moe", "gpt_oss_like"])
def test_active_parameters_by_hand(name):
    """Every parameter of the model, less the E - k routed experts per block a token does not pass through."""
    config = VARIANT_PRESETS[name]
    torch.manual_seed(0)
    model = CausalLM(config)
    total = sum(p.numel() for p in model.parameters())
    expert = sum(p.numel() for p in model.layers[0].mlp.experts[0].parameters())
    L, E, k = config.num_hidden_layers, config.num_local_experts, config.num_experts_per_tok
    assert parameter_count(config) == total
    assert active_parameter_count(config) == total - L * (E - k) * expert
    assert routed_expert_parameters(model) == L * E * expert
    if name == "minimind_moe":  # H = 128, expert width 344, SwiGLU without biases: 3 · 128 · 344 per expert
        assert expert == 3 * 128 * 344
        assert total - active_parameter_count(config) == 4 * (4 - 2) * 3 * 128 * 344


def test_figures_show_the_tables(routed):
    config, model, ids, out, _ = routed
    E, k, T = config.num_local_experts, config.num_experts_per_tok, ids.shape[1]
    table = router_table(out, 1)
    labels = [f"{i} t{i}" for i in range(T)]
    fig = router_heatmap(table, labels, "title", "expert", "token", "p", "chosen")
    heat, boxes = fig.data
    np.testing.assert_allclose(np.asarray(heat.z, dtype=np.float64), table["probability"].to_numpy().reshape(T, E),
                               rtol=1e-6)
    assert list(heat.x) == list(range(1, E + 1))  # experts numbered from 1
    assert list(boxes.x).count(None) == T * k  # one box per chosen (token, expert)
    centres = {(round(np.mean(xs[:4]), 6), round(np.mean(ys[:4]), 6))
               for xs, ys in zip(np.split(np.array(boxes.x, dtype=object), T * k),
                                 np.split(np.array(boxes.y, dtype=object), T * k))}
    chosen = table[table["chosen"]]
    assert centres == {(e + 1.0, float(p)) for p, e in zip(chosen["position"], chosen["expert"])}
    load = expert_load(out, 1)
    bar = load_bar(load, k / E, "title", "expert", "share", "even")
    np.testing.assert_allclose(np.asarray(bar.data[0].y, dtype=np.float64), load["share"].to_numpy() * 100, rtol=1e-6)
    assert list(bar.data[1].y) == pytest.approx([100 * k / E] * 2) and bar.data[1].name == "even"  # the even share
