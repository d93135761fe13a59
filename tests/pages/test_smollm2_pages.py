"""Every page runs on SmolLM2-135M-Instruct picked in the sidebar (the package's GGUF file, converted once)."""

from __future__ import annotations


import pytest
from streamlit.testing.v1 import AppTest

from tests.page_helpers import open_page
from ui import caches, checkpoint_picker

PAGES = ["overview", "norms", "prepost", "attention", "loss", "next_token", "train"]

pytestmark = pytest.mark.smollm2


def open_on_smollm2(page: str, text: str = "The capital of France is") -> AppTest:
    return open_page(page, via="script", defaults=False, timeout=600,
                     **{"model.source": "checkpoint", "input.text": text})


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_on_smollm2(page):
    at = open_on_smollm2(page)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["model.checkpoint"] == "smollm2-135m"  # listed first
    # the link names the model by its ids, the first entry too (issue 21: a link opened the random-init model)
    assert (at.query_params["model.source"], at.query_params["model.checkpoint"]) == ("checkpoint", "smollm2-135m")
    caption = " ".join(c.value for c in at.sidebar.caption)
    assert "`␣Paris`" not in caption and "`␣capital`" in caption  # SmolLM2's own byte-level pieces
    config_rows = at.sidebar.dataframe[0].value  # the read-only configuration
    assert "30" in config_rows.to_string() and "576" in config_rows.to_string()
    if page == "train":
        text = " ".join(c.value for c in at.caption)
        assert "134.5 M parameters" in text and "1.5 GiB" in text and "30 blocks" in text
    else:
        assert at.get("plotly_chart"), f"no chart on {page}"
    if page == "overview":  # the parity badge: green, with both checks' numbers
        md = " ".join(m.value for m in at.markdown)
        assert ":green-badge[" in md and "Parity: max |Δlogit|" in md, md[:500]
        assert "**This text** (5 tokens)" in md and "**Reference prompts** (2 prompts" in md
    if page == "loss":  # logits_to_keep: float32 rounding at SmolLM2's logit scale is not reported as a bug
        assert any("up to float32 rounding" in s.value or "exactly" in s.value for s in at.success)


def test_smollm2_hidden_without_the_package(monkeypatch):
    for module in (caches, checkpoint_picker):
        monkeypatch.setattr(module, "named_models", lambda: [])
    at = open_on_smollm2("overview")
    assert not at.exception
    options = [o for box in at.sidebar.selectbox for o in box.options]
    assert not any("SmolLM2" in o for o in options)


def test_costly_sections_wait_for_their_buttons_on_smollm2():
    """On SmolLM2 a whole page costs its first charts: Norm placement's gradients (a forward and a backward per
    placement), Next token's continuation (16 decode steps) and, on a longer text, Loss's logits_to_keep check (two
    forwards) and the logit lens of the positions its heatmap does not draw wait for their buttons. Pressed, they are drawn; the continuation is greedy decoding by full forwards
    without a KV cache, computed here independently."""
    import torch

    from ui.caches.views import continuation

    at = open_on_smollm2("prepost")
    assert "prepost.grads_run" in [b.key for b in at.button]
    charts = len(at.get("plotly_chart"))
    at.button(key="prepost.grads_run").click().run()
    assert not at.exception and "prepost.grads_run" not in [b.key for b in at.button]
    assert len(at.get("plotly_chart")) == charts + 1  # the gradient chart

    at = open_on_smollm2("next_token")
    assert "next.continuation_run" in [b.key for b in at.button] and not any("<mark" in m.value for m in at.markdown)
    at.button(key="next.continuation_run").click().run()
    assert not at.exception and any("<mark" in m.value for m in at.markdown)
    model, tokenizer = caches.load_checkpoint("smollm2-135m")
    ids = tokenizer.encode("The capital of France is")
    expected = list(ids)
    with torch.no_grad():
        for _ in range(16):
            expected.append(int(model(torch.tensor([expected])).logits[0, -1].argmax()))
    assert continuation.peek(model, tuple(ids), 16, 1.0, True, 0) == (True, expected[len(ids):])

    long_text = "The capital of France is Paris, and the capital of Italy is Rome; the capital of Spain is Madrid."
    at = open_on_smollm2("loss", long_text)  # 2 forwards of ~25 tokens: above the 10 GFLOP drawn at once
    assert "loss.keep_check_run" in [b.key for b in at.button] and not at.success
    at.button(key="loss.keep_check_run").click().run()
    assert not at.exception and any("float32 rounding" in s.value or "exactly" in s.value for s in at.success)

    from ui.caches.views import lens_whole
    at = open_on_smollm2("lens", long_text)  # the heatmap decodes its 20 positions, the other ~5 wait
    assert not at.exception and "lens.all_run" in [b.key for b in at.button] and at.get("plotly_chart")
    long_ids = tuple(tokenizer.encode(long_text))
    median = "Over all "  # lens.median_sentence
    assert lens_whole(model, long_ids) == (False, None) and not any(m.value.startswith(median) for m in at.markdown)
    at.button(key="lens.all_run").click().run()
    assert not at.exception and "lens.all_run" not in [b.key for b in at.button]
    assert any(m.value.startswith(f"{median}{len(long_ids)} positions") for m in at.markdown)
    assert lens_whole(model, long_ids)[0]  # decoded once, for every session
