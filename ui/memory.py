"""The server's memory and what holds it, for the lecturer: a folded expander at the foot of the sidebar.

Resident memory of the process (``VmRSS``), the shared byte store's use against its budget and what it holds by
kind (server/bytecache.py), and the rest: the app, its libraries and the loaded checkpoints' weights.
"""

from __future__ import annotations

import streamlit as st

from server.bytecache import process_rss, shared_cache
from ui.i18n import t

# the byte store's keys name their cached function (or their kind) first: which readout line counts them
KINDS = {"build_model": "models", "_trace": "traces", "run": "runs"}


def held_by_kind() -> list[tuple[str, int, int]]:
    """``(kind, entries, bytes)`` of the shared store, largest first: models, traces, runs, views."""
    totals: dict[str, list[int]] = {}
    for name, n, size in shared_cache().held():
        row = totals.setdefault(KINDS.get(name, "views"), [0, 0])
        row[0] += n
        row[1] += size
    return sorted(((k, n, b) for k, (n, b) in totals.items()), key=lambda r: -r[2])


def mib(n: int) -> str:
    return f"{n / 2**20:,.0f}"


SHOW_KEY = "ui.memory_shown"  # the reader's own switch (never reset by a lesson step, never in a link)


def memory_readout() -> None:
    """The folded "Server memory" expander of the sidebar: a switch, then a few numbers read on each rerun (no
    computation). The numbers wait for the switch: they are the server's, not the page's, and a lesson's open
    question must not find its answer among them by chance."""
    with st.sidebar.expander(t("memory.section"), expanded=False, icon="🧠"):
        if not st.toggle(t("memory.show"), key=SHOW_KEY):
            return
        cache, rss = shared_cache(), process_rss()
        st.caption(t("memory.rss", rss=mib(rss)))
        st.caption(t("memory.cache", used=mib(cache.bytes), budget=mib(cache.budget), n=len(cache),
                     age=f"{(cache.max_age or 0) / 60:.0f}"))
        for kind, n, size in held_by_kind():
            st.caption(t("memory.kind", kind=t(f"memory.kind.{kind}"), n=n, size=mib(size)))
        st.caption(t("memory.rest", rest=mib(max(rss - cache.bytes, 0))))
