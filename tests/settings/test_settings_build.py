"""settings/build.py: the one path from a view's settings to its model and input, against hand-made references."""

from __future__ import annotations

import torch

from engine import ModelConfig
from settings.build import build_parts, input_limit, random_ids, random_tokens, sidebar_values
from settings.schema import DEFAULTS, FIXED_KEY, MAX_TOKENS, preset_values


def test_random_input_is_the_seeded_draw_and_a_tutorial_keeps_its_words():
    config, model, ids, tokens, tok = build_parts({"preset": "gpt2_walkthrough"})
    gen = torch.Generator().manual_seed(0)  # the seed's default: the same draw as torch.randint by hand
    assert torch.equal(ids, torch.randint(0, config.vocab_size, (1, 3), generator=gen)) and tok is None
    assert tokens == ["猫", "吃", "鱼"]  # the walkthrough's own words, 3 ids
    assert random_tokens("gpt2_walkthrough", [1, 2]) == ["#1", "#2"]  # another length: the ids
    assert torch.equal(random_ids(config, 3, 0), ids)


def test_values_are_defaults_then_preset_then_named_keys():
    values, fixed = sidebar_values({"preset": "minimind_demo", "cfg.seed": 7, "loss.keep": 3})
    want = {**DEFAULTS, **{k: v for k, v in preset_values("minimind_demo").items() if k != FIXED_KEY}}
    assert {k: values[k] for k in DEFAULTS if k != "cfg.seed"} == {k: want[k] for k in DEFAULTS if k != "cfg.seed"}
    assert values["cfg.seed"] == 7 and values["loss.keep"] == 3 and values["cfg.preset"] == "minimind_demo"
    assert fixed == preset_values("minimind_demo")[FIXED_KEY]


def test_the_input_is_cut_at_the_models_last_position():
    short = ModelConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=5, position_embedding="learned")
    assert input_limit(short) == 5
    assert input_limit(ModelConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                   intermediate_size=16, position_embedding="rope")) == MAX_TOKENS
    _, _, ids, tokens, _ = build_parts({"cfg.vocab_size": 64, "input.text": "床前明月光，疑是地上霜。" * 40})
    assert ids.shape == (1, MAX_TOKENS) and len(tokens) == MAX_TOKENS  # the default model: 256 learned positions
