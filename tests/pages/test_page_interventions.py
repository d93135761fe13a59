"""AppTest checks of app_pages/interventions.py on the default random model (its sweeps run at once, in the page),
against an independent computation: a fresh model whose head is removed by zeroing its ``o_proj`` columns, and
whose residual stream is patched by a forward pre-hook on the block (never the engine's interventions)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from analysis.heads import repeated_random_tokens
from analysis.tokenizers import special_ids
from tests.page_helpers import open_page, recording_charts, reference, rerun
from ui.figures.interventions import effect_map, tokens_bars

PERIOD = 24
OWN = {"interv.experiment": "own", "interv.own.clean": "床前明月光", "interv.own.corrupt": "床前明月霜",
       "interv.own.correct": "，", "interv.own.wrong": "。"}


def _texts(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [w.value for w in at.warning]
                     + [s.value for s in at.subheader])


def _second_copy_loss(logits: torch.Tensor, ids: torch.Tensor) -> float:
    """Mean cross-entropy of tokens n+1 .. 2n-1 (predicted at positions n .. 2n-2), by hand."""
    logp = torch.log_softmax(logits[0, PERIOD:2 * PERIOD - 1].double(), -1)
    return float(-logp[torch.arange(PERIOD - 1), ids[0, PERIOD + 1:]].mean())


def _without_head(model, layer: int, head: int):
    """A copy of ``model`` whose head's o_proj input columns are zero (the head removed)."""
    import copy

    m = copy.deepcopy(model)
    hd = m.config.hidden_size // m.config.num_attention_heads
    with torch.no_grad():
        m.layers[layer].self_attn.o_proj.weight[:, head * hd:(head + 1) * hd] = 0
    return m


@pytest.fixture(scope="module")
def induction():
    with recording_charts() as calls:
        at = open_page("interventions", via="script", **{"interv.experiment": "induction"})
        frame = calls.data(effect_map, value="increase")
    return at, frame


@pytest.fixture(scope="module")
def ref():
    model, _, tok = reference()
    ids = repeated_random_tokens(model.config.vocab_size, PERIOD, seed=0, exclude=special_ids(tok))
    return model, ids


def test_induction_map_is_every_head_removed(induction, ref):
    at, frame = induction
    assert not at.exception, at.exception
    model, ids = ref
    with torch.no_grad():
        base = _second_copy_loss(model(ids).logits, ids)
    L, nh = model.config.num_hidden_layers, model.config.num_attention_heads
    expected = np.array([[_second_copy_loss(_without_head(model, l, h)(ids).logits, ids) - base for h in range(nh)]
                         for l in range(L)])
    got = frame.pivot(index="layer", columns="head", values="increase").to_numpy()
    np.testing.assert_allclose(got, expected, atol=2e-4)
    text = _texts(at)
    assert f"Plain run: {base:.2f} nats" in text
    assert "random weights: nothing causal is expected" in text
    top = np.unravel_index(int(np.argmax(expected)), expected.shape)
    assert f"removing layer {top[0] + 1} head {top[1] + 1}" in text  # random weights: "no single head matters much"


def test_clicked_head_shows_before_and_after(induction, ref):
    at, _ = induction
    model, ids = ref
    with recording_charts() as calls:
        rerun(at, **{"interv.layer": 1, "interv.head": 2, "interv.watch_layer": 2, "interv.watch_head": 1,
                     "interv.ba_position": 40})
        tokens = calls.data(tokens_bars)
    assert not at.exception, at.exception
    assert "What changed: layer 1 head 2 removed" in [s.value for s in at.subheader]
    cut = _without_head(model, 0, 1)
    with torch.no_grad():
        p0 = torch.softmax(model(ids).logits[0, 40].double(), -1)
        p1 = torch.softmax(cut(ids).logits[0, 40].double(), -1)
    np.testing.assert_allclose(tokens["before"], p0[tokens["token_id"].tolist()].numpy(), rtol=1e-4)
    np.testing.assert_allclose(tokens["after"], p1[tokens["token_id"].tolist()].numpy(), rtol=1e-4)
    assert "Largest change in this head's pattern" in _texts(at)  # layer 2 comes after the removed head


@pytest.fixture(scope="module")
def own():
    with recording_charts() as calls:
        at = open_page("interventions", via="script", **OWN)
        frame = calls.data(effect_map, column="position")
    return at, frame


def test_own_pair_residual_patching_against_hooks(own):
    at, frame = own
    assert not at.exception, at.exception
    model, _, tok = reference()
    clean, corrupt = (torch.tensor([tok.encode(s)]) for s in (OWN["interv.own.clean"], OWN["interv.own.corrupt"]))
    c, w = tok.encode(OWN["interv.own.correct"])[0], tok.encode(OWN["interv.own.wrong"])[0]
    with torch.no_grad():
        hidden = model(clean, output_hidden_states=True).hidden_states  # hidden[l] = block l's input
        diff = lambda logits: float(logits[0, -1, c] - logits[0, -1, w])  # noqa: E731
        d_clean, d_corrupt = diff(model(clean).logits), diff(model(corrupt).logits)
        for row in frame.itertuples():
            def patch(_module, args, l=row.layer, p=row.position):
                x = args[0].clone()
                x[:, p] = hidden[l][:, p]
                return (x, *args[1:])
            handle = model.layers[row.layer].register_forward_pre_hook(patch)
            try:
                d = diff(model(corrupt).logits)
            finally:
                handle.remove()
            assert row.logit_diff == pytest.approx(d, abs=1e-4)
            assert row.restored == pytest.approx((d - d_corrupt) / (d_clean - d_corrupt), abs=1e-3)
    assert "Clean: 4 tokens · corrupted: 4 tokens." in _texts(at)


def test_own_pair_of_different_lengths_is_refused(own):
    at, _ = own
    rerun(at, **{"interv.own.corrupt": "床前明月光光"})
    assert not at.exception, at.exception
    assert any("different lengths in tokens (4 and 5)" in w.value for w in at.warning)


def test_page_in_chinese():
    at = open_page("interventions", via="script", lang="zh", **{"interv.experiment": "induction"})
    assert not at.exception, at.exception
    assert at.title[0].value.startswith("干预实验")
    text = _texts(at)
    assert "第二遍上的损失" in text and "随机的" in text
    assert not any(s in text for s in ("Removing", "nothing causal", "What changed"))
