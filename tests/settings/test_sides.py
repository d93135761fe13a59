"""settings/sides.py: a side's link parameters, the head clamp and the comparison presets, against the sidebar's
own mapping (settings.schema) and the single view's builder (settings.build)."""

from __future__ import annotations

import pytest
import torch

from settings.build import build_parts
from settings.schema import DEFAULTS, FIXED_KEY, widgets_to_config
from settings.sides import PRESETS, SIDE_DEFAULTS, Clamped, clamp_heads, preset_sides, side_params


def test_a_side_links_only_what_differs_from_the_defaults():
    values = {**SIDE_DEFAULTS, "cfg.num_attention_heads": 8, "cfg.norm_type": "rmsnorm", "cfg.seed": 7.0,
              "cfg.initializer_range": 0.2, "cfg.tie_word_embeddings": False}
    assert side_params(values, "b") == {"b.cfg.num_attention_heads": "8", "b.cfg.norm_type": "rmsnorm",
                                        "b.cfg.seed": "7", "b.cfg.initializer_range": "0.2",
                                        "b.cfg.tie_word_embeddings": "false"}
    assert side_params(SIDE_DEFAULTS, "a") == {}
    checkpoint = {**values, "model.source": "checkpoint", "model.checkpoint": "tang-poems-small"}
    assert side_params(checkpoint, "a") == {"a.model.source": "checkpoint", "a.model.checkpoint": "tang-poems-small"}


def test_heads_move_to_the_sidebars_options():
    values = {**SIDE_DEFAULTS, "cfg.hidden_size": 48, "cfg.num_attention_heads": 7, "cfg.num_key_value_heads": 7}
    moved = clamp_heads(values)
    assert moved == [Clamped("cfg.num_attention_heads", 7, 6), Clamped("cfg.num_key_value_heads", 7, 6)]
    assert 48 % values["cfg.num_attention_heads"] == 0
    rope = {**SIDE_DEFAULTS, "cfg.hidden_size": 48, "cfg.num_attention_heads": 16, "cfg.position_embedding": "rope"}
    clamp_heads(rope)  # 48 / 16 = 3 is odd: RoPE needs an even head width
    assert (48 // rope["cfg.num_attention_heads"]) % 2 == 0


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_builds_both_sides_and_changes_one_thing(name):
    a, b = preset_sides(name, {})
    configs = [widgets_to_config(side) for side in (a, b)]  # both are valid sliders' models
    changed = {k for k in DEFAULTS if a[k] != b[k]}
    assert changed == {"norm": {"cfg.norm_type"}, "gqa": {"cfg.num_key_value_heads"},
                       "heads": {"cfg.num_attention_heads", "cfg.num_key_value_heads"},
                       "rope": {"cfg.position_embedding"}, "repeat": {"input.text"},
                       "trained": set(), "models": set(), "translation": {"input.text"}}[name]
    models = {k: (a[k], b[k]) for k in ("model.source", "model.checkpoint") if a.get(k) != b.get(k)}
    assert models == {"trained": {"model.source": ("random", "trained")},  # the other model, not the sliders
                      "models": {"model.checkpoint": ("smollm2-135m", "tang-poems-small")}}.get(name, {})
    assert configs[0].hidden_size == configs[1].hidden_size  # the same width
    if name == "gqa":
        assert configs[0].kv_heads == configs[0].num_attention_heads > configs[1].kv_heads > 1
    if name == "repeat":
        assert b["input.text"] == a["input.text"] * 2


def test_a_preset_keeps_the_view_it_starts_from():
    view = {"cfg.hidden_size": 128, "cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 8, "cfg.seed": 3.0,
            "input.text": "In the beginning", FIXED_KEY: {"norm_eps": 1e-6}}
    a, b = preset_sides("gqa", view)
    assert (b["cfg.hidden_size"], b["cfg.num_attention_heads"], b["cfg.num_key_value_heads"]) == (128, 8, 2)
    assert a["cfg.seed"] == b["cfg.seed"] == 3.0 and b[FIXED_KEY] == {"norm_eps": 1e-6}


def test_a_side_builds_as_the_single_view_with_its_fixed_fields():
    side = {**SIDE_DEFAULTS, "cfg.num_hidden_layers": 1, FIXED_KEY: {"norm_eps": 1e-3}}
    config, model, ids, _, _ = build_parts(side)
    single = build_parts({"cfg.num_hidden_layers": 1})
    assert config.norm_eps == 1e-3 and single[0].norm_eps != 1e-3
    assert config.replace(norm_eps=single[0].norm_eps) == single[0] and torch.equal(ids, single[2])
