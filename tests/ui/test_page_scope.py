"""ui/page_scope.py: a page's namespace keeps only what its callbacks may read after the run, so a session (its
widget callbacks hold that namespace) no longer keeps its model and views alive once the shared store let them go."""

from __future__ import annotations

import gc
import json
import math
import weakref

import pandas as pd

from server.bytecache import shared_cache
from tests.page_helpers import open_page
from ui.page_scope import release_page, remember_page


def test_release_keeps_modules_functions_and_scalars_and_drops_data():
    namespace = {"__name__": "__main__", "math": math, "json": json, "step": len, "n_steps": 7, "KEY": "heads.map",
                 "keys": ("a", 1), "frame": pd.DataFrame({"x": [1.0]}), "names": {"pre": "Pre"}, "ids": [1, 2],
                 "pair": ("a", pd.DataFrame()), "Frame": pd.DataFrame}
    remember_page(namespace)
    assert release_page() == 4
    assert set(namespace) == {"__name__", "math", "json", "step", "n_steps", "KEY", "keys", "Frame"}
    assert release_page() == 0  # noted once per run


def test_a_closed_pages_callbacks_no_longer_hold_its_model():
    """The Overview's step buttons keep its namespace (their callback's globals) as long as the session lives; after
    the run that namespace no longer holds the page context, so the model leaves memory with its store entry."""
    at = open_page("overview", **{"cfg.seed": 9191})
    assert not at.exception, at.exception
    models = [weakref.ref(e.value) for e in shared_cache()._entries.values() if hasattr(e.value, "layers")]
    shared_cache().clear()
    gc.collect()
    assert models and all(ref() is None for ref in models)  # the session (and its callbacks) still alive: `at`
    at.button(key="overview.next").click().run()  # and its callback still works
    assert not at.exception, at.exception
