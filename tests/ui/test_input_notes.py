"""The sidebar says which tokenizer made the tokens, and the 猫吃鱼 walkthrough labels its rows with the tutorial's
own words (random vectors, as in the tutorial)."""

from __future__ import annotations

import pytest

from tests.page_helpers import open_page, rerun
from ui.figures.attention import attention_heatmap
from ui.escape import md_code


def sidebar_text(at) -> str:
    return "\n".join(c.value for c in at.sidebar.caption)


@pytest.mark.parametrize("lang, random_words", [("en", "random vectors"), ("zh", "随机向量")])
def test_walkthrough_preset_rows_are_cat_eats_fish(lang, random_words, charts):
    at = open_page("attention", **{"ui.lang": lang})
    at.selectbox(key=f"cfg.preset.{lang}").set_value("gpt2_walkthrough").run()
    at = rerun(at, **{"ui.lang": lang})
    assert not at.exception, at.exception
    assert at.session_state["input.mode"] == "random" and at.session_state["input.random_len"] == 3
    assert charts(attention_heatmap).layout["yaxis"]["ticktext"] == ["0 猫", "1 吃", "2 鱼"]
    note = sidebar_text(at)
    assert "猫 吃 鱼" in note and random_words in note
    # another length is no longer the tutorial's input: plain ids again
    at = rerun(at, **{"ui.lang": lang, "input.random_len": 4})
    assert all(label.split(" ")[1].startswith("#") for label in charts(attention_heatmap).layout["yaxis"]["ticktext"])


def test_sidebar_names_the_tokenizer_in_use():
    at = open_page("overview")
    assert "character-level BPE trained on the bundled corpus" in sidebar_text(at)
    # GPT-2's vocabulary size (a small model, so the test stays light): the byte-level tokenizer, said so
    at = rerun(at, **{"cfg.vocab_size": 50257, "cfg.hidden_size": 16, "cfg.num_attention_heads": 2,
                      "cfg.num_key_value_heads": 2, "cfg.intermediate_size": 32})
    assert not at.exception, at.exception
    note = sidebar_text(at)
    assert "byte-level BPE" in note and "trained on the bundled English text" in note
    assert "not GPT-2's" in note and "3 tokens per character" in note
    # 床 = E5 BA 8A, one byte per token: each named by its character and which of its 3 tokens it is
    pieces = " · ".join(md_code(p) for p in ["‹E5›床₁/₃", "‹BA›床₂/₃", "‹8A›床₃/₃"])
    assert pieces in note


UNK_TEXT = "模型的注意力😀：床前明月光，的确。"


def _expected_unknown(text: str, vocab: int) -> list[str]:
    """The characters the bundled tokenizer itself encodes as [UNK], each encoded on its own (independent of the
    offsets the app reads)."""
    from engine.tokenizer import bundled_tokenizer

    tok = bundled_tokenizer(vocab)
    return [c for c in text if tok.raw_tokens(tok.encode(c)) == ["[UNK]"]]


@pytest.mark.parametrize("page, lang", [("attention", "en"), ("generate", "zh")])
def test_characters_that_became_unk_are_named_on_the_page(page, lang):
    """Issue 22: 的, 模, 型, 注 and emoji became [UNK] and only the sidebar's token list showed it. The page says
    how many characters, which, and what to do."""
    expected = _expected_unknown(UNK_TEXT, 4000)
    assert {"模", "型", "的", "注", "😀"} <= set(expected)  # the characters (the test would be empty else)
    at = open_page(page, **{"ui.lang": lang, "input.text": UNK_TEXT})
    assert not at.exception, at.exception
    note = next(c.value for c in at.main.caption if "[UNK]" in c.value)  # on the page, not only the sidebar
    distinct = list(dict.fromkeys(expected))
    count = f"{len(expected)} character(s) of the text ({len(distinct)} different)" if lang == "en" else \
        f"文本中有 {len(expected)} 个字符（{len(distinct)} 种）"
    assert count in note, note
    assert " ".join(md_code(c) for c in distinct) in note, note
    assert ("SmolLM2" in note) and (("a larger “Vocabulary size V”" in note) if lang == "en" else ("调大“词表大小 V”" in note))


def test_no_unk_notice_for_text_the_tokenizer_knows():
    at = open_page("attention", **{"input.text": "床前明月光"})
    assert _expected_unknown("床前明月光", 4000) == []
    assert not any("[UNK]" in c.value for c in at.main.caption)
