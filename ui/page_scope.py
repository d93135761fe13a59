"""A page's namespace ends with its run.

Streamlit runs a page script in a fresh module namespace on every run. Nothing keeps that namespace afterwards but
the functions defined in it that Streamlit stores for later, a widget's callback (``on_click=_move``) or a
fragment: their ``__globals__`` is the namespace, kept for as long as the browser session lives (two minutes
after its tab closed at least). The namespace holds the page context (``ctx``: the model, the input ids) and what
the page computed (traces, tables, figures), so each session kept its last page's model and views alive after
the shared store had let them go (server/bytecache.py), and the server's memory did not come back when the tabs
closed.

:func:`remember_page` (from the sidebar's ``explorer()``, which every page calls at its top level) notes the
namespace; :func:`release_page` (explorer.py, after the page ran, also when it stopped early) drops its data,
keeping what a callback or a fragment may still read: modules, functions, classes, scalars, strings, and tuples
of those (a step count, a widget key).
"""

from __future__ import annotations

import threading
import types

_LIGHT = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, int, float,
          complex, str, bytes, bool, type(None))
_local = threading.local()  # one page run at a time per session thread


def light(value) -> bool:
    """Whether a global may stay after the run: no data a callback would not need, nothing that grows."""
    if isinstance(value, (tuple, frozenset)):
        return all(light(v) for v in value)
    return isinstance(value, _LIGHT) or callable(value) and not hasattr(value, "__dict__")


def remember_page(namespace: dict) -> None:
    """Note the namespace of the page script that is running (its ``globals()``)."""
    _local.namespace = namespace


def release_page() -> int:
    """Drop the data of the page that just ran from its namespace; returns how many names were dropped."""
    namespace, _local.namespace = getattr(_local, "namespace", None), None
    if namespace is None:
        return 0
    heavy = [name for name, value in namespace.items() if not name.startswith("__") and not light(value)]
    for name in heavy:
        del namespace[name]
    return len(heavy)
