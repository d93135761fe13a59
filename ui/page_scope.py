"""A page's namespace lets go of its model and its large data when its run ends.

Streamlit runs a page script in a fresh module namespace on every run. Nothing keeps that namespace afterwards but
the functions defined in it that Streamlit stores for later, a widget's callback (``on_click=_move``), its
``format_func`` or a fragment: their ``__globals__`` is the namespace, kept for as long as the browser session
lives (two minutes after its tab closed at least). The namespace holds the page context (``ctx``: the model, the
input) and what the page computed (traces, tables), so each session kept its last page's model and trace alive
after the shared store had let them go (server/bytecache.py), and the server's memory did not come back when the
tabs closed.

:func:`remember_page` (from the sidebar's ``explorer()``, which every page calls at its top level) notes the
namespace; :func:`release_page` (explorer.py, after the page ran, also when it stopped early) then replaces the
page context by a copy without the model and drops the figures (already sent) and every other value holding more
than ``HEAVY_BYTES`` of tensors, arrays or tables (a model, a trace, a large table). What a stored callback may still read stays: the input's
tokens and ids, labels, counts, keys, small tables.
"""

from __future__ import annotations

import copy
import threading

from server.bytecache import tensor_bytes
from ui.context import Explorer

HEAVY_BYTES = 1 << 20  # a value holding more than this is dropped: models, traces, SmolLM2-sized tables
_local = threading.local()  # one page run at a time per session thread


def remember_page(namespace: dict) -> None:
    """Note the namespace of the page script that is running (its ``globals()``)."""
    _local.namespace = namespace


def release_page() -> int:
    """Let go of the model and the large data of the page that just ran; returns how many names changed."""
    namespace, _local.namespace = getattr(_local, "namespace", None), None
    if namespace is None:
        return 0
    changed = 0
    for name, value in list(namespace.items()):
        if name.startswith("__") or isinstance(value, type):
            continue
        if isinstance(value, Explorer):
            light = copy.copy(value)  # not dataclasses.replace: that would register the missing model again
            light.model = None  # its tokens and ids stay for the callbacks
            namespace[name] = light
            changed += 1
        elif type(value).__module__.split(".")[0] == "plotly" or tensor_bytes(value) > HEAVY_BYTES:
            del namespace[name]
            changed += 1
    return changed
