"""Many simultaneous sessions: 20 AppTest sessions in threads, each on its own config, sharing the
process-wide ``st.cache_resource`` (as sessions of one ``streamlit run`` server do).

Checks:
    * each session sees its own config (the page's config JSON) and its own results (the parameter total in
      the overview chart title equals an independent ``CausalLM(config).num_parameters()``);
    * every model a session got from the shared cache has exactly the weights of an independent
      ``torch.manual_seed(seed); CausalLM(config)`` (concurrent builds must not interleave on torch's global
      RNG), and afterwards is unchanged (checksum), in eval mode, without hooks and without ``.grad``.

AppTest is not written for threads: every run installs a mock ``Runtime._instance`` and sets it back to None
when it ends, and patches the ``global.appTest`` option around the run, so overlapping runs would pull the
runtime from under each other ("Runtime hasn't been created!"). The ``apptest_threads`` fixture keeps one
mock runtime available whenever ``_instance`` is None and holds ``global.appTest`` on for the whole test;
the scripts themselves still run concurrently, each in its own ScriptRunner thread, as on a server.

First visits race (python/cpython#106905, see ``server/startup.py``): the ``forced_thread_switches`` fixture lets
another thread run inside every garbage-collection pass, which is where two threads building AST objects
interleave; with it, the 20 first visits of the old set-up (Streamlit's magic compiling each page through
``ast.parse`` in every session thread) failed with "SystemError: AST constructor recursion depth mismatch".

20 sessions take ~30-40 s on 2 cores (each session: 2 runs of the overview page; the models are small).
"""

from __future__ import annotations

import ast
import gc
import inspect
import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from engine import CausalLM
from tests.model_helpers import checksum
from tests.page_helpers import open_page, shown_chart, state_config
from ui import sidebar

N_SESSIONS = 20


def _state(i: int) -> dict:
    """Session i's sidebar: hidden 16..64, 1..5 layers, its own seed, some Post-Norm / RMSNorm / RoPE / GQA."""
    return {
        "cfg.hidden_size": [16, 32, 48, 64][i % 4],
        "cfg.num_hidden_layers": 1 + i % 5,
        "cfg.num_attention_heads": 2 if i % 3 else 4,
        "cfg.num_key_value_heads": 1 if i % 7 == 0 else (2 if i % 3 else 4),
        "cfg.norm_position": "post" if i % 2 else "pre",
        "cfg.norm_type": "rmsnorm" if i % 4 == 1 else "layernorm",
        "cfg.position_embedding": "rope" if i % 5 == 2 else "learned",
        "cfg.seed": 1000 + i,
    }


def _clean(model: torch.nn.Module) -> list[str]:
    """Problems that a shared model must never have: training mode, hooks, gradients."""
    bad = []
    if model.training:
        bad.append("training mode")
    for name, m in model.named_modules():
        for attr in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
                     "_state_dict_hooks", "_load_state_dict_pre_hooks"):
            if getattr(m, attr, None):
                bad.append(f"{name or 'model'}.{attr}")
        if m.training:
            bad.append(f"{name or 'model'} training")
    bad += [f"{n}.grad" for n, p in model.named_parameters() if p.grad is not None]
    return bad


def _session(i: int) -> dict:
    at = open_page(settle=False, timeout=180, **_state(i))  # DEFAULTS, English, then session i's sidebar
    charts = at.get("plotly_chart")
    if not charts:
        return {"i": i, "exception": [e.message for e in at.exception] or ["no chart: " + repr(
            [(e.type, str(getattr(e, "value", ""))[:200]) for e in at.main][:8])], "total": None, "config": None}
    title = shown_chart(at, "overview.params")["layout"]["title"]["text"]
    total = int(re.search(r"\(([\d,]+) in total\)", title).group(1).replace(",", ""))
    shown_config = json.loads(at.get("code")[0].value)
    return {"i": i, "exception": [e.message for e in at.exception], "total": total, "config": shown_config}


@pytest.fixture()
def apptest_threads(monkeypatch):
    """Let AppTest runs overlap in threads (see the module docstring)."""
    from unittest.mock import MagicMock

    from streamlit import config as st_config
    from streamlit.runtime import Runtime
    from streamlit.runtime.caching.storage.dummy_cache_storage import MemoryCacheStorageManager
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    fallback = MagicMock(spec=Runtime)
    fallback.media_file_mgr = MediaFileManager(MemoryMediaFileStorage("/mock/media"))
    fallback.cache_storage_manager = MemoryCacheStorageManager()
    monkeypatch.setattr(Runtime, "instance", classmethod(lambda cls: cls._instance or fallback))
    monkeypatch.setattr(Runtime, "exists", classmethod(lambda cls: True))
    old = st_config.get_option("global.appTest")
    st_config.set_option("global.appTest", True)
    yield
    st_config.set_option("global.appTest", old)


@pytest.fixture()
def recorded_builds(monkeypatch):
    """Every (config_json, seed, model) that ``ui.sidebar.build_model`` hands to a session during the test."""
    seen: list[tuple[str, int, CausalLM]] = []
    lock = threading.Lock()
    real = sidebar.build_model

    def recording(config_json: str, seed: int):
        model = real(config_json, seed)
        with lock:
            seen.append((config_json, seed, model))
        return model

    monkeypatch.setattr(sidebar, "build_model", recording)
    return seen


@pytest.fixture()
def forced_thread_switches():
    """Release the GIL inside every garbage-collection pass: the moment CPython 3.11's AST race needs."""
    def switch(phase, info):
        time.sleep(0)

    gc.callbacks.append(switch)
    yield
    gc.callbacks.remove(switch)


def test_ast_parse_is_serialised(forced_thread_switches):
    """Four threads parsing a large module at once: without server.startup's lock this fails within a second."""
    from server.startup import serialise_ast_parse

    serialise_ast_parse()
    source = Path(inspect.getsourcefile(ast)).read_text()
    errors: list[str] = []

    def parse() -> None:
        for _ in range(4):
            try:
                ast.parse(source)
            except SystemError as err:
                errors.append(str(err))

    threads = [threading.Thread(target=parse) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def test_streamlit_magic_is_off():
    """Page scripts are compiled from source, never through ``ast.parse`` (the config the server reads)."""
    from streamlit import config as st_config

    assert st_config.get_option("runner.magicEnabled") is False


def test_twenty_concurrent_sessions(apptest_threads, recorded_builds, forced_thread_switches):
    # a model every session's first run (the defaults) shares, fetched and summed before the sessions start
    default_config, default_seed = state_config()
    shared = sidebar.build_model(default_config.to_json(), default_seed)
    before = checksum(shared)

    with ThreadPoolExecutor(max_workers=N_SESSIONS) as pool:
        results = list(pool.map(_session, range(N_SESSIONS)))

    failed = [(r["i"], r["exception"]) for r in results if r["exception"]]
    assert not failed, failed
    for r in results:
        config, seed = state_config(**_state(r["i"]))
        assert r["config"] == json.loads(config.to_json()), f"session {r['i']} shows another session's config"
        torch.manual_seed(seed)
        assert r["total"] == CausalLM(config).num_parameters(), f"session {r['i']}: wrong parameter total"

    # the shared default model (every session's first run used it; with 21 configs and max_entries=16 it may
    # have been evicted since, which is the cache bound working): unchanged
    assert any(m is shared for _, _, m in recorded_builds)
    assert checksum(shared) == before
    assert not _clean(shared), _clean(shared)

    # every model handed out: clean, and exactly the weights of an independent build for its (config, seed)
    distinct = {(cj, seed): m for cj, seed, m in recorded_builds}
    assert len(distinct) >= N_SESSIONS  # 20 session configs (+ the defaults)
    for (config_json, seed), model in distinct.items():
        assert not _clean(model), _clean(model)
        torch.manual_seed(seed)
        fresh = CausalLM(model.config)
        mismatched = [n for (n, a), (_, b) in zip(model.state_dict().items(), fresh.state_dict().items())
                      if not torch.equal(a, b)]
        assert not mismatched, f"seed {seed}: weights differ from an independent build: {mismatched[:5]}"
