"""AppTest checks of app_pages/next_token.py against an independent engine computation (see page_helpers)."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
import torch

from tests.page_helpers import open_page, reference, rerun, texts
from ui.figures.next_token import topk_bar


def _check_topk(charts, state: dict, pos: int | None, k: int, temperature: float) -> None:
    model, ids, _ = reference(**state)
    with torch.no_grad():
        logits = model(ids).logits[0, -1 if pos is None else pos].double()  # (V,)
    probs = torch.softmax(logits / temperature, dim=-1)
    top = torch.topk(probs, k)
    bars = charts(topk_bar)
    shown = bars.data["probability"].to_numpy(dtype=np.float64)
    assert len(shown) == k
    assert np.all(np.diff(shown) <= 1e-9), "top-k must be sorted, most likely first"
    assert shown.sum() <= 1.0 + 1e-6
    np.testing.assert_allclose(shown, top.values.numpy(), rtol=1e-4, atol=1e-7)
    assert int(bars.data["token_id"].iloc[0]) == int(top.indices[0])
    bar = bars.figure.data[0]  # the bars show the table: percent, ids in the hover data
    np.testing.assert_allclose(np.asarray(bar.x, dtype=np.float64) / 100.0, shown, rtol=1e-6, atol=1e-9)
    assert [c[0] for c in bar.customdata] == bars.data["token_id"].tolist()


def _greedy(state: dict, n: int) -> tuple[list[int], list[int], object]:
    """Independent argmax loop on full logits (no logits_to_keep)."""
    model, ids, tok = reference(**state)
    new = []
    with torch.no_grad():
        for _ in range(n):
            if ids.shape[1] >= model.config.max_position_embeddings:
                break
            nxt = int(model(ids).logits[0, -1].argmax())
            new.append(nxt)
            ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
    return ids[0, : ids.shape[1] - len(new)].tolist(), new, tok


def _continuation_html(at) -> str:
    return next(m.value for m in at.markdown if "<mark" in m.value)


def test_defaults_topk_and_greedy_continuation(charts):
    at = open_page("next_token")
    assert not at.exception
    _check_topk(charts, {}, None, 10, 1.0)
    prompt, new, tok = _greedy({}, 16)
    shown = _continuation_html(at)
    assert html.escape(tok.decode(prompt)) in shown
    assert f'<mark style="background:#fde68a">{html.escape(tok.decode(new))}</mark>' in shown


def test_temperature_position_and_k(charts):
    at = open_page("next_token", **{"next.position": 3, "next.k": 5, "next.temperature": 0.5})
    assert not at.exception
    _check_topk(charts, {}, 3, 5, 0.5)
    rerun(at, **{"next.temperature": 2.5})
    _check_topk(charts, {}, 3, 5, 2.5)
    assert "The token that actually follows is" in texts(at)


@pytest.mark.parametrize("state", [
    {"cfg.num_hidden_layers": 1, "cfg.num_attention_heads": 1, "cfg.num_key_value_heads": 1},
    {"cfg.norm_position": "post"},
    {"cfg.position_embedding": "rope", "cfg.num_attention_heads": 8, "cfg.num_key_value_heads": 2},
    {"cfg.hidden_size": 16, "cfg.num_hidden_layers": 48, "cfg.intermediate_size": 32},
    {"input.text": "😀😀😀"},
])
def test_variants_match_engine(state, charts):
    at = open_page("next_token", **state, **{"next.new_tokens": 4})
    assert not at.exception
    _check_topk(charts, state, None, 10, 1.0)


def test_random_ids_greedy_shows_ids(charts):
    state = {"input.mode": "random", "input.random_len": 6}
    at = open_page("next_token", **state, **{"next.new_tokens": 5})
    assert not at.exception
    _check_topk(charts, state, None, 10, 1.0)
    prompt, new, _ = _greedy(state, 5)
    assert " ".join(f"#{i}" for i in new) in _continuation_html(at)
    assert "shown as their ids" in texts(at)


def test_sampling_is_reproducible_and_k_clamps_to_vocab():
    at = open_page("next_token", **{"next.greedy": False, "next.new_tokens": 8, "next.temperature": 1.5})
    assert not at.exception
    first = _continuation_html(at)
    at.run()
    assert _continuation_html(at) == first  # init seed: the same sample on every rerun
    rerun(at, settle=False, **{"next.k": 20, "cfg.vocab_size": 16})
    assert not at.exception
    assert at.session_state["next.k"] == 16


def test_position_limit_stops_early_and_empty_text():
    long_text = "床前明月光，疑是地上霜。举头望明月，低头思故乡。" * 12  # > 256 tokens: truncated to the limit
    state = {"input.text": long_text, "cfg.num_hidden_layers": 1, "cfg.hidden_size": 16, "cfg.num_attention_heads": 2,
             "cfg.num_key_value_heads": 2}
    at = open_page("next_token", **state)
    assert not at.exception
    assert "Stopped after 0 of 16 tokens" in texts(at)
    at = open_page("next_token", **{"input.text": ""})
    assert not at.exception and "The text is empty" in texts(at)


def test_position_follows_the_end_of_the_input():
    at = open_page("next_token")
    assert at.session_state["next.position"] == 21  # default: the last of 22 tokens
    rerun(at, settle=False, **{"input.text": "床前明月光"})  # 4 tokens
    assert not at.exception and at.session_state["next.position"] == 3
    rerun(at, **{"next.position": 1})
    rerun(at, settle=False, **{"input.text": "床前明月光，疑是地上霜。"})
    assert at.session_state["next.position"] == 1  # a position the user chose stays put


def test_nonfinite_model_shows_words_not_nan():
    at = open_page("next_token", **{"cfg.initializer_range": 1e20, "cfg.norm_position": "post", "next.greedy": False})
    assert not at.exception
    assert "nothing to generate from" in texts(at)
    assert not any(re.search(r"\bnan\b", c.proto.spec, re.I) for c in at.get("plotly_chart"))
