"""The one display rule for token strings (``engine.tokenizer.pieces.token_pieces``), against hand-computed UTF-8
bytes: 床 = E5 BA 8A, 😀 = F0 9F 98 80 (the Unicode standard's encoding, written out here, not computed)."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer, decoders, models

from engine.tokenizer import TextTokenizer, bundled_tokenizer
from engine.tokenizer.pieces import token_pieces

BED = bytes([0xE5, 0xBA, 0x8A])  # 床
SMILE = bytes([0xF0, 0x9F, 0x98, 0x80])  # 😀


def labels(units, specials=()):
    return [p.label for p in token_pieces(units, specials)]


def test_hand_bytes_are_the_utf8_encoding():
    assert "床".encode("utf-8") == BED and "😀".encode("utf-8") == SMILE


def test_a_character_split_two_plus_one_and_one_plus_two():
    assert labels([BED[:2], BED[2:]]) == ["‹E5 BA›床₁/₂", "‹8A›床₂/₂"]
    assert labels([BED[:1], BED[1:]]) == ["‹E5›床₁/₂", "‹BA 8A›床₂/₂"]
    assert labels([BED[:1], BED[1:2], BED[2:]]) == ["‹E5›床₁/₃", "‹BA›床₂/₃", "‹8A›床₃/₃"]


def test_whole_characters_are_themselves():
    assert labels([BED + "前".encode(), "明月".encode()]) == ["床前", "明月"]
    pieces = token_pieces([BED, b"ab"])
    assert all(p.whole for p in pieces) and [p.text for p in pieces] == ["床", "ab"]


def test_a_four_byte_emoji_split_over_three_tokens():
    assert labels([SMILE[:1], SMILE[1:3], SMILE[3:]]) == ["‹F0›😀₁/₃", "‹9F 98›😀₂/₃", "‹80›😀₃/₃"]


def test_whole_characters_next_to_part_of_one():
    assert labels([b"a" + BED[:1], BED[1:] + b"b"]) == ["a‹E5›床₁/₂", "‹BA 8A›床₂/₂b"]
    first = token_pieces([b"a" + BED[:1], BED[1:] + b"b"])[0]
    assert not first.whole and [s.partial for s in first.segments] == [False, True]


def test_bytes_of_no_known_character_are_bytes_only_never_replacement_characters():
    assert labels([BED[:2]]) == ["‹E5 BA›"]  # cut off at the end of the sequence
    assert labels([BED[2:]]) == ["‹8A›"]  # a continuation byte on its own
    assert labels([BED[:2], b"x"]) == ["‹E5 BA›", "x"]  # not completed: the next token is no continuation
    assert all("\ufffd" not in p.text for p in token_pieces([BED[:2], BED[2:], BED[:1]]))


def test_whitespace_keeps_its_marks_and_no_label_is_blank():
    assert labels([b" the", b"\n", b"\t", b"\r\n", " \u00a0".encode(), b""]) == [
        "␣the", "⏎", "⇥", "␍⏎", "␣[U+00A0]", "∅"]
    assert labels(["  ", ""]) == ["␣␣", "∅"]  # text tokens (character-level tokenizers) too


def test_special_tokens_show_their_name_and_end_the_byte_stream():
    assert labels([BED[:2], None, BED[2:]], ["", "<|endoftext|>", ""]) == ["‹E5 BA›", "<|endoftext|>", "‹8A›"]


def test_text_writes_a_split_character_once_on_the_token_that_completes_it():
    pieces = token_pieces([b"a" + BED[:1], BED[1:2], BED[2:] + b" "])
    assert [p.text for p in pieces] == ["a", "", "床 "]
    assert [p.text for p in token_pieces([BED[:2]])] == ["‹E5 BA›"]


def test_a_character_level_tokenizer_is_unaffected():
    tok = bundled_tokenizer(4000)
    assert not tok.byte_level
    ids = tok.encode("床前明月光，疑是地上霜。")
    assert tok.token_strings(ids) == tok.raw_tokens(ids)  # its tokens are whole characters: shown as stored
    assert "".join(tok.token_strings(ids)) == "床前明月光，疑是地上霜。"
    assert all(p.whole for p in tok.pieces(ids))


def test_byte_fallback_tokens_are_bytes_and_metaspace_is_a_space():
    vocab = {"<0xE5>": 0, "<0xBA>": 1, "<0x8A>": 2, "▁a": 3, "a": 4, "<unk>": 5}
    hf = Tokenizer(models.BPE(vocab=vocab, merges=[], byte_fallback=True, unk_token="<unk>"))
    hf.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok = TextTokenizer(hf)
    assert tok.token_strings([0, 1, 2, 3]) == ["‹E5›床₁/₃", "‹BA›床₂/₃", "‹8A›床₃/₃", "␣a"]


def test_a_candidate_is_labelled_as_the_token_after_its_prefix():
    tok = bundled_tokenizer(50257)  # GPT-2-sized bundled tokenizer: byte level, one byte per CJK token
    ids = tok.encode("床")
    assert len(ids) == 3
    assert [p.label for p in tok.pieces_after(ids[:2], [ids[2]])] == ["‹8A›床₃/₃"]
    assert [p.label for p in tok.pieces_after([], [ids[2]])] == ["‹8A›"]
    long_prefix = tok.encode("明月光") + ids[:2]  # only the last tokens of a long prefix matter
    assert [p.label for p in tok.pieces_after(long_prefix, [ids[2]])] == ["‹8A›床₃/₃"]


@pytest.mark.smollm2
def test_smollm2_default_poem():
    """The issue's case: SmolLM2's BPE splits 床 into E5 BA + 8A, 头 into E5 A4 + B4."""
    tok = TextTokenizer.from_pretrained("smollm2-135m")
    text = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
    ids = tok.encode(text)
    strings = tok.token_strings(ids)
    assert len(ids) == 43 and strings[:3] == ["‹E5 BA›床₁/₂", "‹8A›床₂/₂", "前"]
    assert strings[23:25] == ["‹E5 A4›头₁/₂", "‹B4›头₂/₂"]
    assert all(s.strip() and "\ufffd" not in s for s in strings)
    assert "".join(p.text for p in tok.pieces(ids)) == text
