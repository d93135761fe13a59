"""ui/page_scope.py: a page's namespace keeps only what its callbacks may read after the run, so a session (its
widget callbacks hold that namespace) no longer keeps its model and trace alive once the shared store let them go."""

from __future__ import annotations

import gc
import math
import weakref

import pandas as pd
import plotly.graph_objects as go
import torch

from engine import CausalLM, ModelConfig
from server.bytecache import shared_cache
from tests.page_helpers import open_page
from ui.context import Explorer
from ui.page_scope import HEAVY_BYTES, release_page, remember_page


def test_release_drops_the_model_and_large_data_and_keeps_what_callbacks_read():
    config = ModelConfig(vocab_size=2000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=512, max_position_embeddings=64)
    model = CausalLM(config)
    ctx = Explorer(config=config, model=model, model_key="k", input_ids=torch.tensor([[1, 2, 3]]),
                   tokens=["a", "b", "c"], tokenizer=None)
    big = torch.zeros(HEAVY_BYTES // 4 + 1)
    namespace = {"__name__": "__main__", "math": math, "step": len, "n": 7, "labels": ["a", "b"], "names": {"p": "P"},
                 "small": pd.DataFrame({"x": [1.0]}), "Frame": pd.DataFrame, "ctx": ctx, "model": model,
                 "out": {"hidden": big}, "ids": torch.tensor([[1, 2, 3]]), "fig": go.Figure()}
    remember_page(namespace)
    assert release_page() == 4
    assert set(namespace) == {"__name__", "math", "step", "n", "labels", "names", "small", "Frame", "ctx", "ids"}
    assert namespace["ctx"].model is None and namespace["ctx"].tokens == ["a", "b", "c"]
    assert ctx.model is model  # the run's own object is untouched: a copy replaces it
    assert release_page() == 0  # noted once per run


def test_a_closed_pages_callbacks_no_longer_hold_its_model():
    """The Overview's step buttons keep its namespace (their callback's globals) as long as the session lives; after
    the run that namespace no longer holds the model, so the model leaves memory with its store entry."""
    at = open_page("overview", **{"cfg.seed": 9191})
    assert not at.exception, at.exception
    models = [weakref.ref(e.value) for e in shared_cache()._entries.values() if hasattr(e.value, "layers")]
    shared_cache().clear()
    gc.collect()
    assert models and all(ref() is None for ref in models)  # the session (and its callbacks) still alive: `at`
    at.button(key="overview.next").click().run()  # and its callback still works
    assert not at.exception, at.exception
