"""Shareable state and both languages.

* URL round trip: a view set through the URL's query parameters (what the widgets' ``bind="query-params"``
  writes) is what the page shows, in a fresh session.
* Every page renders without exception in Chinese and in English.
* Presets reproduce their tutorial's setup in one click; config JSON round trips through the uploader's parser.
"""

import json
from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

from engine import PRESETS, CausalLM
from ui.sidebar import config_to_widgets, parse_config_upload

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["overview", "norms", "prepost", "attention", "loss", "next_token", "generate", "train"]


def _fresh(params: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


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
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert f"{total:,}" in spec["layout"]["title"]["text"]


def test_a_second_session_with_the_same_url_sees_the_same_numbers():
    params = {"ui.lang": "English", "cfg.num_hidden_layers": "4", "cfg.seed": "3", "input.text": "In the beginning"}
    a, b = _fresh(params), _fresh(params)
    assert not a.exception and not b.exception
    assert a.get("plotly_chart")[0].proto.spec == b.get("plotly_chart")[0].proto.spec
    assert a.dataframe[0].value.equals(b.dataframe[0].value)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_in_both_languages(page, lang):
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=90)
    at.session_state["ui.lang"] = lang
    at.session_state["cfg.vocab_size"] = 512
    at.run()
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


def test_one_click_preset_gives_the_tutorial_setup():
    at = AppTest.from_file(str(ROOT / "pages" / "overview.py"), default_timeout=90)
    at.session_state["ui.lang"] = "en"
    at.run()
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
