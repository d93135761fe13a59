"""Lesson 7's answer functions (teaching/answers/variants.py) against independent references: the KV-cache sizes by
hand, the sink's share as what the keys' softmax weights leave, the active parameters counted on the model's own
modules, the busiest expert from a forward hook on the router, RoPE's slowest wavelength by its formula; and a
changed setting changes each key."""

import math

import pytest
import torch

from teaching import lessons
from teaching.answers.core import REGISTRY

MiB = 2 ** 20


def key(built, name, settings):
    return REGISTRY[name](built(settings))


def test_the_window_keeps_63_positions_on_5_of_6_layers(built):
    gemma = {"preset": "gemma3_like", "gen.ctx": 32768, "gen.dtype": "bfloat16"}
    k = key(built, "window_kv_mib", gemma)
    # 6 layers, 1 KV head of 64, bfloat16: the global layer keeps 32,768 positions, the 5 sliding ones 63 each
    assert k.correct == pytest.approx(2 * 1 * 64 * 2 * (32768 + 5 * 63) / MiB)
    assert 2 * 1 * 64 * 2 * 6 * 32768 / MiB in k.distractors  # no window at all: 48 MiB
    shorter = key(built, "window_kv_mib", {**gemma, "gen.ctx": 2048})
    assert shorter.correct == pytest.approx(2 * 1 * 64 * 2 * (2048 + 5 * 63) / MiB)


def test_the_sink_takes_what_the_keys_do_not(built):
    settings = {"preset": "gpt_oss_like", "input.mode": "random", "input.random_len": 12, "attn.layer": 1, "attn.head": 1}
    s = built(settings)
    with torch.no_grad():
        weights = s.model(s.input_ids, output_attentions=True).attentions[0][0, 0]  # (T, T) the keys' weights
    k = key(built, "sink_share", settings)
    assert k.correct == pytest.approx(1 - float(weights[-1].sum()), abs=1e-6)
    assert abs(k.correct - 1 / 13) < 0.02  # a 13th logit of 0 among 12 scores near 0 at init
    other = key(built, "sink_share", {**settings, "input.random_len": 6})
    assert abs(other.correct - 1 / 7) < 0.03


def test_active_parameters_counted_on_the_experts_themselves(built):
    settings = {"preset": "minimind_moe"}
    s = built(settings)
    total = sum(p.numel() for p in s.model.parameters())
    idle = sum(sum(p.numel() for p in block.mlp.experts[e].parameters())
               for block in s.model.layers for e in range(s.config.num_experts_per_tok, s.config.num_local_experts))
    assert key(built, "active_parameter_share", settings).correct == pytest.approx(100 * (total - idle) / total)
    top1 = key(built, "active_parameter_share", {**settings, "preset": "gpt_oss_like"})
    assert top1.correct != key(built, "active_parameter_share", settings).correct


def test_the_busiest_expert_by_a_hook_on_the_router(built):
    settings = {"preset": "minimind_moe", "experts.layer": 1}
    s = built(settings)
    got = {}
    hook = s.model.layers[0].mlp.gate.register_forward_hook(lambda m, a, out: got.__setitem__("logits", out.detach()))
    with torch.no_grad():
        s.model(s.input_ids)
    hook.remove()
    chosen = torch.topk(torch.softmax(got["logits"][0].float(), -1), s.config.num_experts_per_tok, -1).indices
    counts = torch.bincount(chosen.reshape(-1), minlength=s.config.num_local_experts)
    assert key(built, "busiest_expert", settings).correct == int(torch.argmax(counts)) + 1  # 1-based, lowest on a tie


def test_the_slowest_plane_turns_once_in_two_pi_theta_to_the_d_minus_2_over_d(built):
    qwen = key(built, "longest_wavelength", {"preset": "qwen3_like"})  # rope_theta 1e6, head_dim 32
    assert qwen.correct == pytest.approx(2 * math.pi * 1e6 ** (30 / 32), rel=1e-5)
    llama = key(built, "longest_wavelength", {"preset": "llama_small"})
    c = lessons.build_parts({"preset": "llama_small"})[0]
    assert llama.correct == pytest.approx(2 * math.pi * c.rope_theta ** ((c.head_dim - 2) / c.head_dim), rel=1e-5)
