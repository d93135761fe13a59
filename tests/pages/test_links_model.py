"""Links keep the model (issue 21): the model source and the checkpoint travel in the link by their ids.

Before, ``model.source`` was not in the URL at all and ``model.checkpoint`` only when it was not the first entry
(as its displayed label), so a link made on SmolLM2 opened the random-init model. Each test opens the app as a
browser opening a link does (a fresh AppTest session given the query string) and reads back ``at.query_params``,
the address bar the app keeps. A tiny GPT-2 saved by transformers stands in for a second listed checkpoint;
SmolLM2's own pages are covered in tests/pages/test_smollm2_pages.py and in a real browser in
tests/browser/test_browser_links.py.
"""

from __future__ import annotations

import pytest
import torch
from streamlit.testing.v1 import AppTest

from engine import CausalLM
from tests.page_helpers import open_page, rerun, state_config
from ui import caches, checkpoint_picker
from ui.caches import random_model_key
from ui.i18n import catalogs
from settings.schema import DEFAULTS, config_to_widgets

CATALOGS = catalogs()


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    from transformers import GPT2Config, GPT2LMHeadModel

    root = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    for name in ("tiny-a", "tiny-b"):
        GPT2LMHeadModel(GPT2Config(n_embd=16, n_layer=1, n_head=2, n_positions=64, vocab_size=4000,
                                   bos_token_id=0, eos_token_id=0)).save_pretrained(root / name)
    return root


@pytest.fixture
def listed(models_dir, monkeypatch):
    """The two tiny checkpoints are the only ones listed (SmolLM2 hidden: its loading is not what is tested)."""
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(models_dir))
    for module in (caches, checkpoint_picker):
        monkeypatch.setattr(module, "named_models", lambda: [])
    caches.available_checkpoints.clear()
    caches.checkpoint_menu.clear()
    yield
    caches.available_checkpoints.clear()
    caches.checkpoint_menu.clear()


def _link(query: dict, page: str = "attention") -> AppTest:
    return open_page(page, via="switch", query={"ui.lang": "English", **query}, lang=None, defaults=False,
                     timeout=120)


def test_the_link_names_the_checkpoint_even_when_it_is_the_first_entry(listed):
    """The first entry is named too: a link must not mean another model on a server that lists one more."""
    at = open_page("attention", **{"model.source": "checkpoint"})
    assert not at.exception, at.exception
    assert at.session_state["model.checkpoint"] == "tiny-a"
    assert (at.query_params["model.source"], at.query_params["model.checkpoint"]) == ("checkpoint", "tiny-a")
    rerun(at, **{"model.checkpoint": "tiny-b"})
    assert at.query_params["model.checkpoint"] == "tiny-b"
    rerun(at, **{"model.source": "random"})  # no checkpoint in a random-init view's link
    assert "model.source" not in at.query_params and "model.checkpoint" not in at.query_params


@pytest.mark.parametrize("lang", ["English", "中文"])
def test_a_link_opens_its_checkpoint_in_either_language(listed, lang):
    at = _link({"ui.lang": lang, "model.source": "checkpoint", "model.checkpoint": "tiny-b"})
    assert not at.exception, at.exception
    assert not at.sidebar.warning, [w.value for w in at.sidebar.warning]
    assert at.session_state["model.source"] == "checkpoint" and at.session_state["model.checkpoint"] == "tiny-b"
    assert at.query_params["model.checkpoint"] == "tiny-b"
    table = at.sidebar.dataframe[0].value  # the read-only config of the loaded checkpoint: 1 layer, H 16
    assert dict(zip(table.iloc[:, 0], table.iloc[:, 1]))["hidden_size"] == "16"


@pytest.mark.parametrize("name", ["no-such-model", "../../etc/passwd", "/etc/passwd", "tiny-a/../tiny-b"])
def test_a_checkpoint_this_server_does_not_list_is_named_and_the_first_one_opens(listed, monkeypatch, name):
    reads: list[str] = []
    real = caches.load_pretrained
    monkeypatch.setattr(caches, "load_pretrained", lambda p, **kw: (reads.append(str(p)), real(p, **kw))[1])
    caches.load_checkpoint.clear()
    at = _link({"model.source": "checkpoint", "model.checkpoint": name})
    assert not at.exception, at.exception
    warning = " ".join(w.value for w in at.sidebar.warning)
    assert "(`model.checkpoint`)" in warning and "tiny-a, tiny-b" in warning, warning
    assert at.session_state["model.checkpoint"] == "tiny-a"
    assert at.query_params["model.checkpoint"] == "tiny-a"  # the bad name left the address bar
    assert at.get("plotly_chart")
    assert all(p.endswith("tiny-a") for p in reads), reads  # only the listed folder was read


def test_a_link_to_a_trained_model_says_it_cannot_travel():
    at = _link({"model.source": "trained", "cfg.hidden_size": "32"})
    assert not at.exception, at.exception
    warning = " ".join(w.value for w in at.sidebar.warning)
    assert CATALOGS["en"]["model.trained_link"].split("(")[0] in warning, warning
    assert at.session_state["model.source"] == "random" and "model.source" not in at.query_params
    assert at.get("plotly_chart") and at.query_params["cfg.hidden_size"] == "32"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_trained_models_share_panel_offers_the_same_config_at_random_init(lang):
    """The share panel of a trained model says, in the reader's language, that it cannot travel; its one button
    puts the config into the sliders at random init, and the link the app then keeps opens, in a new session,
    the same config and seed: the weights the run started from."""
    words = CATALOGS[lang]
    state = {"cfg.hidden_size": 32, "cfg.num_hidden_layers": 3, "cfg.ffn": "swiglu", "cfg.seed": 7}
    config, seed = state_config(**state)
    torch.manual_seed(123)
    trained = CausalLM(config)  # stands in for a trained clone; its config is what matters here
    source = random_model_key(config.to_json(), seed)
    # the sliders at the app's defaults (seed 7): the trained model's config differs from them
    at = open_page("attention", lang=lang, **{"cfg.seed": seed, "model.source": "trained",
                                              "train.trained": {"model": trained, "id": "t1", "source": source}})
    assert not at.exception, at.exception
    assert words["share.trained_no_link"] in [i.value for i in at.sidebar.info]
    assert not at.get("iframe"), "no copy-link button for a model that cannot travel"
    at.sidebar.button(key="share.link_random").click().run()
    assert not at.exception, at.exception
    assert at.session_state["model.source"] == "random"
    done = " ".join(s.value for s in at.sidebar.success)
    assert words["share.random_same_start"].strip() in done, done
    values, _ = config_to_widgets(config)
    assert all(at.session_state[k] == v for k, v in values.items() if k.startswith("cfg.") and k != "cfg.fixed")
    link = dict(at.query_params)
    assert link["cfg.hidden_size"] == "32" and "model.source" not in link
    again = _link({k: v for k, v in link.items() if k != "ui.lang"})
    assert not again.exception and not again.sidebar.warning
    rebuilt, rebuilt_seed = state_config(**{k: again.session_state[k] for k in DEFAULTS if k.startswith("cfg.")})
    assert (rebuilt, rebuilt_seed) == (config, seed)
    assert again.session_state["model.source"] == "random" and again.get("plotly_chart")
