"""How a sentence names a token (ui/tokens.py ``phrase``), in both languages, on pieces of hand-computed bytes
(床 = E5 BA 8A)."""

import pytest

import ui.i18n
from engine.tokenizer.pieces import token_pieces
from ui.tokens import phrase, text

BED = bytes([0xE5, 0xBA, 0x8A])


@pytest.fixture(params=["en", "zh"])
def lang(request, monkeypatch):
    monkeypatch.setattr(ui.i18n, "current_lang", lambda: request.param)
    return request.param


def test_a_byte_piece_is_described_never_quoted(lang):
    first, second = token_pieces([BED[:2], BED[2:]])
    expected = {"en": ("2 of the 3 bytes of 床", "1 of the 3 bytes of 床"),
                "zh": ("“床”的 3 个字节中的 2 个", "“床”的 3 个字节中的 1 个")}[lang]
    assert (phrase(first), phrase(second)) == expected


def test_whole_characters_are_quoted_escaped_for_markdown(lang):
    (whole,) = token_pieces([" [a]".encode()])
    assert phrase(whole) == "“␣\\[a\\]”"  # the space's mark, markdown punctuation escaped
    assert phrase("#17") == "“\\#17”"  # random-id mode


def test_mixed_and_cut_pieces(lang):
    mixed, _ = token_pieces([b"a" + BED[:1], BED[1:]])
    (cut,) = token_pieces([BED[:2]])
    if lang == "en":
        assert phrase(mixed) == "“a” and 1 of the 3 bytes of 床"
        assert phrase(cut) == "the bytes ‹E5 BA›, no whole character"
    else:
        assert phrase(mixed) == "“a”加上“床”的 3 个字节中的 1 个"
        assert phrase(cut) == "字节 ‹E5 BA›（不是完整的字符）"


def test_text_writes_each_character_once_and_ids_with_spaces():
    assert text(token_pieces([b"x" + BED[:2], BED[2:] + b"\n"])) == "x床\n"
    assert text(["#1", "#2"]) == "#1 #2"
