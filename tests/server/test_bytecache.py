"""server/bytecache.py: entries measured in bytes (against the parameter-count formula), eviction by bytes in
least-recently-used order, one computation per key under concurrency, and the sidebar's caches using it."""

from __future__ import annotations

import threading

import pytest
import torch

from engine import CausalLM, ModelConfig
from analysis.trace import run_trace
from engine.cost import buffer_count, parameter_count
from server import bytecache
from server.bytecache import ByteBudgetCache, byte_cached, tensor_bytes


def config(layers: int, hidden: int = 32, **kw) -> ModelConfig:
    return ModelConfig(vocab_size=64, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=4,
                       intermediate_size=2 * hidden, max_position_embeddings=32, **kw)


@pytest.mark.parametrize("tied,positions", [(True, "learned"), (False, "sinusoidal"), (True, "rope")])
def test_model_bytes_are_its_distinct_weights_and_buffers(tied, positions):
    c = config(2, tie_word_embeddings=tied, position_embedding=positions)
    assert tensor_bytes(CausalLM(c)) == 4 * (parameter_count(c) + buffer_count(c))


def test_trace_bytes_count_shared_storages_once():
    model = CausalLM(config(2))
    out = run_trace(model, torch.zeros(1, 10, dtype=torch.long))
    distinct = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
                for t in [out.logits, *out.hidden_states, *out.attentions, *out.activations.values()]}
    assert tensor_bytes(out) == sum(distinct.values())
    naive = sum(t.numel() * 4 for t in [*out.hidden_states, *out.attentions, *out.activations.values()])
    assert tensor_bytes(out) < naive + out.logits.numel() * 4  # hidden states alias the record's residuals


def test_eviction_keeps_the_bytes_within_budget_oldest_first():
    sizes = {"a": 400, "b": 300, "c": 200, "d": 500}
    cache = ByteBudgetCache(budget=1000, sizeof=lambda v: sizes[v])
    for k in "abc":
        cache.get_or_create(k, lambda k=k: k)
    assert cache.bytes == 900 and len(cache) == 3
    cache.get_or_create("a", lambda: pytest.fail("a is cached"))  # a is now the most recent
    cache.get_or_create("d", lambda: "d")  # 1400 > 1000: evict b (oldest), then c
    assert "a" in cache and "d" in cache and "b" not in cache and "c" not in cache
    assert cache.bytes == 900 <= cache.budget and cache.evictions == 2


def test_an_entry_over_the_whole_budget_is_returned_not_kept():
    cache = ByteBudgetCache(budget=100, sizeof=len)
    assert cache.get_or_create("big", lambda: "x" * 500) == "x" * 500
    assert len(cache) == 0 and cache.bytes == 0


def test_concurrent_requests_for_one_key_compute_it_once():
    cache = ByteBudgetCache(budget=10**6, sizeof=lambda v: 1)
    calls, gate = [], threading.Event()

    def make():
        calls.append(1)
        gate.wait(5)
        return object()

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get_or_create("k", make))) for _ in range(8)]
    for th in threads:
        th.start()
    gate.set()
    for th in threads:
        th.join()
    assert len(calls) == 1 and all(r is results[0] for r in results)


def test_decorator_keys_leave_out_underscore_arguments(monkeypatch):
    monkeypatch.setattr(bytecache, "_SHARED", ByteBudgetCache(budget=10**6, sizeof=lambda v: 1))
    seen = []

    @byte_cached
    def f(_model, key, n=1):
        seen.append((key, n))
        return (key, n)

    assert f(object(), "a") == f(object(), "a", n=1) == ("a", 1)
    f(object(), "a", n=2)
    assert seen == [("a", 1), ("a", 2)]


def test_sidebar_models_and_traces_share_one_byte_budget(monkeypatch):
    from ui import sidebar

    small, big = config(1), config(4, hidden=64)
    budget = tensor_bytes(CausalLM(big)) + 2 * tensor_bytes(CausalLM(small))
    cache = ByteBudgetCache(budget)
    monkeypatch.setattr(bytecache, "_SHARED", cache)
    for seed in range(6):  # six small models, then two big ones: by count these would all fit in 8 entries
        sidebar.build_model(small.to_json(), seed)
    assert len(cache) == 6
    sidebar.build_model(big.to_json(), 0)
    sidebar.build_model(big.to_json(), 1)
    assert cache.bytes <= budget
    assert len(cache) <= 3 and cache.evictions >= 6
    first = sidebar.build_model(big.to_json(), 1)
    assert sidebar.build_model(big.to_json(), 1) is first  # a hit returns the same shared object


# ---- memory that comes back: age, closed sessions, the pages' views under the budget ---------------------------


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_sweep_drops_old_entries_and_those_whose_sessions_all_closed(monkeypatch):
    trims = []
    monkeypatch.setattr(bytecache, "release_memory", lambda: trims.append(1) or True)
    clock, alive, who = Clock(), {"a", "b"}, {"session": None}
    cache = ByteBudgetCache(budget=10**6, sizeof=lambda v: 10, max_age=100, closed_grace=20, clock=clock,
                            session=lambda: who["session"], active=lambda s: s in alive)
    for key, session in [("a only", "a"), ("b only", "b"), ("both", "a"), ("no session", None)]:
        who["session"] = session
        cache.get_or_create(key, lambda: key)
    who["session"] = "b"
    cache.get_or_create("both", lambda: pytest.fail("cached"))  # b uses it too
    alive.discard("a")  # a's tab closes
    clock.now = 15
    assert cache.sweep() == 0 and not trims  # within the grace: kept (a reload reconnects within seconds)
    clock.now = 25
    assert cache.sweep() == 1 and trims == [1]
    assert "a only" not in cache and all(k in cache for k in ("b only", "both", "no session"))
    assert cache.bytes == 30
    who["session"] = None
    clock.now = 90
    cache.get_or_create("b only", lambda: pytest.fail("cached"))  # used again: its age starts over
    clock.now = 101
    assert cache.sweep() == 2 and list(cache._entries) == ["b only"]  # "both" and "no session": unused for 100 s
    assert cache.bytes == 10 and cache.evictions == 3 and trims == [1, 1]


def test_release_memory_never_raises():
    assert bytecache.release_memory() in (True, False)


def test_peek_finds_a_cached_call_and_never_computes(monkeypatch):
    monkeypatch.setattr(bytecache, "_SHARED", ByteBudgetCache(budget=10**6, sizeof=lambda v: 1))
    calls = []

    @byte_cached(hash_funcs={list: tuple})
    def f(items, n):
        calls.append(n)
        return n * 2

    assert f.peek([1], 3) == (False, None) and calls == []
    assert f([1], 3) == 6 and f.peek([1], 3) == (True, 6) and calls == [3]
    assert f.peek([2], 3) == (False, None)  # hash_funcs: the list is keyed by its items


def rss() -> int:
    return bytecache.process_rss()


def test_the_budget_holds_under_a_stream_of_distinct_views_and_evicted_views_recompute_identically(monkeypatch):
    """Forty students on forty configs open Norm placement (the model, its four placements' norms and gradients):
    the store never holds more than its budget, the process's memory grows by far less than what was computed,
    and a view that was evicted comes back equal to what it was."""
    import pandas as pd

    from ui.caches import build_model, views

    budget = 16 * 2**20
    cache = ByteBudgetCache(budget, max_age=3600)
    monkeypatch.setattr(bytecache, "_SHARED", cache)
    ids = tuple(range(1, 17))

    config = ModelConfig(vocab_size=2000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=512, max_position_embeddings=64)

    def open_view(seed: int) -> list[pd.DataFrame]:
        model = build_model(config.to_json(), seed)
        return [*views.placement_comparison(model, ids), views.gradients(model, ids)]

    first = [frame.copy() for frame in open_view(0)]
    for seed in range(1, 4):  # warm: the allocator's and torch's own first-use memory
        open_view(seed)
    start = peak = rss()
    for seed in range(4, 40):
        open_view(seed)
        assert cache.bytes <= budget
        peak = max(peak, rss())
    made = 36 * tensor_bytes(CausalLM(config))  # the models alone, without their views
    assert made > 4 * budget and cache.evictions > 0
    assert peak - start < budget + made / 2, (peak - start, made)  # generous: the evicted views were given back
    assert build_model.peek(config.to_json(), 0) == (False, None)
    for old, new in zip(first, open_view(0)):  # seed 0 was evicted long ago: computed again, the same
        pd.testing.assert_frame_equal(old, new, check_exact=True)


def test_tables_and_arrays_are_measured_and_other_objects_are_not():
    import numpy as np
    import pandas as pd

    class Anything:  # answers every attribute, as Streamlit's element containers do
        def __getattr__(self, name):
            raise AttributeError(name) if name.startswith("__") else RuntimeError(name)

    frame = pd.DataFrame({"x": np.arange(100.0), "name": ["a"] * 100})
    assert tensor_bytes(frame) == frame.memory_usage(deep=True).sum()
    assert tensor_bytes({"a": np.zeros(10), "f": frame["x"]}) == 80 + frame["x"].memory_usage(deep=True)
    assert tensor_bytes([Anything(), "text", 3]) == 0
