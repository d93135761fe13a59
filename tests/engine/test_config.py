"""ModelConfig validation, derived sizes, (de)serialisation and presets."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import PRESET_SOURCES, PRESETS, ModelConfig
from engine.config import HIDDEN_ACTS, NORM_POSITIONS, NORM_TYPES, POSITION_EMBEDDINGS
from engine.layers import ACT2FN, ADDITIVE_POSITIONS, NORMS
from engine.model import NORM_PLACEMENTS


def test_defaults_are_valid_and_derived_sizes():
    c = ModelConfig()
    assert c.kv_heads == c.num_attention_heads == 4
    assert c.head_dim == 16 == c.hidden_size // c.num_attention_heads
    c = ModelConfig(hidden_size=48, num_attention_heads=6, num_key_value_heads=2)
    assert (c.kv_heads, c.head_dim) == (2, 8)
    assert ModelConfig(bias=False).qkv_bias is False
    assert ModelConfig(bias=False, attention_bias=True).qkv_bias is True
    assert ModelConfig(bias=True, attention_bias=False).qkv_bias is False
    assert [ModelConfig(position_embedding=p).has_position_limit for p in POSITION_EMBEDDINGS] == [
        p in ("learned", "sinusoidal") for p in POSITION_EMBEDDINGS]


def test_option_registries_match_the_valid_strings():
    assert set(ACT2FN) == set(HIDDEN_ACTS) == {"relu", "gelu", "gelu_new", "silu"}
    assert set(NORMS) == set(NORM_TYPES) == {"layernorm", "rmsnorm", "gemma_rmsnorm"}
    assert set(NORM_PLACEMENTS) == set(NORM_POSITIONS) == {"pre", "post", "sandwich", "post_sublayer"}
    assert set(ADDITIVE_POSITIONS) | {"rope", "none"} == set(POSITION_EMBEDDINGS)


@pytest.mark.parametrize("field", ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                                   "num_key_value_heads", "intermediate_size", "max_position_embeddings"])
@pytest.mark.parametrize("value", [0, -3, 2.0, True, "8"])
def test_non_positive_or_non_integer_sizes_rejected(field, value):
    with pytest.raises(ValueError) as err:
        ModelConfig(**{field: value})
    assert field in str(err.value) and repr(value) in str(err.value)


def test_hidden_not_divisible_by_heads():
    with pytest.raises(ValueError, match=r"hidden_size=30.*num_attention_heads=4"):
        ModelConfig(hidden_size=30, num_attention_heads=4)


def test_heads_not_divisible_by_kv_heads():
    with pytest.raises(ValueError, match=r"num_attention_heads=6.*num_key_value_heads=4"):
        ModelConfig(hidden_size=48, num_attention_heads=6, num_key_value_heads=4)
    with pytest.raises(ValueError, match=r"num_key_value_heads=8"):
        ModelConfig(num_attention_heads=4, num_key_value_heads=8)  # more KV heads than query heads


def test_odd_head_dim_with_rope():
    with pytest.raises(ValueError, match=r"(?=.*RoPE)(?=.*\b3\b)"):
        ModelConfig(hidden_size=12, num_attention_heads=4, position_embedding="rope")
    for pe in ("learned", "sinusoidal", "none"):
        ModelConfig(hidden_size=12, num_attention_heads=4, position_embedding=pe)  # odd head dim is fine there


@pytest.mark.parametrize("field,valid", [("hidden_act", HIDDEN_ACTS), ("norm_type", NORM_TYPES),
                                         ("norm_position", NORM_POSITIONS),
                                         ("position_embedding", POSITION_EMBEDDINGS)])
def test_unknown_option_strings_list_valid_ones(field, valid):
    with pytest.raises(ValueError) as err:
        ModelConfig(**{field: "swish2"})
    msg = str(err.value)
    assert field in msg and "swish2" in msg
    for v in valid:
        assert v in msg
    with pytest.raises(ValueError):
        ModelConfig(**{field: valid[0].upper()})  # case matters


@pytest.mark.parametrize("field,value", [("norm_eps", 0.0), ("norm_eps", -1e-5), ("norm_eps", float("nan")),
                                         ("rope_theta", 0.0), ("initializer_range", -0.1)])
def test_bad_floats_rejected(field, value):
    with pytest.raises(ValueError, match=field):
        ModelConfig(**{field: value})


def test_frozen_and_replace_validates():
    c = ModelConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.hidden_size = 8  # type: ignore[misc]
    assert c.replace(hidden_size=32).hidden_size == 32 and c.hidden_size == 64
    with pytest.raises(ValueError, match="num_attention_heads"):
        c.replace(num_attention_heads=5)


@settings(max_examples=40, deadline=None)
@given(
    heads=st.sampled_from([1, 2, 4, 8]), hd=st.sampled_from([2, 4, 6]), kv_div=st.sampled_from([1, 2, 4, 8]),
    act=st.sampled_from(HIDDEN_ACTS), norm=st.sampled_from(NORM_TYPES), pos=st.sampled_from(NORM_POSITIONS),
    pe=st.sampled_from(POSITION_EMBEDDINGS), tie=st.booleans(), gated=st.booleans(),
    attention_bias=st.sampled_from([None, True, False]),
)
def test_json_round_trip(heads, hd, kv_div, act, norm, pos, pe, tie, gated, attention_bias):
    kv = heads // kv_div if heads % kv_div == 0 else None
    c = ModelConfig(hidden_size=heads * hd, num_attention_heads=heads, num_key_value_heads=kv, hidden_act=act,
                    norm_type=norm, norm_position=pos, position_embedding=pe, tie_word_embeddings=tie,
                    mlp_gated=gated, attention_bias=attention_bias)
    assert ModelConfig.from_dict(json.loads(c.to_json())) == c
    assert ModelConfig.from_dict(c.to_dict()) == c
    assert set(c.to_dict()) == {f.name for f in dataclasses.fields(ModelConfig)}


def test_from_dict_errors():
    with pytest.raises(ValueError, match=r"(?=.*n_embd)(?=.*hidden_size)"):
        ModelConfig.from_dict({"n_embd": 64})  # unknown key named, valid keys listed
    with pytest.raises(TypeError, match="list"):
        ModelConfig.from_dict([1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="vocab_size"):
        ModelConfig.from_dict({"vocab_size": 0})
    assert ModelConfig.from_dict({}) == ModelConfig()


def test_presets_are_documented_and_valid():
    assert set(PRESETS) == set(PRESET_SOURCES)
    for name, c in PRESETS.items():
        assert isinstance(c, ModelConfig), name
        assert ModelConfig.from_dict(c.to_dict()) == c
    g = PRESETS["gpt2_small"]
    assert (g.vocab_size, g.hidden_size, g.num_hidden_layers, g.num_attention_heads, g.intermediate_size,
            g.max_position_embeddings, g.hidden_act) == (50257, 768, 12, 12, 3072, 1024, "gelu_new")
    llama = PRESETS["llama_small"]
    assert llama.kv_heads < llama.num_attention_heads and llama.position_embedding == "rope"
    assert PRESETS["numpy_decoder"].norm_position == "post"


def test_replace_depth_repeats_the_layer_pattern():
    """Another depth keeps a per-layer pattern (pages rebuild a preset at other depths): Gemma 3's 5 local : 1
    global at 8 layers is 5 local, 1 global, then 2 local again; an explicit layer_types wins."""
    from engine import VARIANT_PRESETS

    gemma = VARIANT_PRESETS["gemma3_like"]
    S, F = "sliding_attention", "full_attention"
    assert gemma.replace(num_hidden_layers=8).layer_types == (S, S, S, S, S, F, S, S)
    assert gemma.replace(num_hidden_layers=2).layer_types == (S, S)
    assert gemma.replace(num_hidden_layers=1, layer_types=(F,)).layer_types == (F,)
