"""Work a class shares: a decode run computed once for every session on the same run (and counted by the byte
store as it grows), a logit-lens table computed once while several sessions ask for it, and the page views'
line for large computations (one at a time, in order of arrival, re-entrant)."""

from __future__ import annotations

import json
import threading

import pytest
import torch

from engine import ModelConfig
from tests.page_helpers import open_page
from server import admission, bytecache
from ui import stepper
from server.bytecache import ByteBudgetCache, tensor_bytes
from ui.caches import build_model, views


@pytest.fixture
def decode_calls(monkeypatch):
    calls = []
    real = stepper.decode_step

    def counting(*args, **kwargs):
        calls.append(kwargs["step"])
        return real(*args, **kwargs)

    monkeypatch.setattr(stepper, "decode_step", counting)
    return calls


def press(at, times: int):
    for _ in range(times):
        at.button(key="gen.next").click().run()
    assert not at.exception, at.exception
    return at


def test_sessions_on_one_run_share_its_steps(decode_calls):
    bytecache.shared_cache().clear()
    a = press(open_page("generate", **{"gen.seed": 11}), 3)
    assert decode_calls == [0, 1, 2]
    b = press(open_page("generate", **{"gen.seed": 11}), 2)  # a second student, same link: nothing recomputed
    assert decode_calls == [0, 1, 2]
    assert b.session_state["gen._run"].ids == a.session_state["gen._run"].ids[:-1]
    press(b, 2)  # one step past the first student: only that step is computed
    assert decode_calls == [0, 1, 2, 3]
    assert b.session_state["gen._run"].ids[:-1] == a.session_state["gen._run"].ids
    press(open_page("generate", **{"gen.seed": 12}), 1)  # another seed is another run
    assert decode_calls == [0, 1, 2, 3, 0]


def test_a_shared_run_view_is_its_prefix_and_the_store_counts_its_growth():
    config = ModelConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=64)
    model = build_model(json.dumps(config.to_dict(), sort_keys=True), 0)
    run = stepper.prefill(model, ("k",), [1, 2, 3])
    sampling = stepper.Sampling(False, 1.0, 0, 1.0, 0.0, 0)
    before = tensor_bytes(run)
    for _ in range(4):
        stepper.advance(model, run, sampling, lambda prefix, ids: [str(i) for i in ids])
    kv = 2 * 2 * 4 * 8 * 4  # K and V, 2 layers, 4 KV heads, head_dim 8, float32: bytes per position
    assert tensor_bytes(run) >= before + 4 * kv + 4 * 64 * 4  # 4 more positions and 4 more logit rows
    view = run.at(2)
    assert view.ids == [1, 2, 3] + run.tokens[:2] and len(view.steps) == 2
    assert view.cache.get_seq_length() == 5 and torch.equal(view.logits, run.logits[2])
    with torch.no_grad():  # the cut cache is the cache of that prefix: the next logits match a full forward
        full = model(torch.tensor([view.ids])).logits[0, -1]
    torch.testing.assert_close(view.logits, full, atol=1e-5, rtol=0)
    store = ByteBudgetCache(budget=10_000, sizeof=lambda v: v["size"])
    small, grows = {"size": 3_000}, {"size": 3_000}
    store.get_or_create("old", lambda: small)
    store.get_or_create("run", lambda: grows)
    grows["size"] = 8_000
    store.remeasure("run")  # 11,000 > 10,000: the older entry goes, the run stays and is counted at its size
    assert "old" not in store and "run" in store and store.bytes == 8_000


def test_one_lens_table_for_sessions_asking_at_once(monkeypatch):
    config = ModelConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=64)
    model = build_model(json.dumps(config.to_dict(), sort_keys=True), 7)
    calls, started, gate = [], threading.Event(), threading.Event()
    real = views.lens.logit_lens

    def slow(*args, **kwargs):
        calls.append(1)
        started.set()
        assert gate.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(views.lens, "logit_lens", slow)
    ids, results, fractions = (5, 6, 7, 8), [], []
    threads = [threading.Thread(target=lambda: results.append(views.lens_table(model, ids, fractions.append)))
               for _ in range(3)]
    threads[0].start()
    assert started.wait(30)
    for th in threads[1:]:
        th.start()
    gate.set()
    for th in threads:
        th.join(30)
    assert calls == [1] and len(results) == 3
    assert all(r is results[0] for r in results)
    assert len(results[0]) == (config.num_hidden_layers + 1) * len(ids)


def test_the_views_line_serves_in_order_of_arrival_and_is_reentrant(monkeypatch):
    monkeypatch.setattr(admission, "_VIEWS", admission.Admission(1))
    order, holding = [], threading.Event()

    def first():
        with admission.view_slot():
            with admission.view_slot():  # a trace asked for inside a lens computation: no wait for itself
                holding.set()
                while admission.view_line().waiting < 4:
                    threading.Event().wait(0.01)
                order.append(0)

    def later(i):
        with admission.view_slot():
            order.append(i)

    threads = [threading.Thread(target=first)]
    threads[0].start()
    assert holding.wait(30)
    for i in range(1, 5):  # each one in line before the next arrives
        th = threading.Thread(target=later, args=(i,))
        th.start()
        threads.append(th)
        while admission.view_line().waiting < i:
            threading.Event().wait(0.01)
    for th in threads:
        th.join(30)
    assert order == [0, 1, 2, 3, 4]


def test_lens_tables_and_the_attention_grid_count_in_the_byte_budget(monkeypatch):
    """Both live in the server's byte store, measured: a budget too small for them keeps neither, and the next ask
    computes the same table and figure again; each run gets its own copy of the grid (a page styles it)."""
    import pandas as pd

    config = ModelConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=64)
    model = build_model(json.dumps(config.to_dict(), sort_keys=True), 11)
    ids = (3, 1, 4, 1, 5)
    roomy = ByteBudgetCache(budget=2**30)
    monkeypatch.setattr(bytecache, "_SHARED", roomy)
    table = views.lens_table(model, ids, lambda _f: None)
    fig = views.attention_grid(model, ids, 4, "en")
    held = {name.rsplit(".", 1)[-1] for name, _n, _b in roomy.held()}
    assert {"lens_table", "_attention_grid"} <= held, held
    assert roomy.bytes >= int(table.memory_usage(deep=True).sum()) + views.figure_bytes(fig) > 0
    again = views.attention_grid(model, ids, 4, "en")
    assert again is not fig and again.to_json() == fig.to_json()
    tight = ByteBudgetCache(budget=1)
    monkeypatch.setattr(bytecache, "_SHARED", tight)
    pd.testing.assert_frame_equal(views.lens_table(model, ids, lambda _f: None), table, check_exact=True)
    assert views.attention_grid(model, ids, 4, "en").to_json() == fig.to_json()
    assert len(tight) == 0 and tight.bytes == 0


def test_a_lens_window_is_the_whole_tables_cells_once_some_session_decoded_it(monkeypatch):
    """A heatmap's window (some positions and depths) is decoded on its own until some session decoded the whole
    table; from then on it is that table's rows, not decoded again."""
    import pandas as pd

    config = ModelConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64, max_position_embeddings=64)
    model = build_model(json.dumps(config.to_dict(), sort_keys=True), 12)
    ids = (2, 7, 1, 8, 2, 8)
    monkeypatch.setattr(bytecache, "_SHARED", ByteBudgetCache(budget=2**30))
    window = views.lens_table(model, ids, lambda _f: None, (3, 4), (1, 2))  # decoded alone: the 2 x 2 cells
    assert sorted(zip(window["depth"], window["position"])) == [(1, 3), (1, 4), (2, 3), (2, 4)]
    assert views.lens_whole(model, ids) == (False, None)
    whole = views.lens_table(model, ids, lambda _f: None)
    assert views.lens_whole(model, ids)[0] and len(whole) == 3 * 6

    def refuse(*_args, **_kwargs):
        raise AssertionError("decoded again")

    monkeypatch.setattr(views.lens, "logit_lens", refuse)
    other = views.lens_table(model, ids, lambda _f: None, (0, 5), None)  # a window never decoded on its own
    expected = whole[whole["position"].isin((0, 5))].reset_index(drop=True)
    pd.testing.assert_frame_equal(other, expected, check_exact=True)
    pd.testing.assert_frame_equal(window, whole[whole["position"].isin((3, 4)) & whole["depth"].isin((1, 2))]
                                  .reset_index(drop=True), check_exact=False, rtol=1e-6)


def test_sessions_copying_the_shared_attention_grid_at_once_each_get_the_whole_figure(monkeypatch):
    """A class's sessions draw the Attention page at the same moment: each run's copy of the shared grid is the
    figure itself (every trace a heatmap, the same JSON), never a trace read while another session's copy had
    taken it apart (plotly's constructors write into what they copy from; found by a lecturer's two tabs)."""
    config = ModelConfig(vocab_size=64, hidden_size=32, num_hidden_layers=4, num_attention_heads=8,
                         intermediate_size=64, max_position_embeddings=64)
    model = build_model(json.dumps(config.to_dict(), sort_keys=True), 5)
    ids = (3, 1, 4, 1, 5, 9, 2, 6)
    monkeypatch.setattr(bytecache, "_SHARED", ByteBudgetCache(budget=2**30))
    first = views.attention_grid(model, ids, 8, "en").to_json()
    errors, copies = [], []

    def session() -> None:
        try:
            for _ in range(15):
                copies.append(views.attention_grid(model, ids, 8, "en"))
        except Exception as err:  # noqa: BLE001 - the failure is the finding
            errors.append(repr(err))

    threads = [threading.Thread(target=session) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors[:3]
    assert len(copies) == 60
    assert all({tr.type for tr in fig.data} == {"heatmap"} and len(fig.data) == 32 for fig in copies)
    assert all(fig.to_json() == first for fig in copies[::10])
