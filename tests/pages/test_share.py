"""Shareable state and both languages.

* URL round trip: a view set through the URL's query parameters (what the widgets' ``bind="query-params"``
  writes) is what the page shows, in a fresh session.
* Every page renders without exception in Chinese and in English.
* Presets reproduce their tutorial's setup in one click; config JSON round trips through the uploader's parser.
"""

import json

import pytest
from streamlit.testing.v1 import AppTest

from engine import PRESETS, CausalLM, ModelConfig
from tests.page_helpers import open_page, shown_chart
from settings.schema import all_presets, widgets_to_config
from ui.sidebar import DEFAULTS, config_to_widgets, parse_config_upload
from ui.state import FIXED_KEY

PAGES = ["overview", "norms", "prepost", "attention", "loss", "next_token", "generate", "train"]


def _fresh(params: dict) -> AppTest:
    return open_page(query=params, lang=None, defaults=False, timeout=90)


def test_url_round_trip_reproduces_the_view():
    params = {"ui.lang": "中文", "cfg.hidden_size": "32", "cfg.num_hidden_layers": "3", "cfg.norm_type": "RMSNorm",
              "cfg.norm_position": "Post-Norm", "cfg.position_embedding": "RoPE", "cfg.seed": "7",
              "input.text": "白日依山尽，黄河入海流。"}
    at = _fresh(params)
    assert not at.exception
    s = at.session_state
    assert (s["cfg.hidden_size"], s["cfg.num_hidden_layers"], s["cfg.norm_type"], s["cfg.norm_position"],
            s["cfg.position_embedding"], s["cfg.seed"], s["input.text"]) == (
        32, 3, "rmsnorm", "post", "rope", 7, "白日依山尽，黄河入海流。")
    assert at.title[0].value.startswith("总览")  # the language came from the URL
    # the page shows the model the URL describes: its parameter total matches an independent build
    cfg = PRESETS["minimind_demo"].replace(
        vocab_size=4000, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=4,
        intermediate_size=256, hidden_act="gelu", mlp_gated=False, norm_type="rmsnorm", norm_position="post",
        position_embedding="rope", max_position_embeddings=256, norm_eps=1e-5, bias=True, tie_word_embeddings=True,
        initializer_range=0.02)
    total = CausalLM(cfg).num_parameters()
    assert f"{total:,}" in shown_chart(at, "overview.params")["layout"]["title"]["text"]


def test_a_second_session_with_the_same_url_sees_the_same_numbers():
    params = {"ui.lang": "English", "cfg.num_hidden_layers": "4", "cfg.seed": "3", "input.text": "In the beginning"}
    a, b = _fresh(params), _fresh(params)
    assert not a.exception and not b.exception
    assert [c.proto.spec for c in a.get("plotly_chart")] == [c.proto.spec for c in b.get("plotly_chart")]
    assert a.dataframe[0].value.equals(b.dataframe[0].value)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_in_both_languages(page, lang):
    at = open_page(page, via="script", lang=lang, defaults=False, timeout=90, **{"cfg.vocab_size": 512})
    assert not at.exception, at.exception
    title = at.title[0].value  # page titles never contain the input's tokens
    assert any("\u4e00" <= ch <= "\u9fff" for ch in title) == (lang == "zh"), title


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_widgets_rebuild_the_preset(name):
    values, notes = config_to_widgets(PRESETS[name])
    preset = PRESETS[name]
    assert values["cfg.hidden_size"] == preset.hidden_size
    assert values["cfg.num_attention_heads"] == preset.num_attention_heads
    assert values["cfg.num_key_value_heads"] == preset.kv_heads
    assert values["cfg.norm_position"] == preset.norm_position
    assert values["cfg.position_embedding"] == preset.position_embedding
    assert not notes  # every preset value is a slider stop
    # ... and the sidebar's own mapping builds the preset back from them (seed and input aside)
    assert _resolved(widgets_to_config({**DEFAULTS, **values}, values[FIXED_KEY])) == _resolved(preset)


def test_one_click_preset_gives_the_tutorial_setup():
    at = open_page("overview", via="script", defaults=False, timeout=90)
    at.sidebar.selectbox(key="cfg.preset.en").set_value("gpt2_walkthrough").run()
    assert not at.exception
    s = at.session_state
    assert (s["cfg.hidden_size"], s["cfg.num_attention_heads"], s["cfg.intermediate_size"]) == (4, 2, 16)
    assert (s["input.mode"], s["input.random_len"]) == ("random", 3)  # the tutorial's 3 tokens
    shapes = list(at.dataframe[0].value.iloc[:, 4])  # the walkthrough's shape column: [T, H] = [3, 4]
    assert "[3, 4]" in shapes


def test_config_json_round_trip_and_rejections():
    cfg = PRESETS["llama_small"]
    assert parse_config_upload(cfg.to_json().encode()) == cfg
    for bad in (b"{", b"[1]", b'{"hidden_size": 30, "num_attention_heads": 4}', b'{"nope": 1}', b"x" * 100_000):
        with pytest.raises(ValueError):
            parse_config_upload(bad)


# ---- presets and uploads build exactly the config they name (issue 11 item 3) ----------------------------
PROBE = """import streamlit as st
from ui.sidebar import explorer, export_json
ctx = explorer()
st.code(ctx.config.to_json(), language="json")
st.code(export_json(ctx.config), language="json")
"""


def _probe() -> AppTest:
    """A one-script app that renders the sidebar and prints the config it built and the download's JSON."""
    return open_page(source=PROBE, defaults=False, timeout=120)


def _built(at: AppTest) -> ModelConfig:
    assert not at.exception, [e.message for e in at.exception]
    return ModelConfig.from_dict(json.loads(at.code[0].value))


def _resolved(c: ModelConfig) -> ModelConfig:
    return c.replace(num_key_value_heads=c.kv_heads)  # None means "as many as query heads"


@pytest.mark.parametrize("name", sorted(all_presets()))
def test_preset_builds_exactly_its_config_and_keeps_unslidden_fields(name):
    at = _probe()
    at.sidebar.selectbox(key="cfg.preset.en").set_value(name).run()
    preset = all_presets()[name]
    assert _resolved(_built(at)) == _resolved(preset)  # norm_eps, rope_theta, bias... included
    shown = " ".join(c.value for c in at.sidebar.caption)
    assert f"norm_eps {preset.norm_eps:g}" in shown and f"max_position_embeddings {preset.max_position_embeddings:,}" in shown
    # a variant preset's own fields are named in the read-only caption
    for field in ("sliding_window", "num_local_experts", "qk_norm"):
        if getattr(preset, field) != getattr(ModelConfig(), field):
            assert f"{field} {getattr(preset, field)}" in shown, (field, shown)
    if preset.layer_types == ("sliding_attention",) * 5 + ("full_attention",):
        assert "layer_types [sliding_attention ×5, full_attention]" in shown, shown
    at.sidebar.slider(key="cfg.num_hidden_layers").set_value(5).run()  # a slider moves: the rest stays
    pattern = preset.layer_types and tuple((preset.layer_types * 5)[:5])  # a per-layer pattern repeats
    assert _resolved(_built(at)) == _resolved(preset.replace(num_hidden_layers=5, layer_types=pattern))


EVERY_FIELD = ModelConfig(  # every field differs from ModelConfig's defaults and from the app's
    vocab_size=1000, hidden_size=32, num_hidden_layers=3, num_attention_heads=8, num_key_value_heads=2,
    head_dim=8, intermediate_size=128, hidden_act="gelu_new", mlp_gated=True, norm_type="rmsnorm", norm_position="post",
    position_embedding="rope", max_position_embeddings=1024, rope_theta=500000.0, norm_eps=1e-6, bias=False,
    attention_bias=True, tie_word_embeddings=False, initializer_range=0.05,
    # the block variants (no sidebar control: an upload keeps them as fixed fields)
    qk_norm="per_head", sliding_window=16, layer_types=("sliding_attention", "full_attention", "sliding_attention"),
    attention_sinks=True, query_pre_attn_scalar=16.0, attn_logit_softcapping=50.0, final_logit_softcapping=30.0,
    embedding_multiplier=2.0, rope_local_base_freq=10000.0, num_local_experts=4, num_experts_per_tok=1,
    norm_topk_prob=False, moe_intermediate_size=64, shared_expert_intermediate_size=32,
    router_bias=True, swiglu_limit=7.0, swiglu_alpha=1.5, rope_type="yarn", rope_factor=4.0,
    rope_original_max_position_embeddings=256, rope_beta_fast=16.0, rope_beta_slow=2.0, rope_truncate=False,
)


def test_every_field_differs_from_the_defaults():
    for name, value in EVERY_FIELD.to_dict().items():
        assert value != getattr(ModelConfig(), name), name


@pytest.mark.parametrize("wrapped", [True, False])
def test_upload_builds_exactly_its_config_and_restores_seed_and_text(wrapped):
    payload = {"config": EVERY_FIELD.to_dict(), "seed": 42, "input": {"mode": "text", "text": "白日依山尽，黄河入海流。"}}
    data = json.dumps(payload if wrapped else EVERY_FIELD.to_dict(), ensure_ascii=False).encode()
    at = _probe()
    at.sidebar.file_uploader(key="cfg.upload").set_value(("config.json", data, "application/json"))
    at.run()
    assert _built(at) == EVERY_FIELD
    if wrapped:
        assert int(at.session_state["cfg.seed"]) == 42
        assert at.session_state["input.text"] == "白日依山尽，黄河入海流。"
        exported = json.loads(at.code[1].value)  # the download carries them back out
        assert exported["seed"] == 42 and exported["input"]["text"] == "白日依山尽，黄河入海流。"
        assert ModelConfig.from_dict(exported["config"]) == EVERY_FIELD
    at.sidebar.select_slider(key="cfg.intermediate_size.en").set_value(256).run()
    assert _built(at) == EVERY_FIELD.replace(intermediate_size=256)


def test_download_then_upload_round_trips_seed_and_text():
    at = _probe()
    at.session_state["cfg.seed"] = 9
    at.session_state["input.text"] = "In the beginning"
    at.run()
    data = at.code[1].value.encode()
    other = _probe()
    other.sidebar.file_uploader(key="cfg.upload").set_value(("config.json", data, "application/json"))
    other.run()
    assert int(other.session_state["cfg.seed"]) == 9 and other.session_state["input.text"] == "In the beginning"
    assert _built(other) == _built(at)


def test_reset_to_defaults_restores_every_control():
    at = _probe()
    at.sidebar.selectbox(key="cfg.preset.en").set_value("llama_small").run()
    at.button(key="state.reset").click().run()
    assert not at.exception
    for key, value in DEFAULTS.items():
        assert at.session_state[key] == value, key
    assert at.session_state["cfg.preset"] == ""
    assert _built(at).norm_eps == 1e-5  # the preset's fixed fields are gone too


def test_the_block_variant_controls_build_the_config_and_follow_a_preset():
    """Issue 26: the sidebar's block-variants group edits the config fields without a slider: a window, its layer
    pattern, sinks, QK-norm and experts switched on one at a time build exactly that ModelConfig; picking a
    preset afterwards shows the preset's values in the same controls, and switching one off there keeps the rest."""
    at = _probe()
    base = _resolved(_built(at))
    at.sidebar.select_slider(key="cfg.variant.sliding_window").set_value(8).run()
    assert _resolved(_built(at)) == base.replace(sliding_window=8)  # every layer slides (Mistral)
    at.sidebar.radio(key="cfg.variant.layer_types").set_value("alternate").run()
    assert _built(at).layer_types == ("sliding_attention", "full_attention") * (base.num_hidden_layers // 2)
    at.sidebar.toggle(key="cfg.variant.attention_sinks").set_value(True).run()
    at.sidebar.radio(key="cfg.variant.qk_norm").set_value("per_head").run()
    at.sidebar.select_slider(key="cfg.variant.num_local_experts").set_value(4).run()
    at.sidebar.select_slider(key="cfg.variant.num_experts_per_tok").set_value(3).run()
    built = _resolved(_built(at))
    assert built == base.replace(sliding_window=8, layer_types=built.layer_types, attention_sinks=True,
                                 qk_norm="per_head", num_local_experts=4, num_experts_per_tok=3)
    at.sidebar.select_slider(key="cfg.variant.num_local_experts").set_value(2).run()  # top-k follows: 3 > 2
    assert (_built(at).num_local_experts, _built(at).num_experts_per_tok) == (2, 2)
    at.sidebar.select_slider(key="cfg.variant.sliding_window").set_value(0).run()  # off: no sliding layer left
    assert (_built(at).sliding_window, _built(at).layer_types) == (None, None)

    at.sidebar.selectbox(key="cfg.preset.en").set_value("gemma3_like").run()
    gemma = all_presets()["gemma3_like"]
    assert at.sidebar.select_slider(key="cfg.variant.sliding_window").value == gemma.sliding_window
    assert at.sidebar.radio(key="cfg.variant.layer_types").value == "five_to_one"
    assert at.sidebar.radio(key="cfg.variant.qk_norm").value == "per_head"
    at.sidebar.radio(key="cfg.variant.qk_norm").set_value("none").run()
    assert _resolved(_built(at)) == _resolved(gemma.replace(qk_norm="none"))
