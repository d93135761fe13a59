"""Every page on SmolLM2 (a byte-level BPE) with the default Chinese poem: token strings by the one display rule.

SmolLM2 splits most of the poem's characters into UTF-8 byte pieces (床 = E5 BA + 8A). Before the rule, the
sidebar showed 19 of the 43 tokens as blanks, the Head roles sentence named token 0 “床”, the Generate caption named
a key “∅” and the lens table showed ``<0xE5><0xBA>``. Each page is opened once (a module-scoped fixture) and what
it gives Streamlit is read back: its text, its tables, its charts' tick labels, cell texts and hovers.
"""

from __future__ import annotations

import html
import json
import re

import pytest

from tests.page_helpers import figures, open_page, recording_charts
from settings.schema import DEFAULTS

pytestmark = pytest.mark.smollm2

PAGES = ["overview", "norms", "prepost", "attention", "heads", "loss", "next_token", "generate", "lens", "train"]
POEM = DEFAULTS["input.text"]
SPLIT = set("床明月光疑地霜举头望低思故乡")  # the poem's characters SmolLM2 spreads over two or three tokens


def _page_record(at, record) -> dict:
    main = [e.value for kind in ("title", "subheader", "header", "markdown", "caption", "info", "warning", "success")
            for e in at.get(kind)]
    side = [e.value for kind in ("markdown", "caption", "info", "warning") for e in at.sidebar.get(kind)]
    tables = [d.value for d in at.dataframe] + [c.data for c in record.calls if _has_frame(c)]
    return {"text": main, "sidebar": side, "tables": tables, "figures": figures(at),
            "exception": [e.value for e in at.exception], "errors": [e.value for e in at.error]}


def _has_frame(call) -> bool:
    try:
        call.data
        return True
    except StopIteration:
        return False


@pytest.fixture(scope="module")
def pages() -> dict:
    out = {}
    with recording_charts() as record:
        for page in PAGES:
            extra = {"generate": {"gen.steps": 3, "gen.sample": False},  # and the sections SmolLM2 computes on request:
                     "next_token": {"next.continuation_asked": True}, "prepost": {"prepost.grads_asked": True},
                     "lens": {"lens.all_asked": True}}.get(page, {})
            at = open_page(page, via="script", defaults=False, timeout=600,
                           **{"model.source": "checkpoint", **extra})
            out[page] = _page_record(at, record)
    return out


def _strings(value) -> list[str]:
    """Every string in a figure dict / list / DataFrame (cells and column names)."""
    import pandas as pd

    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, pd.DataFrame):
        cells = [v for col in value.columns if value[col].dtype == object for v in value[col] if isinstance(v, str)]
        return [str(c) for c in value.columns] + cells
    return []


def _ticks(fig: dict) -> list[str]:
    return [html.unescape(str(s)) for k, axis in fig.get("layout", {}).items() if k.startswith(("xaxis", "yaxis"))
            for s in axis.get("ticktext", []) or []]


@pytest.mark.parametrize("page", PAGES)
def test_no_replacement_character_no_blank_label_no_other_notation(pages, page):
    got = pages[page]
    assert not got["exception"] and not got["errors"], (got["exception"], got["errors"])
    everything = got["text"] + got["sidebar"] + _strings(got["tables"]) + _strings(got["figures"])
    for s in everything:
        assert "\ufffd" not in s and "<0x" not in s and "&lt;0x" not in s and "∅" not in s, s[:300]
    sidebar = next(s for s in got["sidebar"] if s.startswith("43 tokens:"))
    labels = re.findall(r"`([^`]*)`", sidebar)
    assert len(labels) == 43 and all(lab.strip() for lab in labels), labels
    assert labels[:2] == ["‹E5 BA›床₁/₂", "‹8A›床₂/₂"]  # 床 = E5 BA 8A, split 2 + 1
    for fig in got["figures"]:
        for tick in _ticks(fig):
            assert tick.strip() and not re.fullmatch(r"\d+\.?\s+", tick), (page, tick)  # "12 " = a blank label


@pytest.mark.parametrize("page", PAGES)
def test_no_byte_piece_is_quoted_as_a_character(pages, page):
    for s in pages[page]["text"]:
        for quoted in re.findall(r"“([^”]{1,12})”", s):
            assert not SPLIT & set(quoted), (page, quoted, s[:300])


@pytest.mark.parametrize("page", ["next_token", "generate"])
def test_the_highlighted_continuation_stays_one_html_block(pages, page):
    """SmolLM2 continues the poem with blank lines ("\\n\\n在疑中..."): a blank line inside the HTML block ended it,
    and the rest of the text (and the closing tags) showed as markdown or a code block."""
    blocks = [s for s in pages[page]["text"] if s.startswith("<div")]
    assert len(blocks) == 1 and "<mark" in blocks[0] and blocks[0].endswith("</mark></div>")
    assert "\n" not in blocks[0] and "&#10;" in blocks[0]  # its line breaks, as entities
    prompt, generated = blocks[0].split("<mark", 1)
    # a generated line break is marked (a continuation of blank lines showed as empty highlighted lines); the
    # prompt's own line breaks are not
    assert generated.count("&#10;") == generated.count("⏎&#10;") > 0 and "⏎" not in prompt


def test_sentences_name_the_bytes(pages):
    heads = " ".join(pages["heads"]["text"])
    assert "on the first token (2 of the 3 bytes of 床)" in heads
    assert "Row 0 (the first token, 2 of the 3 bytes of 床)" in " ".join(pages["attention"]["text"])
    generate = " ".join(pages["generate"]["text"])
    caption = next(s for s in pages["generate"]["text"] if "largest weight" in s)
    key = int(re.search(r"goes to key (\d+) \(", caption).group(1))
    assert key == 24 and "goes to key 24 (1 of the 3 bytes of 头)" in caption  # token 24 is B4, the end of 头
    assert re.search(r"Step 3: position 45 is “.”", generate)  # greedy picks whole characters here


# ---- the languages SmolLM2 was trained on ----------------------------------------------------------------------
AFFECTED = ["overview", "attention", "heads", "loss", "next_token", "generate", "lens"]  # the model's behaviour
NOTICE_EN, NOTICE_ZH = "was trained mostly on English", "主要用英语训练"


@pytest.mark.parametrize("page", PAGES)
def test_the_language_notice_appears_once_on_each_affected_page(pages, page):
    notices = [s for s in pages[page]["text"] if NOTICE_EN in s]
    assert len(notices) == (1 if page in AFFECTED else 0), notices
    if notices:  # its numbers: every letter of the poem is CJK; 36 of SmolLM2's 43 tokens are byte pieces
        assert "100.0% of the letters" in notices[0] and "36 of its 43 tokens are byte pieces" in notices[0]


def test_an_example_prompt_replaces_the_text_and_the_notice_goes():
    at = open_page("attention", via="script", defaults=False, timeout=600, lang="zh", **{"model.source": "checkpoint"})
    assert len([i.value for i in at.info if NOTICE_ZH in i.value]) == 1  # in the reader's language
    assert not any(NOTICE_EN in i.value for i in at.info)
    at.button(key="examples.notice.sentence").click().run()
    assert not at.exception
    assert at.session_state["input.text"].startswith("The capital of France is Paris.")
    assert not any(NOTICE_ZH in i.value for i in at.info)  # an English prompt: no notice
    at.sidebar.button(key="examples.sidebar.code").click().run()  # the text box's own example prompts
    assert at.session_state["input.text"].startswith("def fibonacci(n):")
    assert not any(NOTICE_ZH in i.value for i in at.info)
    caption = next(c.value for c in at.sidebar.caption if "个 token" in c.value)
    assert caption.count("`def`") == 1  # the new text's tokens are shown
