"""Helpers for the AppTest page tests (attention, loss, next token): open a page with a given sidebar state,
read chart data out of the figure JSON, and rebuild the same model and input independently of the app.

Independent means: a fresh ``CausalLM`` built from the same config and seed (``torch.manual_seed(seed)``
then ``CausalLM(config)`` reproduces the cached model) and ids from a fresh tokenizer or generator, never the
app's cached model or trace.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import torch
from streamlit.testing.v1 import AppTest

from engine import CausalLM, ModelConfig
from engine.tokenizer import bundled_tokenizer
from ui.sidebar import DEFAULTS, FFN_KINDS, MAX_TOKENS

ROOT = Path(__file__).resolve().parents[1]


def open_page(page: str, **state) -> AppTest:
    """Run ``app.py``, switch to ``pages/<page>.py`` and rerun it with DEFAULTS updated by ``state``.

    Keys use dots, so pass them through a dict: ``open_page("loss", **{"loss.prompt_len": 3})``. Session
    state is set after the switch (AppTest drops values set before ``switch_page``: a Streamlit 1.67 limitation).
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    for k, v in {**DEFAULTS, "ui.lang": "en"}.items():  # restore the sidebar (lost on switch_page) first
        at.session_state[k] = v
    at.run()
    return rerun(at, **{**DEFAULTS, "ui.lang": "en", **state})


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


def arr(value) -> np.ndarray:
    """A trace array from figure JSON as float64 numpy: typed arrays (``bdata``) decoded, None -> NaN."""
    if isinstance(value, dict) and "bdata" in value:
        a = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            a = a.reshape([int(s) for s in str(shape).split(",")])
        return a.astype(np.float64)
    return np.array([[np.nan if v is None else v for v in row] if isinstance(row, list) else (np.nan if row is None else row)
                     for row in value], dtype=np.float64)


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
    """The ModelConfig and seed the sidebar builds from DEFAULTS updated by ``state`` (mirrors ui/sidebar.py)."""
    s = {**DEFAULTS, **state}
    act, gated = FFN_KINDS[s["cfg.ffn"]]
    config = ModelConfig(
        vocab_size=s["cfg.vocab_size"], hidden_size=s["cfg.hidden_size"], num_hidden_layers=s["cfg.num_hidden_layers"],
        num_attention_heads=s["cfg.num_attention_heads"], num_key_value_heads=s["cfg.num_key_value_heads"],
        intermediate_size=s["cfg.intermediate_size"], hidden_act=act, mlp_gated=gated, norm_type=s["cfg.norm_type"],
        norm_position=s["cfg.norm_position"], position_embedding=s["cfg.position_embedding"],
        max_position_embeddings=MAX_TOKENS, bias=not gated, tie_word_embeddings=s["cfg.tie_word_embeddings"],
        initializer_range=float(s["cfg.initializer_range"]),
    )
    return config, int(s["cfg.seed"])


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
