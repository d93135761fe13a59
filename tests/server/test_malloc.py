"""server/startup.bound_malloc: after it, a 2 MiB tensor gets its own mapping (given back to the system when freed)
even after a 16 MiB block was freed, which without it raises glibc's threshold so that the next such block comes
from a thread's heap and its pages stay resident. Each case runs in a fresh interpreter (the setting is global)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.page_helpers import ROOT

PROBE = r"""
import ctypes, json, sys
sys.path.insert(0, sys.argv[1])
import torch
from server.startup import bound_malloc

class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
tuned = bound_malloc() if sys.argv[2] == "1" else False
big = torch.empty(16 << 20, dtype=torch.uint8)
big.fill_(1)
del big  # glibc raises its mmap threshold to this block's size
before = libc.mallinfo2().hblkhd  # bytes in blocks with their own mapping
block = torch.empty(2 << 20, dtype=torch.uint8)
block.fill_(1)
print(json.dumps({"tuned": tuned, "mapped": libc.mallinfo2().hblkhd - before}))
"""


def probe(tune: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT), "1" if tune else "0"], capture_output=True,
                         text=True, check=True, env={"PATH": "/usr/bin:/bin", "EXPLORER_MALLOC_TUNING": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_large_blocks_get_their_own_mapping_after_bound_malloc():
    assert probe(tune=False) == {"tuned": False, "mapped": 0}  # the glibc behaviour the setting changes
    tuned = probe(tune=True)
    assert tuned["tuned"] and tuned["mapped"] >= 2 << 20
