"""Every page works on a loaded checkpoint: a tiny random GPT-2 saved by transformers into a models directory,
picked in the sidebar by name (offline; nothing is downloaded)."""

from __future__ import annotations


import pytest
import torch
from tests.page_helpers import open_page, shown_chart
from ui import caches

PAGES = ["overview", "norms", "prepost", "attention", "heads", "loss", "next_token", "generate", "lens"]
N_LAYER, N_HEAD = 3, 4


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel

    from engine.tokenizer import load_corpus

    root = tmp_path_factory.mktemp("models")
    folder = root / "tiny-gpt2"
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=N_LAYER, n_head=N_HEAD, n_positions=128, vocab_size=300,
                               bos_token_id=0, eos_token_id=0)).save_pretrained(folder)
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator([load_corpus("en")[:40_000]], vocab_size=300, min_frequency=1)
    tok.save(str(folder / "tokenizer.json"))
    return root


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_on_a_gpt2_checkpoint(page, models_dir, monkeypatch):
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(models_dir))
    caches.available_checkpoints.clear()
    caches.checkpoint_menu.clear()
    at = open_page(page, via="script", defaults=False, timeout=90, **{
        "model.source": "checkpoint", "model.checkpoint": "tiny-gpt2",  # SmolLM2, when installed, is listed first
        "input.text": "In the beginning God created the heaven and the earth."})
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["model.checkpoint"] == "tiny-gpt2"
    assert (at.query_params["model.source"], at.query_params["model.checkpoint"]) == ("checkpoint", "tiny-gpt2")
    assert at.get("plotly_chart"), "no chart on a checkpoint"
    caption = " ".join(c.value for c in at.sidebar.caption)
    assert " the" in caption  # the checkpoint's own byte-level pieces, Ġ shown as a space
    if page == "attention":
        # the small multiples show every head of the checkpoint's layer
        assert sum(d["type"] == "heatmap" for d in shown_chart(at, "attn.heads")["data"]) == N_HEAD


def test_readonly_config_table_speaks_the_interface_language(models_dir, monkeypatch):
    """The sidebar's read-only table of a loaded checkpoint: headers from the catalog (Chinese in zh, where the
    table used to say "value"), one row per config field with the loaded config's values."""
    from engine.checkpoints import load_pretrained
    from ui.i18n import catalogs

    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(models_dir))
    caches.available_checkpoints.clear()
    caches.checkpoint_menu.clear()
    expected = load_pretrained(models_dir / "tiny-gpt2").config.to_dict()
    for lang in ("zh", "en"):
        at = open_page("overview", via="script", lang=lang, defaults=False, timeout=90,
                       **{"model.source": "checkpoint", "model.checkpoint": "tiny-gpt2"})
        assert not at.exception, at.exception
        table = next(d.value for d in at.sidebar.dataframe)
        words = catalogs()[lang]
        assert list(table.columns) == [words["model.readonly.field"], words["model.readonly.value"]]
        if lang == "zh":
            assert all(any("\u4e00" <= ch <= "\u9fff" for ch in c) for c in table.columns), list(table.columns)
        assert dict(zip(table.iloc[:, 0], table.iloc[:, 1])) == {k: str(v) for k, v in expected.items()}
        assert expected["num_hidden_layers"] == N_LAYER
