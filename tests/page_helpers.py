"""Helpers for the AppTest page tests: open a page with a given sidebar state (:func:`open_page`, the one way
tests open the app), read the DataFrame each chart was built from (:func:`recording_charts`, the ``charts``
fixture), and rebuild the same model and input independently of the app.

Independent means: a fresh ``CausalLM`` built from the same config and seed (``torch.manual_seed(seed)``
then ``CausalLM(config)`` reproduces the cached model) and ids from a fresh tokenizer or generator, never the
app's cached model or trace.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import re
import pkgutil
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import torch
from streamlit.testing.v1 import AppTest

from engine import CausalLM, ModelConfig
from engine.tokenizer import bundled_tokenizer
from settings.schema import DEFAULTS, MAX_TOKENS, widgets_to_config

ROOT = Path(__file__).resolve().parents[1]


def open_page(page: str | None = None, *, via: str = "navigation", script: str | Path | None = None,
              source: str | None = None, query: dict | None = None, lang: str | None = "en", defaults: bool = True,
              settle: bool = True, timeout: float = 60, **state) -> AppTest:
    """The one way the tests open the app under AppTest: a fresh session, run, on ``page`` with ``state``.

    ``via`` says how the page is reached:

    * ``"navigation"`` (the user's path): ``app.py`` runs (the overview), switches to ``app_pages/<page>.py`` when
      ``page`` is given, then the session state is set and the page rerun. Session state is set after the switch
      (AppTest drops values set before ``switch_page``: a Streamlit 1.67 limitation). With ``settle`` the
      sidebar is first restored (DEFAULTS and the language, lost on the switch), then ``state`` is set twice (see
      :func:`rerun`); without it everything is set once and the page runs once.
    * ``"switch"``: ``app.py`` with ``app_pages/<page>.py`` selected before its first run (only where the page's
      url_path equals its file stem) and the state set up front; one run.
    * ``"script"``: the page script itself is the main script (it draws the shared sidebar through
      ``explorer()``), the state set up front; one run. ``script`` (a file) or ``source`` (a string) run such a
      script of the test's own.

    The state is DEFAULTS (unless ``defaults`` is False), then ``ui.lang`` = ``lang`` (unless None), then
    ``state``. Keys use dots, so pass them through a dict: ``open_page("loss", **{"loss.prompt_len": 3})``.
    ``query`` is the query string the browser opens the app with (a share link). ``timeout`` is each run's.
    """
    if source is not None or script is not None:
        via = "script"
    if source is not None:
        at = AppTest.from_string(source, default_timeout=timeout)
    else:
        main = script or (ROOT / "app_pages" / f"{page}.py" if via == "script" else ROOT / "explorer.py")
        at = AppTest.from_file(str(main), default_timeout=timeout)
    at.query_params.update(query or {})
    base = {**(DEFAULTS if defaults else {}), **({"ui.lang": lang} if lang else {})}
    if via != "navigation":
        if via == "switch":
            at.switch_page(f"app_pages/{page}.py")
        return rerun(at, settle=False, **{**base, **state})
    at.run()
    if page:
        at.switch_page(f"app_pages/{page}.py").run()
    if not (base or state):
        return at
    if settle:
        rerun(at, settle=False, **base)  # restore the sidebar (lost on switch_page) first
    return rerun(at, settle=settle, **{**base, **state})


def open_compared(page: str, b_state: dict, **state) -> tuple[AppTest, "ChartCalls"]:
    """``page`` with ``state`` (:func:`open_page`), then "Compare" and ``b_state`` in the sidebar (which then
    edits B), one more run: the page and the chart builder calls of that run (:func:`recording_charts`)."""
    at = open_page(page, **state)
    at.button(key="compare.start").click().run()
    for key, value in b_state.items():
        at.session_state[key] = value
    with recording_charts() as calls:
        at.run()
    return at, calls


def rerun(at: AppTest, settle: bool = True, **state) -> AppTest:
    """Set session-state values and rerun the current page.

    With ``settle`` the values are set and the page run twice: under AppTest a select_slider whose options
    change in the same run (KV heads after the head count changed) falls back to its first option, so the
    first run can build a config with the wrong KV heads; setting the values again once the options are
    right gives the config a user who moves the sliders one at a time gets.
    """
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    if not settle:
        return at
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def figures(at: AppTest) -> list[dict]:
    """Every Plotly figure on the page as a dict (``data`` and ``layout``)."""
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def shown_chart(at: AppTest, key: str) -> dict:
    """The figure the page shows under the chart key ``key`` (``ui.widgets.chart``'s, e.g. "attn.grid") as a
    dict: for a figure a page caches (its builder is not called again on a cache hit). A live chart
    (``ui.widgets.show_figure``) is found by its own key."""
    found = [c for c in at.get("plotly_chart") if c.proto.id.endswith((f"-{key}.chart", f"-{key}"))]
    assert len(found) == 1, (key, [c.proto.id for c in at.get("plotly_chart")])
    return json.loads(found[0].proto.spec)


@dataclass
class ChartCall:
    """One call of a chart builder (a ``ui.figures`` function that returns a figure) during a page run."""

    name: str  # the builder's module and name, e.g. "ui.figures.loss.contribution_bar"
    arguments: dict  # every parameter by name, defaults included
    figure: go.Figure  # what it returned: the figure the page shows

    @property
    def data(self) -> pd.DataFrame:
        """The DataFrame the builder was given (its first DataFrame argument)."""
        return next(v for v in self.arguments.values() if isinstance(v, pd.DataFrame))

    @property
    def layout(self) -> dict:
        """The figure's layout as the page sends it (plain JSON: titles, axes)."""
        return json.loads(self.figure.to_json())["layout"]


class ChartCalls:
    """The chart builder calls of the latest AppTest run, asked for by builder (function or dotted name)."""

    def __init__(self) -> None:
        self.calls: list[ChartCall] = []
        self.lock = threading.Lock()

    def all(self, builder) -> list[ChartCall]:
        name = builder if isinstance(builder, str) else f"{builder.__module__}.{builder.__name__}"
        return [c for c in self.calls if c.name == name]

    def __call__(self, builder, **match) -> ChartCall:
        """The one call of ``builder`` in the latest run whose arguments include ``match`` (e.g. ``title=...``
        when a page draws several charts with one builder)."""
        calls = [c for c in self.all(builder) if all(c.arguments.get(k) == v for k, v in match.items())]
        assert len(calls) == 1, f"{builder} {match}: {len(calls)} calls in the latest run; made: {self.names()}"
        return calls[0]

    def data(self, builder, **match) -> pd.DataFrame:
        """The DataFrame given to ``builder`` in the latest run."""
        return self(builder, **match).data

    def names(self) -> list[str]:
        return [c.name for c in self.calls]


def _chart_builders() -> dict:
    """Every public ``ui.figures`` function that builds a figure from data (not one that styles a figure)."""
    import ui.figures

    for info in pkgutil.iter_modules(ui.figures.__path__):
        importlib.import_module(f"ui.figures.{info.name}")
    found = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("ui.figures."):
            continue
        for attr, f in vars(module).items():
            if not inspect.isfunction(f) or f.__module__ != name or attr.startswith("_"):
                continue
            sig = inspect.signature(f)
            first = next(iter(sig.parameters.values())).annotation
            if sig.return_annotation in ("go.Figure", go.Figure) and first not in ("go.Figure", go.Figure):
                found[f] = sig
    return found


@contextmanager
def recording_charts():
    """Record every chart builder call while the block runs; yields a :class:`ChartCalls` holding those of the
    latest AppTest run (each run starts a new record).

    AppTest runs the page script in this process, and a page looks its builders up when it runs (``from
    ui.figures.loss import contribution_bar`` at its top), so replacing the module attributes is seen by every
    run; ``ui`` modules that imported a builder when they were loaded are patched too, and any module that
    imported a wrapper while the block ran gets the builder back at the end.
    """
    record = ChartCalls()

    def wrap(f, sig):
        name = f"{f.__module__}.{f.__name__}"

        @functools.wraps(f)
        def recorded(*args, **kwargs):
            fig = f(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            with record.lock:
                record.calls.append(ChartCall(name, dict(bound.arguments), fig))
            return fig

        return recorded

    wrapped = {f: wrap(f, sig) for f, sig in _chart_builders().items()}

    def swap(replacement: dict) -> None:
        """Set every ``ui`` module attribute that holds a builder (or a wrapper of one) to ``replacement``'s."""
        for name, module in list(sys.modules.items()):
            if name == "ui" or name.startswith("ui."):
                for attr, value in list(vars(module).items()):
                    original = inspect.unwrap(value) if inspect.isfunction(value) else None
                    if original in wrapped:
                        setattr(module, attr, replacement[original])

    swap(wrapped)
    real_run = AppTest._run

    def run(self, *args, **kwargs):
        record.calls = []
        return real_run(self, *args, **kwargs)

    AppTest._run = run
    try:
        yield record
    finally:
        AppTest._run = real_run
        swap({f: f for f in wrapped})


def assert_huge_init_is_said_in_words(at: AppTest) -> None:
    """A page run at an absurd init std: no exception, a warning in words, and no NaN/inf shown as a number in
    its markdown or captions."""
    assert not at.exception
    assert at.warning  # the non-finite values are announced in words
    shown = " ".join(e.value for kind in ("markdown", "caption") for e in at.get(kind))
    assert not re.search(r"\b(nan|inf)\b", shown, flags=re.IGNORECASE), shown


def texts(at: AppTest) -> str:
    """All text the page shows in messages, captions, markdown, metrics and titles, joined."""
    parts = []
    for kind in ("title", "subheader", "markdown", "caption", "info", "warning", "error", "success", "metric"):
        for e in at.get(kind):
            parts.append(str(getattr(e, "value", "")))
            if kind == "metric":
                parts.append(str(e.label))
    return "\n".join(parts)


def state_config(**state) -> tuple[ModelConfig, int]:
    """The ModelConfig and seed the sidebar builds from DEFAULTS updated by ``state`` (no preset or upload: the
    fields without a slider at their defaults), through the sidebar's own mapping."""
    s = {**DEFAULTS, **state}
    return widgets_to_config(s), int(s["cfg.seed"])


def reference(**state) -> tuple[CausalLM, torch.Tensor, object]:
    """``(fresh model, input_ids [1, T], tokenizer or None)`` for the sidebar state, built independently."""
    s = {**DEFAULTS, **state}
    config, seed = state_config(**state)
    torch.manual_seed(seed)
    model = CausalLM(config)
    if s["input.mode"] == "random":
        gen = torch.Generator().manual_seed(seed)
        return model, torch.randint(0, config.vocab_size, (1, s["input.random_len"]), generator=gen), None
    tok = bundled_tokenizer(config.vocab_size)  # the sidebar's choice (byte-level at GPT-2's 50257)
    ids = tok.encode(s["input.text"])[:MAX_TOKENS]
    return model, torch.tensor([ids]), tok
