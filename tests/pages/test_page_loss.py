"""AppTest checks of app_pages/loss.py against an independent engine computation (see page_helpers)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from tests.page_helpers import open_page, reference, rerun, texts
from ui.figures.loss import contribution_bar


def _expected_bars(state: dict, masked_labels: set[int]) -> tuple[np.ndarray, int]:
    """Per-position ℓ_t / N from a fresh model with labels built by hand (-100 at ``masked_labels``)."""
    model, ids, _ = reference(**state)
    labels = ids.clone()
    for p in masked_labels:
        labels[0, p] = -100
    with torch.no_grad():
        tl = model(ids, labels=labels).token_losses[0].double().numpy()  # (T-1,), NaN where masked
    n = int(np.isfinite(tl).sum())
    return tl / n, n


def _check_bars(at, charts, state: dict, masked_labels: set[int]) -> None:
    bars = charts(contribution_bar)
    y = bars.data["contribution"].to_numpy(dtype=np.float64)
    exp, n = _expected_bars(state, masked_labels)
    assert y.shape == exp.shape
    assert (np.isnan(y) == np.isnan(exp)).all(), "masked positions must be gaps (null), supervised ones bars"
    assert (bars.data["masked"].to_numpy() == np.isnan(exp)).all()
    assert all(v is None for v, e in zip(bars.figure.data[0].y, exp) if np.isnan(e)), "masked y must be null, not 0"
    np.testing.assert_allclose(y[~np.isnan(y)], exp[~np.isnan(exp)], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.nansum(y), np.nansum(exp), rtol=1e-5)  # the bars add up to the mean loss
    np.testing.assert_allclose(np.array(bars.figure.data[0].y, dtype=np.float64), y)  # the bars are the table's
    ticks = bars.layout["xaxis"]["ticktext"]
    assert ticks[0].startswith("0: ") and "→" in ticks[0]
    assert f"{n} / {len(exp)}" in texts(at)


def test_defaults_bars_equal_token_losses_over_n(charts):
    at = open_page("loss")
    assert not at.exception
    _check_bars(at, charts, {}, set())
    assert not re.search(r"\bnan\b", texts(at), re.I)


def test_prompt_mask_and_toggles_compose(charts):
    at = open_page("loss", **{"loss.prompt_len": 5, "loss.masked": [10, 12, 3]})
    assert not at.exception
    _check_bars(at, charts, {}, {0, 1, 2, 3, 4, 10, 12})
    assert "🚫 masked (−100)" in at.dataframe[0].value.iloc[:, 3].tolist()


def test_everything_masked_says_so_in_words():
    at = open_page("loss", **{"loss.prompt_len": 22})
    assert not at.exception
    page = texts(at)
    assert "No supervised tokens" in page
    assert not re.search(r"\bnan\b", page, re.I)
    assert not at.get("plotly_chart")
    shown = at.dataframe[0].value
    assert (shown.iloc[:, 4] == "—").all()  # loss column: words/dashes, never NaN
    # the same through toggles only
    rerun(at, **{"loss.prompt_len": 0, "loss.masked": list(range(1, 22))})
    assert not at.exception and "No supervised tokens" in texts(at)


def test_logits_to_keep_panel():
    at = open_page("loss", **{"loss.keep": 3})
    assert not at.exception
    page = texts(at)
    assert "[1, 3, 4000]" in page and "[1, 22, 4000]" in page
    assert "up to float32 rounding" in page or "exactly" in page


@pytest.mark.parametrize("state", [
    {"cfg.num_hidden_layers": 1, "cfg.num_attention_heads": 1, "cfg.num_key_value_heads": 1},
    {"cfg.norm_position": "post"},
    {"cfg.position_embedding": "rope", "cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 2},
    {"cfg.hidden_size": 16, "cfg.num_hidden_layers": 48, "cfg.intermediate_size": 32},
    {"input.mode": "random", "input.random_len": 9},
    {"input.text": "😀😀😀"},
])
def test_variants_match_engine(state, charts):
    at = open_page("loss", **state, **{"loss.prompt_len": 2})
    assert not at.exception
    _check_bars(at, charts, state, {0, 1})


def test_empty_text_and_stale_positions():
    at = open_page("loss", **{"input.text": ""})
    assert not at.exception and "The text is empty" in texts(at)
    at = open_page("loss", **{"loss.prompt_len": 10, "loss.masked": [2, 20]})
    rerun(at, settle=False, **{"input.text": "床前明月光"})  # 4 tokens: the stored positions no longer exist
    assert not at.exception
    assert at.session_state["loss.masked"] == [2]
    assert at.session_state["loss.prompt_len"] == 4
    page = texts(at)
    assert "was 10, which is not valid now" in page and "Masked positions 20" in page


def test_nonfinite_model_never_prints_nan():
    at = open_page("loss", **{"cfg.initializer_range": 1e20})
    assert not at.exception
    page = "\n".join(line for line in texts(at).split("\n") if "Numerically broken" not in line)
    assert not re.search(r"\bnan\b", page, re.I)
    assert not re.search(r"\bnan\b", at.dataframe[0].value.to_string(), re.I)
