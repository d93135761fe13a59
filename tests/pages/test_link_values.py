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
    assert at.query_params.get("cfg.hidden_size") == "32" and at.query_params.get("cfg.ffn") == "SwiGLU"
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
