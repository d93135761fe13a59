"""analysis/intervention_views.py (and the helpers of analysis/interventions.py the Interventions page calls) on a
tiny seeded model and hand-made tensors: each number against an independent computation (a forward with the head
removed by zeroing its o_proj columns, a residual or head output patched by a forward pre-hook, the cross-entropy
and softmax written out, hand-counted formulas) or a property."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
import torch

from analysis import intervention_views as views
from analysis import interventions as iv
from engine import CausalLM, ModelConfig

V, L, NH, H, PERIOD = 50, 3, 4, 32, 6
HD = H // NH


@pytest.fixture(scope="module")
def model() -> CausalLM:
    torch.manual_seed(0)
    return CausalLM(ModelConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=NH,
                                num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64))


class WordTokenizer:
    """One token per word (id = its place in a fixed word list)."""

    WORDS = ["the", "capital", "of", "France", "Italy", "is", "Paris", "Rome"]

    def encode(self, text: str) -> list[int]:
        return [self.WORDS.index(w) for w in text.split()]


PAIR = iv.PromptPair("the capital of France is", "the capital of Italy is", " Paris", " Rome")


def _second_copy_loss(logits: torch.Tensor, ids: torch.Tensor) -> float:
    """Mean cross-entropy of tokens n+1 .. 2n-1 (predicted at positions n .. 2n-2), written out."""
    logp = torch.log_softmax(logits[0, PERIOD:2 * PERIOD - 1].double(), -1)  # (n-1, V)
    return float(-logp[torch.arange(PERIOD - 1), ids[0, PERIOD + 1:]].mean())


def _o_proj_hook(model: CausalLM, layer: int, change):
    """A forward pre-hook on layer ``layer``'s o_proj whose input ``[B, T, nh*hd]`` is replaced by ``change(x)``."""
    def hook(_module, args):
        return (change(args[0].clone()), *args[1:])
    return model.layers[layer].self_attn.o_proj.register_forward_pre_hook(hook)


def _logits_with(model: CausalLM, ids: torch.Tensor, hooks) -> torch.Tensor:
    """Logits of ``ids`` with the hooks ``[(layer, change), ...]`` in place."""
    handles = [_o_proj_hook(model, layer, change) for layer, change in hooks]
    try:
        with torch.no_grad():
            return model(ids).logits
    finally:
        for h in handles:
            h.remove()


def _zero_head(h: int):
    def change(x: torch.Tensor) -> torch.Tensor:
        x[..., h * HD:(h + 1) * HD] = 0
        return x
    return change


# ---- induction --------------------------------------------------------------------------------------------------
def test_induction_period_fits_two_copies():
    learned = dict(vocab_size=V, hidden_size=H, num_hidden_layers=1, num_attention_heads=NH, intermediate_size=64,
                   position_embedding="learned")
    assert iv.induction_period(ModelConfig(**learned, max_position_embeddings=256)) == iv.INDUCTION_PERIOD
    assert iv.induction_period(ModelConfig(**learned, max_position_embeddings=20)) == 10  # 2 x 10 = 20 positions
    assert iv.induction_period(ModelConfig(**learned, max_position_embeddings=21)) == 10
    assert iv.induction_period(ModelConfig(**learned, max_position_embeddings=3)) == 2  # never below 2
    rope = ModelConfig(vocab_size=V, hidden_size=H, num_hidden_layers=1, num_attention_heads=NH, intermediate_size=64,
                       max_position_embeddings=8, position_embedding="rope")
    assert not rope.has_position_limit and iv.induction_period(rope) == iv.INDUCTION_PERIOD


def test_score_frame_by_hand():
    # one layer, two heads, T = 4 (period 2): head 0 attends to the previous token, head 1 to key t - n + 1
    prev = torch.tensor([[1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]], dtype=torch.float)
    ind = torch.tensor([[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.2, 0.8, 0, 0], [0, 0.4, 0.6, 0]], dtype=torch.float)
    frame = iv.score_frame((torch.stack([prev, ind])[None],), period=2)  # attentions: one (1, nh, T, T)
    assert list(frame.columns) == ["layer", "head", "prev_token", "induction"]
    assert frame[["layer", "head"]].values.tolist() == [[0, 0], [0, 1]]
    # previous-token: mean of a[t, t-1] for t = 1..3; induction: mean of a[t, t-1] for t = 2, 3 (key t - n + 1)
    np.testing.assert_allclose(frame.prev_token, [(1 + 1 + 1) / 3, (0.5 + 0.8 + 0.6) / 3], rtol=1e-6)
    np.testing.assert_allclose(frame.induction, [(1 + 1) / 2, (0.8 + 0.6) / 2], rtol=1e-6)


def test_head_scores_is_one_forward_of_the_model(model):
    ids = iv.induction_ids(model, period=PERIOD)
    frame = views.head_scores(model, ids, PERIOD)
    with torch.no_grad():
        att = model(ids, output_attentions=True).attentions  # L x (1, nh, T, T)
    assert len(frame) == L * NH
    for row in frame.itertuples():
        a = att[row.layer][0, row.head].double()  # (T, T)
        t = torch.arange(PERIOD, 2 * PERIOD)
        assert row.prev_token == pytest.approx(float(a.diagonal(-1).mean()), rel=1e-5)
        assert row.induction == pytest.approx(float(a[t, t - PERIOD + 1].mean()), rel=1e-5)


def test_induction_experiment_groups_against_heads_zeroed_by_hand(model):
    ids = iv.induction_ids(model, period=PERIOD, seed=2)
    seen = []
    frame, summary, groups = views.induction_experiment(model, ids, PERIOD, progress=lambda d, t: seen.append(d / t))
    assert seen and seen[-1] == pytest.approx(1.0)
    assert [g for g, _, _ in groups] == ["prev", "induction", "pair", "top3", "top10"]  # 3, 10 < 12 heads
    got = {g: (heads, loss) for g, heads, loss in groups}
    p, i = summary["prev_head"], summary["induction_head"]
    assert got["prev"][0] == [(p["layer"], p["head"])] and got["induction"][0] == [(i["layer"], i["head"])]
    increase = frame.pivot(index="layer", columns="head", values="increase").to_numpy()  # (L, nh)
    order = np.argsort(-increase.reshape(-1), kind="stable")
    assert got["top3"][0] == [divmod(int(j), NH) for j in order[:3]]
    for name, (heads, loss) in got.items():
        hooks = [(l, _zero_head(h)) for l, h in sorted(set(heads))]
        assert loss == pytest.approx(_second_copy_loss(_logits_with(model, ids, hooks), ids), rel=1e-4), name
    assert [g for g, _, _ in views.induction_experiment(model, ids, PERIOD, top_k=(3, 12))[2]] == [
        "prev", "induction", "pair", "top3"]  # top 12 of 12 heads is no group


def test_forwards_counted_by_hand(model):
    T = 5
    heads = NH * (L + 1) / 2  # every head once: a run from layer l costs (L - l) / L of a forward
    assert views.induction_forwards(model, T) == pytest.approx(heads + 2 + 2)
    assert views.induction_forwards(model, T, top_k=(3,)) == pytest.approx(heads + 2 + 1)
    residual, rest = views.pair_forwards(model, T)
    assert residual == pytest.approx((L * (L + 1) / 2) * (T * (T + 1) / 2) / (L * T))
    assert rest == pytest.approx(heads * iv.MATTER_LAYERS / L)


# ---- prompt pairs -----------------------------------------------------------------------------------------------
def test_pair_experiment_is_both_sweeps_with_one_progress(model):
    check = iv.check_pair(WordTokenizer(), PAIR)
    seen = []
    res_frame, res, layers, z_frame, zs = views.pair_experiment(model, check, progress=lambda d, t: seen.append((d, t)))
    want_res, want_summary = iv.residual_patching(model, check)
    pd.testing.assert_frame_equal(res_frame, want_res)
    assert res == want_summary
    assert layers == iv.layers_that_matter(want_res) and len(layers) == min(iv.MATTER_LAYERS, L)
    pd.testing.assert_frame_equal(z_frame, iv.head_patching(model, check, layers)[0])
    assert set(z_frame.layer) == set(layers) and zs["best"] is not None
    done = [d for d, _ in seen]
    assert done == sorted(done) and seen[-1][0] == pytest.approx(seen[-1][1])  # forward only, ends complete
    first, rest = views.pair_forwards(model, check.clean_ids.shape[1])
    assert seen[0][1] == pytest.approx(first + rest)  # the first report already counts the second sweep's estimate


# ---- around a sweep ---------------------------------------------------------------------------------------------
def test_forward_seconds_is_the_fastest_of_its_runs():
    calls = []

    class Slow:
        """A model whose first forward takes 50 ms, the others none."""

        def __call__(self, x):
            calls.append(x)
            time.sleep(0.05 if len(calls) == 1 else 0.0)

    ids = torch.zeros(1, 3, dtype=torch.long)
    s = views.forward_seconds(Slow(), ids, repeats=3)
    assert len(calls) == 3 and all(c is ids for c in calls)
    assert 0 <= s < 0.05  # the first (slow) run is not the one reported


def test_next_token_probs_is_the_softmax_written_out(model):
    ids = torch.tensor([[3, 1, 4, 1, 5]])
    p = views.next_token_probs(model, ids)
    with torch.no_grad():
        z = model(ids).logits[0, -1].double().numpy()  # (V,)
    e = np.exp(z - z.max())
    assert p.dtype == torch.float64 and p.shape == (V,)
    np.testing.assert_allclose(p.numpy(), e / e.sum(), rtol=1e-10)


def test_cell_interventions_against_hooks(model):
    check = iv.check_pair(WordTokenizer(), PAIR)
    clean, corrupt = check.clean_ids, check.corrupt_ids  # (1, 5) each
    clean_t = tuple(clean[0].tolist())

    def run(what) -> torch.Tensor:
        with torch.no_grad():
            return model(corrupt, interventions=views.cell_interventions(model, what)).logits

    # a head removed = its o_proj input columns zero
    torch.testing.assert_close(run(("ablate", 1, 2)), _logits_with(model, corrupt, [(1, _zero_head(2))]))
    # a head's output patched from the clean run: its o_proj input columns from the clean run's
    seen = {}
    handle = _o_proj_hook(model, 2, lambda x: seen.setdefault("x", x.clone()))
    with torch.no_grad():
        model(clean)
    handle.remove()

    def from_clean(x: torch.Tensor) -> torch.Tensor:
        x[..., 3 * HD:4 * HD] = seen["x"][..., 3 * HD:4 * HD]
        return x
    torch.testing.assert_close(run(("z", 2, 3, clean_t)), _logits_with(model, corrupt, [(2, from_clean)]))
    # the residual stream at (layer, position) patched: a pre-hook on the block puts the clean run's value there
    with torch.no_grad():
        hidden = model(clean, output_hidden_states=True).hidden_states  # hidden[l]: block l's input

    def patch(_module, args):
        x = args[0].clone()
        x[:, 3] = hidden[1][:, 3]
        return (x, *args[1:])
    handle = model.layers[1].register_forward_pre_hook(patch)
    try:
        with torch.no_grad():
            want = model(corrupt).logits
    finally:
        handle.remove()
    torch.testing.assert_close(run(("resid", 1, 3, clean_t)), want)


def test_head_pattern_change_by_hand():
    before = torch.tensor([[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.2, 0.8, 0, 0], [0, 0.4, 0.6, 0]])
    after = before.clone()
    after[3, 2], after[3, 0] = 0.2, 0.3  # the largest change on or below the diagonal: 0.6 -> 0.2 at (3, 2)
    after[0, 3] = 0.9  # above the diagonal (a key the query cannot see): not a change
    other = torch.rand(4, 4)  # head 0: a distraction; head 1 is read
    change = views.head_pattern_change((torch.stack([other, before]), torch.stack([other, after])), head=1, period=2)
    assert (change["query"], change["key"]) == (3, 2) and change["delta"] == pytest.approx(0.4)
    assert change["before"].shape == (4, 4) and np.isnan(change["after"].iloc[0, 3])
    assert np.isnan(change["before"].to_numpy()[np.triu_indices(4, 1)]).all()
    assert change["after"].iloc[3, 2] == pytest.approx(0.2)
    # induction score, period 2: mean of a[t, t - 1] for t = 2, 3
    assert change["scores"] == pytest.approx(((0.8 + 0.6) / 2, (0.8 + 0.2) / 2))
    assert views.head_pattern_change((before[None], after[None]), head=0)["scores"] is None


def test_top_tokens_union_by_hand():
    before = torch.tensor([0.5, 0.3, 0.1, 0.1], dtype=torch.float64)
    after = torch.tensor([0.1, 0.1, 0.2, 0.6], dtype=torch.float64)
    tok = iv.top_tokens(before, after, lambda ids: [f"t{i}" for i in ids], k=2)
    # top 2 before: 0, 1; after: 3, 2; ranked by before (3 and 2 tie at 0.1: the union's order is kept)
    assert tok.token_id.tolist() == [0, 1, 3, 2] and tok.token.tolist() == ["t0", "t1", "t3", "t2"]
    np.testing.assert_allclose(tok.before, [0.5, 0.3, 0.1, 0.1])
    np.testing.assert_allclose(tok.after, [0.1, 0.1, 0.6, 0.2])


def test_together_table_and_heads_text():
    assert views.heads_text([(0, 1), (2, 3)]) == "1.2, 3.4" and views.heads_text([]) == ""
    groups = [("prev", [(0, 0)], 2.5), ("top3", [(1, 1), (0, 2), (2, 0)], 3.0)]
    table = views.together_table(1.5, groups, str.upper)
    assert table.to_dict("list") == {"label": ["NONE", "PREV", "TOP3"], "heads": ["", "1.1", "2.2, 1.3, 3.1"],
                                     "loss": [1.5, 2.5, 3.0]}
