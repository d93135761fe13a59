"""Hostile and broken input: each case is driven through the engine and through the app (AppTest).

Engine side: the engine refuses impossible inputs with a ``ValueError`` whose message names the values (or,
where the documented contract is "NaN" / "not finite", it returns that and :func:`finite_report` flags it).
UI side: the page shows a clear message (st.error / st.warning / st.info / a caption), raises no exception,
keeps what the user entered, and still works on the next run with a valid value.

About ``at.exception``: ``.streamlit/config.toml`` sets ``client.showErrorDetails = "none"``. Checked with a
deliberately failing script (``test_apptest_reports_exceptions_with_redacted_details``): AppTest still lists
the exception in ``at.exception`` (its message is then the redacted "This app has encountered an error"), so
the ``not at.exception`` asserts below are meaningful. This module turns details on while it runs, so a
failure shows the real message.
"""

from __future__ import annotations

import json
import os
import pickle
import re
from pathlib import Path

import pytest
import torch
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from engine import CausalLM, ModelConfig
from analysis.trace import finite_report, run_trace
from engine.checkpoints import (
    CheckpointError,
    UnsafePathError,
    list_checkpoints,
    load_pretrained,
    resolve_checkpoint,
    save_model,
)
from engine.loss import mask_prompt, mean_supervised_loss, shifted_token_losses
from engine.tokenizer import train_bpe
from tests.page_helpers import figures, open_page
from ui import caches, checkpoint_picker
from ui.sidebar import DEFAULTS, MAX_TOKENS, parse_config_upload



@pytest.fixture(scope="module", autouse=True)
def _error_details():
    old = st_config.get_option("client.showErrorDetails")
    st_config.set_option("client.showErrorDetails", "full")
    yield
    st_config.set_option("client.showErrorDetails", old)


def _app(page: str | None = None, lang: str = "en", **state) -> AppTest:
    """A fresh session on ``page`` (default: overview) with DEFAULTS updated by ``state``, run once."""
    return open_page(page, lang=lang, settle=False, timeout=90, **state)


def _set(at: AppTest, **state) -> AppTest:
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def _texts(at: AppTest) -> str:
    parts = []
    for kind in ("title", "markdown", "caption", "info", "warning", "error", "success", "metric"):
        for e in at.get(kind):
            parts.append(str(getattr(e, "value", "")))
    return "\n".join(parts)


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def _usable(at: AppTest, **valid) -> None:
    """A follow-up run with valid values renders the page (title and at least one chart, no exception)."""
    _set(at, **{**{k: DEFAULTS[k] for k in ("input.text", "cfg.initializer_range")}, **valid})
    _ok(at)
    assert at.title, "page did not render after a valid value"
    assert at.get("plotly_chart"), "no chart after a valid value"


# ---------------------------------------------------------------------------------------------------
# The "no exception" asserts are meaningful even with showErrorDetails = "none"
# ---------------------------------------------------------------------------------------------------


def test_apptest_reports_exceptions_with_redacted_details(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text('import streamlit as st\nst.write("before")\nraise RuntimeError("boom-marker")\n')
    st_config.set_option("client.showErrorDetails", "none")
    try:
        at = open_page(script=script, lang=None, defaults=False)
        assert len(at.exception) == 1  # still reported
        assert "boom-marker" not in at.exception[0].message  # ... with the message redacted
    finally:
        st_config.set_option("client.showErrorDetails", "full")
    at = open_page(script=script, lang=None, defaults=False)
    assert "boom-marker" in at.exception[0].message


# ---------------------------------------------------------------------------------------------------
# Impossible head configurations
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, named", [
    (dict(hidden_size=48, num_attention_heads=32), ["hidden_size=48", "num_attention_heads=32"]),
    (dict(hidden_size=64, num_attention_heads=8, num_key_value_heads=3), ["num_attention_heads=8", "num_key_value_heads=3"]),
    (dict(hidden_size=48, num_attention_heads=16, position_embedding="rope"), ["RoPE", "hidden_size=48", "num_attention_heads=16", "head_dim=3"]),
])
def test_engine_refuses_impossible_heads(kwargs, named):
    with pytest.raises(ValueError) as err:
        ModelConfig(vocab_size=64, num_hidden_layers=1, intermediate_size=32, **kwargs)
    for part in named:
        assert part in str(err.value)


@pytest.mark.parametrize("before, state, check", [
    # hidden 48 with 32 heads: 32 does not divide 48 -> clamped to the nearest divisor (24)
    ({}, {"cfg.hidden_size": 48, "cfg.num_attention_heads": 32, "cfg.num_key_value_heads": 32},
     lambda s: 48 % s["cfg.num_attention_heads"] == 0 and s["cfg.num_attention_heads"] == 24),
    # 8 heads / 8 KV heads, then heads lowered to 4: KV 8 no longer divides 4 -> clamped to 4
    ({"cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 8}, {"cfg.num_attention_heads": 4},
     lambda s: s["cfg.num_attention_heads"] == 4 and s["cfg.num_key_value_heads"] == 4),
    # RoPE with head_dim 48 / 16 = 3 (odd): heads clamped to one with an even head dimension (12 -> head_dim 4)
    ({}, {"cfg.hidden_size": 48, "cfg.num_attention_heads": 16, "cfg.num_key_value_heads": 16,
          "cfg.position_embedding": "rope"},
     lambda s: s["cfg.num_attention_heads"] == 12 and (48 // s["cfg.num_attention_heads"]) % 2 == 0),
])
def test_ui_clamps_impossible_heads(before, state, check):
    at = _app(**before)
    _set(at, **before)  # settle: a value new to a select_slider's options needs the options to exist first
    _set(at, **state)
    _ok(at)
    text = _texts(at)
    assert "is not valid now; it is set to" in text, text[:500]
    s = {k: at.session_state[k] for k in ("cfg.hidden_size", "cfg.num_attention_heads", "cfg.num_key_value_heads")}
    assert check(s), s
    assert s["cfg.num_attention_heads"] % s["cfg.num_key_value_heads"] == 0, s
    assert at.get("plotly_chart")  # the page runs on the clamped, valid config
    _usable(at)


@pytest.mark.parametrize("state", [
    {"cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 3},
    {"cfg.num_key_value_heads": 3},
    {"cfg.num_attention_heads": 7},
    {"cfg.hidden_size": 50},
])
def test_ui_values_never_offered_become_valid(state):
    """Values that were never among a widget's options (only reachable from code or a hand-edited URL) are
    replaced by Streamlit itself with the widget's first option before the script reads them (no note then);
    whatever happens, the config the page runs on is valid and nothing crashes."""
    at = _app()
    _set(at, **state)
    _ok(at)
    s = {k: at.session_state[k] for k in ("cfg.hidden_size", "cfg.num_attention_heads", "cfg.num_key_value_heads")}
    assert s["cfg.hidden_size"] % s["cfg.num_attention_heads"] == 0, s
    assert s["cfg.num_attention_heads"] % s["cfg.num_key_value_heads"] == 0, s
    assert at.get("plotly_chart")


# ---------------------------------------------------------------------------------------------------
# Text: too long, empty, unknown characters, a 1 MB paste
# ---------------------------------------------------------------------------------------------------


def test_engine_refuses_sequence_over_position_limit():
    config = ModelConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=MAX_TOKENS)
    model = CausalLM(config)
    with pytest.raises(ValueError, match=rf"sequence length 300 exceeds max_position_embeddings={MAX_TOKENS}"):
        model(torch.zeros(1, 300, dtype=torch.long))


def test_ui_long_text_is_truncated_with_note_and_kept():
    long_text = "床前明月光，疑是地上霜。" * 40  # 480 characters, several hundred tokens
    at = _app(**{"input.text": long_text})
    _ok(at)
    assert f"only the first {MAX_TOKENS} are used" in _texts(at)
    assert at.session_state["input.text"] == long_text
    assert at.sidebar.text_area(key="input.text").value == long_text
    _usable(at)


def test_engine_refuses_empty_input():
    tok = train_bpe(DEFAULTS["cfg.vocab_size"])
    assert tok.encode("") == []
    model = CausalLM(ModelConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=32))
    with pytest.raises(ValueError, match="empty"):
        model(torch.zeros(1, 0, dtype=torch.long))


def test_ui_empty_text_shows_info_and_recovers():
    at = _app(**{"input.text": ""})
    _ok(at)
    assert any("The text is empty" in i.value for i in at.info)
    assert at.sidebar.text_area(key="input.text").value == ""
    _usable(at)


def test_engine_unknown_characters_are_unk():
    tok = train_bpe(DEFAULTS["cfg.vocab_size"])
    ids = tok.encode("😀😀😀")
    assert ids and all(i == tok.unk_token_id for i in ids)


def test_ui_unknown_characters_note_and_text_kept():
    at = _app(**{"input.text": "😀😀😀"})
    _ok(at)
    assert "all tokens are [UNK]" in _texts(at)
    assert at.sidebar.text_area(key="input.text").value == "😀😀😀"
    _usable(at)


def test_ui_one_megabyte_paste_does_not_crash():
    """A 1 MB value set through session_state: the text area's max_chars (20000) cuts it, the position limit
    cuts the tokens, and the run stays fast enough to be usable."""
    big = ("床前明月光，疑是地上霜。" * 90000)[:1_000_000]
    at = _app()
    _set(at, **{"input.text": big})
    _ok(at)
    kept = at.session_state["input.text"]
    assert big.startswith(kept) and 0 < len(kept) <= 20000
    assert f"only the first {MAX_TOKENS} are used" in _texts(at)
    assert at.get("plotly_chart")
    _usable(at)


# ---------------------------------------------------------------------------------------------------
# Smallest vocabulary, all labels masked, non-finite init, 48-layer Post-Norm
# ---------------------------------------------------------------------------------------------------


def test_engine_smallest_vocab():
    tok = train_bpe(16)
    assert tok.vocab_size <= 16
    ids = tok.encode(DEFAULTS["input.text"])
    assert ids and max(ids) < 16
    model = CausalLM(ModelConfig(vocab_size=16, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=32))
    assert all(finite_report(run_trace(model, torch.tensor([ids]))).values())


def test_ui_smallest_vocab():
    at = _app(**{"cfg.vocab_size": 16})
    _ok(at)
    assert at.session_state["cfg.vocab_size"] == 16
    assert at.get("plotly_chart")
    assert "tokens:" in _texts(at)
    _usable(at, **{"cfg.vocab_size": DEFAULTS["cfg.vocab_size"]})


def test_engine_all_labels_masked_is_nan_not_a_number():
    logits = torch.randn(1, 5, 16)
    labels = mask_prompt(torch.randint(0, 16, (1, 5)), 5)  # every position -100
    losses = shifted_token_losses(logits, labels)
    assert torch.isnan(losses).all()
    assert torch.isnan(mean_supervised_loss(losses))
    with pytest.raises(ValueError, match="n_prompt must be >= 0, got -1"):
        mask_prompt(labels, -1)


def test_ui_all_labels_masked_says_so_in_words():
    at = _app("loss")
    _ok(at)
    T = len(train_bpe(DEFAULTS["cfg.vocab_size"]).encode(DEFAULTS["input.text"]))
    _set(at, **{"loss.prompt_len": T})
    _ok(at)
    text = _texts(at)
    assert "No supervised tokens" in text, text[:800]
    assert not re.search(r"\bnan\b", text.lower().replace("nan or inf", ""))  # NaN never shown as a number
    _set(at, **{"loss.prompt_len": 0})
    _ok(at)
    assert "No supervised tokens" not in _texts(at)
    assert at.get("plotly_chart")


def test_engine_flags_nonfinite_init():
    # Post-Norm: the residual stream itself overflows. (With Pre-Norm the LayerNorm variance overflows to inf
    # and rsqrt(inf) = 0, so the outputs become all-zero but finite -- reported to the lead.)
    config = ModelConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=32, initializer_range=1e20, norm_position="post")
    torch.manual_seed(0)
    out = run_trace(CausalLM(config), torch.tensor([[1, 2, 3, 4]]))
    report = finite_report(out)
    assert not all(report.values()), report
    with pytest.raises(ValueError, match="initializer_range must be >= 0, got -1.0"):
        ModelConfig(initializer_range=-1.0)


def test_ui_nonfinite_init_warns():
    at = _app(**{"cfg.initializer_range": 1e20, "cfg.norm_position": "post"})
    _ok(at)
    assert any("Numerically broken" in w.value for w in at.warning), [w.value for w in at.warning]
    pre = _app(**{"cfg.initializer_range": 1e20})  # Pre-Norm stays finite, but its norms overflow: flagged
    assert any("norms overflow" in w.value for w in pre.warning), [w.value for w in pre.warning]
    _usable(at, **{"cfg.norm_position": "pre"})


def test_engine_48_layer_post_norm():
    config = ModelConfig(vocab_size=64, hidden_size=16, num_hidden_layers=48, num_attention_heads=2,
                         intermediate_size=32, norm_position="post")
    out = run_trace(CausalLM(config), torch.tensor([[1, 2, 3, 4, 5]]))
    assert len(out.hidden_states) == 49
    assert all(finite_report(out).values())


def test_ui_48_layer_post_norm():
    at = _app(**{"cfg.num_hidden_layers": 48, "cfg.norm_position": "post", "cfg.hidden_size": 16,
                 "cfg.num_attention_heads": 2, "cfg.num_key_value_heads": 2})
    _ok(at)
    assert at.session_state["cfg.num_hidden_layers"] == 48
    assert at.get("plotly_chart")
    _usable(at, **{"cfg.num_hidden_layers": 2, "cfg.norm_position": "pre"})


# ---------------------------------------------------------------------------------------------------
# Malformed config upload
# ---------------------------------------------------------------------------------------------------

BAD_UPLOADS = [
    (b"not json at all", "not a JSON file"),
    (b"\xff\xfe\x00garbage", "not a JSON file"),
    (b"[1, 2, 3]", "must be a JSON object"),
    (b'{"hidden_size": 48, "num_attention_heads": 32}', "hidden_size=48 is not divisible by num_attention_heads=32"),
    (b'{"bogus_field": 1}', "unknown config fields: bogus_field"),
    (b'{"hidden_size": "64"}', 'hidden_size must be a whole number, got "64"'),
    (b'{"initializer_range": NaN}', "initializer_range must be a finite number, got NaN"),
    (b'{"norm_eps": "x"}', 'norm_eps must be a number, got "x"'),
    (b'{"rope_theta": Infinity}', "rope_theta must be a finite number, got Infinity"),
    (b'{"tie_word_embeddings": "false"}', 'tie_word_embeddings must be true or false, got "false"'),
    (b"{" + b" " * (70 * 1024) + b"}", "a config is at most 65,536 bytes"),
    (b"[" * 30_000 + b"]" * 30_000, "nests more than 8 levels deep"),  # json.loads would hit RecursionError
    (b'{"a":' * 10_000 + b"1" + b"}" * 10_000, "nests more than 8 levels deep"),
    (b'{"max_position_embeddings": 1e12}', "max_position_embeddings must be a whole number, got 1000000000000.0"),
    (b'{"max_position_embeddings": 4000000}', "max_position_embeddings = 4,000,000 is more than this app allows (32,768)"),
    (b'{"vocab_size": ' + b"9" * 5000 + b"}", "a number with thousands of digits"),
    (b'{"hidden_size": true}', "hidden_size must be a whole number, got true"),
    (b'{"hidden_act": ["gelu"]}', 'hidden_act must be a string, got ["gelu"]'),
    (b'{"attention_bias": 1}', "attention_bias must be true, false or null, got 1"),
    (b'{"config": {}, "seed": -1}', "seed must be a whole number from 0 to 2,147,483,647, got -1"),
    (b'{"config": {}, "input": {"text": 5}}', "input.text must be a string"),
    (b'{"config": {}, "extra": 1}', "unknown fields: extra"),
]


@pytest.mark.parametrize("data, message", BAD_UPLOADS, ids=[f"bad{i}" for i in range(len(BAD_UPLOADS))])
def test_parse_config_upload_refuses(data, message):
    with pytest.raises(ValueError) as err:
        parse_config_upload(data)
    assert message in str(err.value)
    assert "set_int_max_str_digits" not in str(err.value) and "Traceback" not in str(err.value)


def test_position_cap_message_says_what_it_would_cost():
    with pytest.raises(ValueError) as err:
        parse_config_upload(b'{"max_position_embeddings": 4000000, "hidden_size": 768}')
    assert "4,000,000 × 768 floats would take 11.4 GiB" in str(err.value)  # 4e6 * 768 * 4 B / 2**30


def test_ui_malformed_upload_shows_error_and_keeps_sliders():
    """Through AppTest's file_uploader (supported in Streamlit 1.67): error shown, sliders unchanged."""
    at = _app(**{"cfg.hidden_size": 32, "cfg.num_attention_heads": 4, "cfg.num_key_value_heads": 4})
    at.sidebar.file_uploader(key="cfg.upload").set_value(("config.json", b'{"hidden_size": 48, "num_attention_heads": 32}',
                                                         "application/json"))
    at.run()
    _ok(at)
    errors = [e.value for e in at.sidebar.error]
    assert any("not a valid config" in e and "num_attention_heads=32" in e for e in errors), errors
    assert at.session_state["cfg.hidden_size"] == 32 and at.session_state["cfg.num_attention_heads"] == 4
    # a valid upload afterwards is applied
    good = ModelConfig(vocab_size=64, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                       intermediate_size=32).to_json().encode()
    at.sidebar.file_uploader(key="cfg.upload").set_value(("good.json", good, "application/json"))
    at.run()
    _ok(at)
    assert any("Config loaded" in s.value for s in at.sidebar.success)
    assert at.session_state["cfg.hidden_size"] == 16 and at.session_state["cfg.num_hidden_layers"] == 3
    assert at.get("plotly_chart")


# ---------------------------------------------------------------------------------------------------
# Checkpoints: truncated safetensors, pickles, paths outside the models directory
# ---------------------------------------------------------------------------------------------------

TINY = ModelConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
MARKER_NAME = "UNPICKLED_MARKER"


class _Evil:
    """Unpickling this creates a marker directory (a harmless stand-in for arbitrary code)."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


@pytest.fixture()
def models_dir(tmp_path, monkeypatch):
    """A temporary models directory: ``a_good`` (valid), ``broken`` (truncated safetensors), ``pickled_raw`` and
    ``pickled_zip`` (pytorch_model.bin files that run code when unpickled). EXPLORER_MODELS_DIR points at it."""
    root = tmp_path / "models"
    torch.manual_seed(0)
    save_model(CausalLM(TINY), root / "a_good")
    save_model(CausalLM(TINY), root / "broken")
    st_file = root / "broken" / "model.safetensors"
    st_file.write_bytes(st_file.read_bytes()[: st_file.stat().st_size // 2])
    marker = tmp_path / MARKER_NAME
    for name in ("pickled_raw", "pickled_zip"):
        save_model(CausalLM(TINY), root / name)
        (root / name / "model.safetensors").unlink()
    (root / "pickled_raw" / "pytorch_model.bin").write_bytes(pickle.dumps({"w": _Evil(str(marker))}))
    torch.save({"w": _Evil(str(marker))}, root / "pickled_zip" / "pytorch_model.bin")
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(root))
    monkeypatch.setattr("engine.checkpoints.discovery.default_hub_cache_dir", lambda: tmp_path / "empty_hub")  # only ours listed
    for module in (caches, checkpoint_picker):  # nor SmolLM2 from its pip package
        monkeypatch.setattr(module, "named_models", lambda: [])
    caches.available_checkpoints.clear()
    caches.checkpoint_menu.clear()
    caches.load_checkpoint.clear()
    yield root, marker
    caches.available_checkpoints.clear()
    caches.checkpoint_menu.clear()
    caches.load_checkpoint.clear()


def test_engine_truncated_safetensors(models_dir):
    root, _ = models_dir
    with pytest.raises(CheckpointError, match="truncated"):
        load_pretrained(root / "broken", allowed_roots=[root])
    assert load_pretrained(root / "a_good", allowed_roots=[root]).config == TINY


@pytest.mark.parametrize("name", ["pickled_raw", "pickled_zip"])
def test_engine_refuses_pickles_without_unpickling(models_dir, name):
    root, marker = models_dir
    with pytest.raises(CheckpointError, match="pytorch_model.bin"):
        load_pretrained(root / name, allowed_roots=[root])
    assert not marker.exists(), "the pickle was executed"


@pytest.mark.parametrize("path", ["../../etc", "..", "/etc", "a_good/../../..", "\x00"])
def test_engine_resolve_refuses_outside(models_dir, path):
    root, _ = models_dir
    with pytest.raises(CheckpointError):  # UnsafePathError for escapes, CheckpointError for the NUL name
        resolve_checkpoint(path, [root])
    with pytest.raises(UnsafePathError):
        resolve_checkpoint("../../etc", [root])
    assert resolve_checkpoint("a_good", [root]) == (root / "a_good").resolve()


def _checkpoint_app(name: str) -> AppTest:
    at = _app()
    return _set(at, **{"model.source": "checkpoint", "model.checkpoint": name})


@pytest.mark.parametrize("name, why", [("broken", "truncated"), ("pickled_raw", "pytorch_model.bin"),
                                       ("pickled_zip", "pytorch_model.bin")])
def test_ui_bad_checkpoint_message(models_dir, name, why):
    root, marker = models_dir
    listed = [c.name for c in list_checkpoints(root, include_hub_cache=False) if c.supported]
    assert name in listed
    at = _checkpoint_app(name)
    _ok(at)
    errors = [e.value for e in at.error]
    assert any(f"Could not load {name}" in e and why in e for e in errors), errors
    assert not marker.exists(), "the pickle was executed"
    _set(at, **{"model.checkpoint": "a_good"})  # still usable: a good checkpoint loads
    _ok(at)
    assert not at.error and at.get("plotly_chart")


def test_ui_checkpoint_outside_models_dir_is_never_read(models_dir, monkeypatch):
    root, _ = models_dir
    reads: list[str] = []
    real_load, real_resolve = caches.load_pretrained, caches.resolve_checkpoint
    monkeypatch.setattr(caches, "load_pretrained", lambda p, **kw: (reads.append(str(p)), real_load(p, **kw))[1])
    monkeypatch.setattr(caches, "resolve_checkpoint", lambda p, r: (reads.append(str(p)), real_resolve(p, r))[1])
    at = _checkpoint_app("../../etc")
    _ok(at)
    assert at.session_state["model.checkpoint"] == "a_good"  # reset to the first listed name
    assert all(Path(p).resolve().is_relative_to(root.resolve()) for p in reads), reads
    assert not at.error
    # the loader itself refuses names that are not listed, even if called directly
    with pytest.raises(CheckpointError, match="no checkpoint named '../../etc'"):
        caches.load_checkpoint("../../etc")


# ---------------------------------------------------------------------------------------------------
# Hostile tokens: every token string is escaped for where it is shown (markdown, Plotly)
# ---------------------------------------------------------------------------------------------------

HOSTILE = ["`x`", "[link](http://example.com/a)", "![img](http://127.0.0.2/i.png)", "<b>bold</b>", "**strong**",
           "$x^2$", "<img/src=x/onerror=alert(1)>", "a&amp;b", "_u_", "#h"]


def _hostile_tokenizer(folder, extra: int = 0):
    """A word-level tokenizer whose tokens are markup; ``extra`` more tokens than the model has embeddings."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokens = ["[UNK]", *HOSTILE] + [f"pad{i}" for i in range(TINY.vocab_size - 1 - len(HOSTILE) + extra)]
    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(tokens)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(folder / "tokenizer.json"))


def _hostile_app(models_dir, page: str, extra: int = 0) -> AppTest:
    root, _ = models_dir
    _hostile_tokenizer(root / "a_good", extra)
    caches.load_checkpoint.clear()
    caches.checkpoint_menu.clear()
    at = _app(page)
    return _set(at, **{"model.source": "checkpoint", "model.checkpoint": "a_good",
                       "input.text": " ".join(HOSTILE + [f"pad{TINY.vocab_size - 2 - len(HOSTILE) + extra}"] if extra else HOSTILE)})


def test_markdown_and_plotly_escaping_helpers():
    from ui.escape import md, md_code, plotly

    assert md("[a](http://x)") == r"\[a\]\(http\:\/\/x\)"
    assert md_code("`x`") == "`` `x` ``" and md_code("a``b") == "```a``b```"
    assert plotly("<b>x</b> & y") == "&lt;b&gt;x&lt;/b&gt; &amp; y"


@pytest.mark.parametrize("page", ["next_token", "attention"])
def test_hostile_tokens_are_shown_literally(models_dir, page):
    from ui.escape import md, md_code, plotly

    at = _hostile_app(models_dir, page)
    _ok(at)
    caption = next(c.value for c in at.sidebar.caption if "tokens:" in c.value)
    for tok in HOSTILE:
        assert md_code(tok) in caption, tok  # in a code span that the token cannot close
    if page == "next_token":
        assert md(HOSTILE[-1]) in at.subheader[0].value  # the subheader names the last token, escaped
    texts = json.dumps(figures(at), ensure_ascii=False)
    assert "<b>bold</b>" not in texts and "<img" not in texts
    if page == "attention":  # the heatmaps' tick text names every input token
        assert plotly("<b>bold</b>") in texts


def test_tokenizer_larger_than_the_model_vocabulary_is_said_when_listed(models_dir):
    """Folder discovery: the checkpoint is not offered, and the sidebar says why (before: a broken entry whose
    page raised "token id ... is outside the vocabulary")."""
    at = _hostile_app(models_dir, "next_token", extra=3)
    _ok(at)
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert f"tokenizer has {TINY.vocab_size + 3} tokens but the model has only {TINY.vocab_size} embeddings" in warnings
    assert "a\\_good" in warnings  # named (escaped for markdown)
    assert not any("a_good" in o for o in at.sidebar.selectbox(key="model.checkpoint.en").options)
    assert caches.tokenizer_overflow(models_dir[0] / "a_good") == (TINY.vocab_size + 3, TINY.vocab_size)
    assert caches.tokenizer_overflow(models_dir[0] / "broken") is None  # no tokenizer: the bundled one fits


def test_tokenizer_larger_than_the_model_vocabulary_is_said_when_loaded(models_dir, monkeypatch):
    """The folder changed after it was listed (the listing is cached for 30 s): the load says it too."""
    monkeypatch.setattr(caches, "tokenizer_overflow", lambda folder: None)
    caches.checkpoint_menu.clear()
    at = _hostile_app(models_dir, "next_token", extra=3)
    _ok(at)
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert f"has {TINY.vocab_size + 3} tokens but the model has only {TINY.vocab_size} embeddings" in warnings
    errors = " ".join(e.value for e in at.error)
    assert "outside the model's vocabulary" in errors and "pad" in errors


@pytest.mark.parametrize("text", ["😀" * 10_001, "床" * 25_000])
def test_long_text_is_cut_at_20000_utf16_units_with_a_message(text):
    at = _app(**{"input.text": text})
    _ok(at)
    kept = at.session_state["input.text"]
    assert len(kept.encode("utf-16-le")) // 2 == 20_000 and text.startswith(kept)
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert f"had {len(text.encode('utf-16-le')) // 2:,} characters" in warnings
