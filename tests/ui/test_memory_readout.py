"""The sidebar's "Server memory" readout (ui/memory.py): the process's resident memory and the shared store's use
and contents, against /proc and the store itself, in English and Chinese."""

from __future__ import annotations

import os
import re

import pytest

from server.bytecache import shared_cache
from tests.page_helpers import open_page
from ui.memory import SHOW_KEY


def statm_rss_mib() -> float:
    """Resident memory from /proc/self/statm (pages), independent of the readout's VmRSS."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def readout(at) -> list[str]:
    """The readout's lines once its switch is on (before: none, so a lesson's question finds no number there)."""
    box = [e for e in at.sidebar.get("expander") if e.label in ("Server memory", "服务器内存")]
    assert len(box) == 1 and box[0].caption.len == 0
    at.toggle(key=SHOW_KEY).set_value(True).run()
    assert not at.exception, at.exception
    box = [e for e in at.sidebar.get("expander") if e.label in ("Server memory", "服务器内存")]
    return [c.value for c in box[0].caption]


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="Linux /proc")
def test_readout_says_the_servers_memory_and_what_the_store_holds():
    at = open_page("overview")
    assert not at.exception, at.exception
    lines = readout(at)
    rss = float(re.search(r"holds ([\d,]+) MiB", lines[0]).group(1).replace(",", ""))
    assert rss == pytest.approx(statm_rss_mib(), rel=0.15)
    cache = shared_cache()
    used, budget, n = re.search(r"Shared cache: ([\d,]+) of ([\d,]+) MiB in (\d+) entries", lines[1]).groups()
    assert int(budget.replace(",", "")) == round(cache.budget / 2**20) and int(n) >= 2  # this view's model and trace
    kinds = {line.split(":")[0] for line in lines[2:-1]}
    assert {"models", "forward records"} <= kinds
    assert lines[-1].startswith("The rest (")


def test_readout_in_chinese():
    at = open_page("overview", lang="zh")
    lines = readout(at)
    assert lines[0].startswith("本服务器进程占用") and "共享缓存" in lines[1] and "模型" in " ".join(lines)
