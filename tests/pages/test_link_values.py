"""Invalid share-link values (issue 16): each is ignored with ONE sidebar message naming the parameter and why,
the control keeps the app's default, and the bad value leaves the URL.

The link is given to a fresh AppTest session as its query string (what a browser sends on opening it); after the
run, ``at.query_params`` is the URL the browser's address bar shows (AppTest reads it back from the
``page_info_changed`` messages the app sends).

Fails on the old mechanism (repair after Streamlit had seeded the widget): ``cfg.num_hidden_layers=3.5`` came back
as ``3`` in the URL and ``cfg.seed=3.5`` stayed there, and ``cfg.seed=inf`` raised in the number input.
"""

from __future__ import annotations


import pytest
from streamlit.testing.v1 import AppTest

from tests.page_helpers import open_page
from ui.i18n import catalogs
from ui.sidebar import DEFAULTS

EN = catalogs()["en"]

# one control of each kind: int slider, float number input (whole numbers only), select slider, select box, radio,
# toggle
PARAMS = ["cfg.num_hidden_layers", "cfg.seed", "cfg.vocab_size", "cfg.ffn", "cfg.norm_type",
          "cfg.tie_word_embeddings"]
BAD = {"minus_one": "-1", "fraction": "3.5", "nan": "nan", "inf": "inf", "unicode": "中文😀", "unknown": "Bogus",
       "huge": "9" * 100_000}
WHY = {"cfg.num_hidden_layers": EN["state.link.int"].split("{")[0], "cfg.seed": EN["state.link.int"].split("{")[0],
       "cfg.vocab_size": EN["state.link.choice"].split("{")[0], "cfg.ffn": EN["state.link.choice"].split("{")[0],
       "cfg.norm_type": EN["state.link.choice"].split("{")[0],
       "cfg.tie_word_embeddings": EN["state.link.bool"]}


def _open(query: dict) -> AppTest:
    return open_page(query={"ui.lang": "English", **query}, lang=None, defaults=False, timeout=120)


@pytest.mark.parametrize("bad", list(BAD), ids=list(BAD))
def test_each_invalid_link_value_is_named_once_and_leaves_the_url(bad):
    value = BAD[bad]
    # a query string over 512 Ki characters is dropped whole by Streamlit: the 100 kB value goes in two params only
    params = PARAMS[:2] if bad == "huge" else PARAMS
    at = _open({p: value for p in params})
    assert not at.exception, [e.message for e in at.exception]
    warnings = [w.value for w in at.sidebar.warning]
    text = "\n".join(warnings)
    for p in params:
        assert text.count(f"(`{p}`)") == 1, (p, text[:600])  # one message per parameter
        line = next(m for m in text.split("\n\n") if f"(`{p}`)" in m)
        assert WHY[p] in line, line  # ... saying why
        assert p not in at.query_params, (p, str(at.query_params.get(p))[:40])  # the URL no longer carries it
        assert at.session_state[p] == DEFAULTS[p], p  # the control shows the app's default
    assert at.get("plotly_chart"), "the page still draws its charts"
    # dismissing the box removes the messages; they do not come back on the next run
    at.sidebar.button(key="state.dismiss").click().run()
    assert not at.sidebar.warning
    at.run()
    assert not at.sidebar.warning


def test_a_valid_link_value_next_to_bad_ones_is_kept():
    at = _open({"cfg.num_hidden_layers": "3.5", "cfg.hidden_size": "32", "cfg.ffn": "SwiGLU", "cfg.seed": "nan"})
    assert not at.exception
    assert (at.session_state["cfg.hidden_size"], at.session_state["cfg.ffn"]) == (32, "swiglu")
    # the label SwiGLU is read as the option's id, which the address bar then carries
    assert at.query_params.get("cfg.hidden_size") == "32" and at.query_params.get("cfg.ffn") == "swiglu"
    assert "cfg.num_hidden_layers" not in at.query_params and "cfg.seed" not in at.query_params


@pytest.mark.parametrize("lang", ["English", "中文"])
def test_translated_options_show_one_language_and_links_carry_their_id(lang):
    """Issue 10: "learned 可学习", "文本 text" were bilingual in both languages. Each language now shows only its
    own label, and the link carries the option's id, so a link made in one language opens in the other."""
    code = {"English": "en", "中文": "zh"}[lang]
    L, other = catalogs()[code], catalogs()["zh" if code == "en" else "en"]
    at = _open({"ui.lang": lang, "cfg.position_embedding": "rope", "input.mode": "random"})
    assert not at.exception and not at.sidebar.warning
    assert (at.session_state["cfg.position_embedding"], at.session_state["input.mode"]) == ("rope", "random")
    select = at.sidebar.selectbox(key=f"cfg.position_embedding.{code}")
    radio = at.sidebar.radio(key=f"input.mode.{code}")
    assert select.options == [L[f"cfg.position_embedding.{v}"] for v in ("learned", "sinusoidal", "rope", "none")]
    assert radio.options == [L["input.mode.text"], L["input.mode.random"]]
    for label in select.options + radio.options:  # one language only: no label of the other catalog inside
        assert not any(other[f"cfg.position_embedding.{v}"] in label for v in ("learned", "sinusoidal", "none")), label
        assert other["input.mode.random"] not in label and other["input.mode.text"] not in label, label
    assert (at.query_params["cfg.position_embedding"], at.query_params["input.mode"]) == ("rope", "random")
    # picking another option in this language writes its id; the default leaves the URL
    select.set_value("sinusoidal").run()
    radio = at.sidebar.radio(key=f"input.mode.{code}")
    radio.set_value("text").run()
    assert at.query_params["cfg.position_embedding"] == "sinusoidal" and "input.mode" not in at.query_params


def test_older_links_with_bilingual_labels_still_open():
    at = _open({"cfg.position_embedding": "RoPE", "input.mode": "随机 id / random ids"})
    assert not at.exception and not at.sidebar.warning
    assert (at.session_state["cfg.position_embedding"], at.session_state["input.mode"]) == ("rope", "random")
    assert (at.query_params["cfg.position_embedding"], at.query_params["input.mode"]) == ("rope", "random")
    bad = _open({"cfg.position_embedding": "learned 可学习x"})
    assert "(`cfg.position_embedding`)" in bad.sidebar.warning[0].value
    assert "cfg.position_embedding" not in bad.query_params and bad.session_state["cfg.position_embedding"] == "learned"


# ---- issue 22: one form for every choice control, decimals checked like whole numbers, unknown parameters ----
IDS = {"cfg.norm_type": "rmsnorm", "cfg.norm_position": "post", "cfg.ffn": "geglu_new", "cfg.vocab_size": "512",
       "cfg.initializer_range": "0.05", "cfg.position_embedding": "rope", "input.mode": "random"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_choice_control_takes_its_id_and_writes_it(lang):
    """``cfg.norm_type=rmsnorm`` (the option's id) was dropped with a message: that control wanted its label
    ``RMSNorm``. Every choice control now reads its id, and the address bar carries the id."""
    at = _open({"ui.lang": lang, **IDS})
    assert not at.exception, [e.message for e in at.exception]
    assert not at.sidebar.warning, [w.value for w in at.sidebar.warning]
    for key, raw in IDS.items():
        assert str(at.session_state[key]) == str(DEFAULTS[key].__class__(raw)), key
        assert at.query_params[key] == raw, (key, at.query_params.get(key))
    # the language switch too: its id, not its label (absent when it is the browser's own language, English here)
    assert at.query_params.get("ui.lang") == (None if lang == "en" else "zh")


def test_choice_labels_in_either_language_are_aliases_of_the_id():
    zh, en = catalogs()["zh"], catalogs()["en"]
    at = _open({"ui.lang": "中文", "cfg.norm_type": "RMSNorm", "cfg.position_embedding": en["cfg.position_embedding.rope"],
                "input.mode": zh["input.mode.random"]})
    assert not at.exception and not at.sidebar.warning, [w.value for w in at.sidebar.warning]
    assert [at.session_state[k] for k in ("ui.lang", "cfg.norm_type", "cfg.position_embedding", "input.mode")] == \
        ["zh", "rmsnorm", "rope", "random"]
    assert [at.query_params[k] for k in ("ui.lang", "cfg.norm_type", "cfg.position_embedding", "input.mode")] == \
        ["zh", "rmsnorm", "rope", "random"]


def test_a_page_choice_takes_its_id_in_either_language():
    """A page's own choice (the attention stage, a segmented control with translated labels) is linked by id."""
    at = open_page("attention", via="switch", query={"ui.lang": "中文", "attn.stage": "masked"}, lang=None,
                   defaults=False, timeout=120)
    assert not at.exception and not at.sidebar.warning
    assert at.session_state["attn.stage"] == "masked" and at.query_params["attn.stage"] == "masked"
    label = catalogs()["en"]["attn.stage.masked"]
    again = open_page("attention", via="switch", query={"ui.lang": "中文", "attn.stage": label}, lang=None,
                      defaults=False, timeout=120)
    assert again.session_state["attn.stage"] == "masked" and again.query_params["attn.stage"] == "masked"


DECIMALS = {"gen.temperature": (0.8, "0.1", "3"), "gen.top_p": (0.9, "0.05", "1"), "gen.min_p": (0.05, "0", "0.5")}


@pytest.mark.parametrize("bad", ["nan", "-1", "abc", "3.05", "inf"])
def test_a_bad_decimal_value_gets_the_message_a_bad_whole_number_gets(bad):
    """Bad decimals were dropped silently while bad whole numbers were named: now both are named once, with
    the range, and leave the address bar; the slider shows the page's default."""
    query = {"ui.lang": "English", **{k: bad for k in DECIMALS}, "gen.top_k": bad}
    at = open_page("generate", via="switch", query=query, lang=None, defaults=False, timeout=120)
    assert not at.exception, [e.message for e in at.exception]
    text = "\n".join(w.value for w in at.sidebar.warning)
    for key, (default, lo, hi) in {**DECIMALS, "gen.top_k": (20, "0", "100")}.items():
        assert text.count(f"(`{key}`)") == 1, (key, text)
        line = next(m for m in text.split("\n\n") if f"(`{key}`)" in m)
        assert line.startswith("The link's **") and f"from {lo} to {hi}" in line, line
        assert key not in at.query_params and at.session_state[key] == default, key


def test_a_good_decimal_value_is_kept():
    at = open_page("generate", via="switch", query={"ui.lang": "English", "gen.temperature": "1.3", "gen.top_p": "0.5"},
                   lang=None, defaults=False, timeout=120)
    assert not at.exception and not at.sidebar.warning
    assert at.session_state["gen.temperature"] == pytest.approx(1.3) and at.session_state["gen.top_p"] == 0.5
    assert at.query_params["gen.temperature"] == "1.3"


def test_parameters_the_app_does_not_read_are_named_once_and_removed():
    at = _open({"cfg.num_hidden_layers": "3", "cfg.bogus": "1", "utm_source": "mail", "gen_temperature": "2"})
    assert not at.exception
    text = "\n".join(w.value for w in at.sidebar.warning)
    for key in ("cfg.bogus", "utm_source", "gen_temperature"):
        assert text.count(f"`{key}`") == 1, (key, text)
        assert key not in at.query_params
    assert at.query_params["cfg.num_hidden_layers"] == "3" and at.session_state["cfg.num_hidden_layers"] == 3
    at.run()
    assert text == "\n".join(w.value for w in at.sidebar.warning)  # named once, not again on the next run


def test_every_parameter_a_page_reads_is_registered():
    """The list of parameters the app reads (ui/state.py LINK_PARAMS) holds every key a page's links check."""
    from ui.state import CHECKED_KEY, LINK_PARAMS

    for page in ("overview", "attention", "heads", "loss", "next_token", "generate", "lens", "prepost", "train"):
        at = open_page(page, via="script", lang="en", timeout=120)
        assert not at.exception, page
        assert set(at.session_state[CHECKED_KEY]) <= LINK_PARAMS, (page, set(at.session_state[CHECKED_KEY]) - LINK_PARAMS)


def test_the_init_std_range_reads_as_numbers():
    """The Init std slider's ends read "0.002 … 1e+20" (Python's float formatting): now 0.002 … 10²⁰, and the
    link still carries the number."""
    at = _open({"cfg.initializer_range": "1e20"})
    slider = at.sidebar.select_slider(key="cfg.initializer_range.en")
    assert (slider.options[0], slider.options[-1]) == ("0.002", "10²⁰")
    assert not any("e+" in o or "e-" in o for o in slider.options), slider.options
    assert at.session_state["cfg.initializer_range"] == 1e20 and float(at.query_params["cfg.initializer_range"]) == 1e20
