"""Tests for engine/tokenizer/ and the bundled corpus in engine/data (offline only)."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from tokenizers import ByteLevelBPETokenizer

from engine import tokenizer as T
from engine.tokenizer import CORPUS_FILES, TextTokenizer, load_corpus, train_bpe

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "engine" / "data"
LINE_ZH = "床前明月光，疑是地上霜。"


# ----------------------------------------------------------------------------- corpus
def test_corpus_files_utf8_nonempty_and_small():
    assert set(CORPUS_FILES) == {"zh", "en"}
    total = 0
    for path in CORPUS_FILES.values():
        raw = path.read_bytes()
        assert len(raw) > 50_000, path
        raw.decode("utf-8")  # strict: raises on invalid UTF-8
        assert b"\x1b" not in raw and b"\r" not in raw, path  # no ANSI colours / CRLF
        total += len(raw)
    assert total < 600_000


def test_corpus_readme_names_sources_and_licences():
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for needle in ("fortunes-zh", "bible-kjv-text", "tang_poems.txt", "english.txt",
                   "public domain", "GPL", "copyright"):
        assert needle.lower() in readme.lower(), needle


def test_tang_corpus_structure():
    zh = load_corpus("zh")
    assert LINE_ZH in zh.splitlines()
    poems = zh.strip("\n").split("\n\n")
    assert len(poems) > 300
    for poem in poems:
        lines = poem.split("\n")
        assert lines[0].startswith("《") and lines[0].endswith("》"), lines[0]
        assert lines[1].startswith("作者："), lines[1]
        assert len(lines) >= 3
    # Most body lines of 5-character regulated verse: "，" right after the 5th character.
    body = [ln for p in poems for ln in p.split("\n")[2:]]
    five = [ln for ln in body if len(ln) == 12 and ln[5] == "，" and ln[11] == "。"]
    assert len(five) > 300


def test_load_corpus_names():
    zh, en, all_ = load_corpus("zh"), load_corpus("en"), load_corpus("all")
    assert load_corpus() == all_
    assert zh in all_ and en in all_
    assert "In the beginning God created the heaven and the earth." in en
    with pytest.raises(ValueError, match="klingon"):
        load_corpus("klingon")


# ----------------------------------------------------------------------------- train_bpe
def test_round_trip_chinese_line():
    tok = train_bpe(1000)
    ids = tok.encode(LINE_ZH)
    assert tok.unk_token_id not in ids
    assert tok.decode(ids) == LINE_ZH


def test_round_trip_english_from_corpus():
    tok = train_bpe(1000)
    en = load_corpus("en")
    # A multi-line excerpt with spaces, punctuation and newlines.
    start = en.index("And God said, Let there be light")
    excerpt = en[start : start + 600]
    ids = tok.encode(excerpt)
    assert tok.decode(ids) == excerpt
    assert "\n" in excerpt and tok.unk_token_id not in ids


def test_round_trip_whole_corpus_large_vocab():
    tok = train_bpe(8000)
    text = load_corpus("all")
    ids = tok.encode(text)
    assert tok.unk_token_id not in ids  # whole alphabet fits in 8000
    assert tok.decode(ids) == text
    assert len(ids) < len(text)  # merges compress


def test_chinese_characters_stay_whole():
    tok = train_bpe(4000)
    line = "举头望明月，低头思故乡。"
    enc = tok.tokenizer.encode(line, add_special_tokens=False)
    assert "".join(enc.tokens) == line
    # Offsets are in characters: each piece is exactly a run of whole characters of the line.
    for piece, (s, e) in zip(enc.tokens, enc.offsets):
        assert line[s:e] == piece and e > s
    # Independent check over the whole vocabulary: no byte-level pieces, every symbol of every
    # token is a character that occurs in the corpus (so no token holds part of a character).
    corpus_chars = set(load_corpus("all"))
    for token in tok.get_vocab():
        if token != T.UNK_TOKEN:
            assert set(token) <= corpus_chars, token
    # The CJK characters of the line are whole tokens or inside merges of whole characters.
    pieces = tok.token_strings(tok.encode(line))
    assert "".join(pieces) == line
    for p in pieces:
        assert all(unicodedata.name(c).startswith(("CJK", "FULLWIDTH", "IDEOGRAPHIC")) for c in p)


def test_punctuation_is_its_own_token():
    tok = train_bpe(8000)
    pieces = tok.token_strings(tok.encode(LINE_ZH))
    assert "，" in pieces and "。" in pieces
    assert pieces[-1] == "。"


@pytest.mark.parametrize("text", ["𠀀𠀁", "😀", "ᚠᛇ"])
def test_unseen_characters_map_to_unk(text):
    tok = train_bpe(1000)
    assert set(text).isdisjoint(load_corpus("all"))
    ids = tok.encode(text)
    assert ids == [tok.unk_token_id] * len(text)
    assert tok.decode(ids) == "[UNK]" * len(text)
    assert tok.decode(ids, skip_special_tokens=True) == ""


def test_unk_in_the_middle_keeps_neighbours():
    tok = train_bpe(1000)
    ids = tok.encode("月😀光")
    assert tok.unk_token_id in ids
    assert tok.decode(ids) == "月[UNK]光"


@pytest.mark.parametrize("size", [2, 16, 30, 99, 256, 1000, 4000, 8000])
def test_vocab_size_never_exceeds_request(size):
    tok = train_bpe(size)
    assert tok.vocab_size <= size
    assert tok.vocab_size == size  # the corpus has enough pairs for all of these
    ids = tok.encode(load_corpus("zh")[:2000])
    assert max(ids) < tok.vocab_size and min(ids) >= 0
    assert tok.unk_token_id == 0


def test_small_vocab_keeps_most_frequent_characters():
    from collections import Counter

    tok = train_bpe(30)
    top = [c for c, _ in sorted(Counter(load_corpus("all")).items(), key=lambda kv: (-kv[1], kv[0]))]
    vocab = tok.get_vocab()
    for c in top[:29]:
        assert c in vocab, repr(c)
    assert top[29] not in vocab or len(top[29]) > 1


def test_per_corpus_training():
    zh = train_bpe(500, "zh")
    en = train_bpe(500, "en")
    assert zh.vocab_size == en.vocab_size == 500
    assert "，" in zh.get_vocab() and "，" not in en.get_vocab()
    assert "e" in en.get_vocab()


def test_training_is_cached_and_deterministic():
    a = train_bpe(777)
    assert train_bpe(777) is a
    T._train_bpe_cached.cache_clear()
    b = train_bpe(777)
    assert b is not a
    assert a.get_vocab() == b.get_vocab()
    assert a.tokenizer.to_str() == b.tokenizer.to_str()


def test_training_deterministic_across_processes():
    code = (
        "import hashlib\nfrom engine.tokenizer import train_bpe\n"
        "print(*(hashlib.sha1(train_bpe(v).tokenizer.to_str().encode()).hexdigest() "
        "for v in (16, 99, 2000)))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
            env={"PYTHONHASHSEED": str(seed), "PATH": "/usr/bin:/bin"},
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(outs) == 1


@pytest.mark.parametrize("bad", [-5, 0, 1])
def test_too_small_vocab_raises(bad):
    with pytest.raises(ValueError, match=f"vocab_size={bad}"):
        train_bpe(bad)


def test_bad_arguments():
    with pytest.raises(TypeError):
        train_bpe(100.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nope"):
        train_bpe(100, "nope")
    tok = train_bpe(100)
    with pytest.raises(ValueError, match="out of range"):
        tok.decode([tok.vocab_size])
    with pytest.raises(ValueError, match="out of range"):
        tok.token_strings([-1])


def test_newline_shown_as_its_mark_for_char_level():
    tok = train_bpe(1000)
    pieces = tok.token_strings(tok.encode("光。\n举"))
    assert "".join(pieces) == "光。⏎举"


def test_train_8000_is_fast():
    import time

    T._train_bpe_cached.cache_clear()
    t0 = time.perf_counter()
    train_bpe(8000)
    assert time.perf_counter() - t0 < 5.0


def test_saved_trained_tokenizer_reloads(tmp_path):
    tok = train_bpe(1000)
    tok.save(tmp_path / "mine")
    back = TextTokenizer.from_folder(tmp_path / "mine")
    text = LINE_ZH + "\nIn the beginning 😀"
    assert back.encode(text) == tok.encode(text)
    assert back.decode(back.encode(LINE_ZH)) == LINE_ZH
    assert back.unk_token_id == tok.unk_token_id and not back.byte_level


# ----------------------------------------------------------------------------- GPT-2 style
ENGLISH_LINES = [
    "In the beginning God created the heaven and the earth.",
    "And the earth was without form, and void; and darkness was upon the face of the deep.",
    "And God said, Let there be light: and there was light.",
    "And God saw the light, that it was good.",
] * 5


@pytest.fixture(scope="module")
def gpt2_folders(tmp_path_factory):
    """A tiny byte-level BPE trained offline, saved both as GPT-2 files and tokenizer.json."""
    bl = ByteLevelBPETokenizer()
    bl.train_from_iterator(
        ENGLISH_LINES, vocab_size=300, min_frequency=2, special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    gpt2 = tmp_path_factory.mktemp("gpt2_files")
    bl.save_model(str(gpt2))
    hf = tmp_path_factory.mktemp("hf_json")
    bl.save(str(hf / "tokenizer.json"))
    return gpt2, hf


def test_from_folder_both_formats_agree(gpt2_folders):
    gpt2, hf = gpt2_folders
    assert sorted(p.name for p in gpt2.iterdir()) == ["merges.txt", "vocab.json"]
    a = TextTokenizer.from_folder(gpt2)
    b = TextTokenizer.from_folder(hf)
    assert a.byte_level and b.byte_level
    assert a.unk_token_id is None and b.unk_token_id is None
    vocab = json.loads((gpt2 / "vocab.json").read_text(encoding="utf-8"))
    assert a.vocab_size == b.vocab_size == len(vocab)
    for text in ["And God said, Let there be light.", "床前明月光\n x  y", "😀 emoji"]:
        ids_a, ids_b = a.encode(text), b.encode(text)
        assert ids_a == ids_b
        assert a.decode(ids_a) == text == b.decode(ids_b)


def test_byte_level_token_strings_show_spaces(gpt2_folders):
    tok = TextTokenizer.from_folder(gpt2_folders[0])
    ids = tok.encode("And the earth\nwas")
    raw = tok.raw_tokens(ids)
    pieces = tok.token_strings(ids)
    assert any("Ġ" in r for r in raw) and any("Ċ" in r for r in raw)
    assert not any("Ġ" in p or "Ċ" in p for p in pieces)
    assert "␣the" in pieces
    assert "".join(pieces) == "And␣the␣earth⏎was"


def test_byte_level_cjk_split_displays_joined(gpt2_folders):
    tok = TextTokenizer.from_folder(gpt2_folders[0])
    ids = tok.encode("月光")
    # Never seen in training: each character is three byte tokens (UTF-8 E6 9C 88 ...).
    assert len(ids) == 6
    assert len(tok.raw_tokens(ids)[0]) == 1 and tok.raw_tokens(ids)[0] != "月"
    # 月 = E6 9C 88, 光 = E5 85 89: each token shows its byte and which third of which character it is
    assert tok.token_strings(ids) == ["‹E6›月₁/₃", "‹9C›月₂/₃", "‹88›月₃/₃", "‹E5›光₁/₃", "‹85›光₂/₃", "‹89›光₃/₃"]
    # Cut in the middle of a character: the bytes alone, never U+FFFD.
    assert tok.token_strings(ids[:2]) == ["‹E6›", "‹9C›"]


def test_byte_level_special_token_shown_verbatim(gpt2_folders):
    tok = TextTokenizer.from_folder(gpt2_folders[0])
    eot = tok.tokenizer.token_to_id("<|endoftext|>")
    ids = tok.encode("light") + [eot] + tok.encode("月")
    pieces = tok.token_strings(ids)
    assert "<|endoftext|>" in pieces
    assert pieces[-3:] == ["‹E6›月₁/₃", "‹9C›月₂/₃", "‹88›月₃/₃"]


def test_from_folder_missing_files(tmp_path):
    empty = tmp_path / "no_tokenizer_here"
    empty.mkdir()
    (empty / "vocab.json").write_text("{}", encoding="utf-8")  # merges.txt missing
    with pytest.raises(FileNotFoundError) as err:
        TextTokenizer.from_folder(empty)
    msg = str(err.value)
    assert "no_tokenizer_here" in msg and "tokenizer.json" in msg and "merges.txt" in msg
    with pytest.raises(FileNotFoundError, match="does_not_exist"):
        TextTokenizer.from_folder(tmp_path / "does_not_exist")


def test_module_does_not_import_ui_libraries():
    code = (
        "import sys, engine.tokenizer\n"
        "bad = [m for m in ('streamlit', 'plotly') if m in sys.modules]\n"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


# ---------------------------------------------------------------------------------------------------
# the GPT-2-small-shaped preset's tokenizer: byte-level, Chinese in UTF-8 bytes as in GPT-2
# ---------------------------------------------------------------------------------------------------


def test_gpt2_vocab_size_gets_a_byte_level_tokenizer_that_never_merges_chinese_characters():
    from engine import PRESETS
    from engine.tokenizer import GPT2_VOCAB_SIZE, bundled_tokenizer

    text = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
    tok = bundled_tokenizer(PRESETS["gpt2_small"].vocab_size)
    assert PRESETS["gpt2_small"].vocab_size == GPT2_VOCAB_SIZE and tok.byte_level
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert max(ids) < GPT2_VOCAB_SIZE and tok.unk_token_id is None
    # every token is a piece of one character's UTF-8 bytes: 3 bytes per CJK character -> 3 tokens each
    assert len(ids) == len(text.encode("utf-8")) == 3 * len(text)
    for raw in tok.raw_tokens(ids):
        assert len(raw) == 1  # one byte symbol of GPT-2's byte-to-unicode table
    # 床 = E5 BA 8A, 前 = E5 89 8D: one byte per token, each named by its character and part
    assert tok.token_strings(ids)[:6] == ["‹E5›床₁/₃", "‹BA›床₂/₃", "‹8A›床₃/₃", "‹E5›前₁/₃", "‹89›前₂/₃", "‹8D›前₃/₃"]
    # English is merged into words, as GPT-2 does: " the" is one token with its leading space
    assert tok.token_strings(tok.encode("In the beginning")) == ["In", "␣the", "␣beginning"]
    assert tok.get_vocab()["<|endoftext|>"] == tok.vocab_size - 1
    # other sizes keep the character-level BPE
    assert not bundled_tokenizer(4000).byte_level


def test_no_tokenizer_the_app_pairs_with_gpt2s_size_merges_a_tang_poem_into_phrases():
    """What the app used before: a character BPE with 50,257 entries made 床前明月光 one token."""
    from engine.tokenizer import bundled_tokenizer

    tok = bundled_tokenizer(50257)
    pieces = tok.pieces(tok.encode("床前明月光"))
    # every token is one run: one character, or bytes of one character (never a phrase of characters)
    assert all(len(p.segments) == 1 and (p.segments[0].partial or len(p.segments[0].text) <= 1) for p in pieces), pieces
