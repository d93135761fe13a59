"""SmolLM2-135M-Instruct in the app: its first conversion from the GGUF file (in the background from the server's
first script run, with a progress bar for whoever picks it meanwhile) and its parity badge.

The engine side is :mod:`engine.checkpoints.smollm2` (conversion) and :mod:`engine.parity` (the two checks); this
module turns their results into Streamlit elements.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import streamlit as st
import torch

from engine.checkpoints import GGUF_MODELS, cache_ready, ensure_converted, gguf_model_available
from engine.parity import PARITY_RTOL
from ui.caches.views import attention_paths, reference_rows
from ui.format import DASH, number
from ui.i18n import t
from ui.presenter import presenter_mode

# Share of the bar each conversion stage fills (measured: reading the file's metadata is the slow part).
STAGE_SPANS = {"read": (0.0, 0.45), "tensors": (0.45, 0.75), "tokenizer": (0.75, 0.8), "write": (0.8, 0.92),
               "verify": (0.92, 1.0)}


def model_label(name: str) -> str:
    """Display name in the checkpoint picker."""
    return GGUF_MODELS[name].title


@dataclass
class Conversion:
    """One background conversion (and hash check) of a named model's cache, shared by every session."""

    name: str
    progress: tuple[int, int, str] = (0, 1, "verify")  # the latest (done, total, stage) report
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        try:  # below the page views, as the training runs (EXPLORER_JOB_NICE); Linux: a thread has its own nice
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), int(os.environ.get("EXPLORER_JOB_NICE", 10)))
        except (AttributeError, OSError, ValueError):
            pass
        try:
            ensure_converted(self.name, progress=self.report)
        except Exception as err:  # noqa: BLE001  handed to whoever waits for it
            self.error = err
        finally:
            self.done.set()

    def report(self, done: int, total: int, stage: str) -> None:
        self.progress = (done, total, stage)


_CONVERSIONS: dict[str, Conversion] = {}
_CONVERSIONS_LOCK = threading.Lock()
_started = False


def background_conversion(name: str) -> Conversion:
    """The process's conversion of ``name``: started on the first call (a daemon thread), the same one after; a new
    one only when the last one failed or its cache has gone since (a verified cache costs a stat per call)."""
    with _CONVERSIONS_LOCK:
        job = _CONVERSIONS.get(name)
        if job is None or (job.done.is_set() and (job.error is not None or not cache_ready(name))):
            job = _CONVERSIONS[name] = Conversion(name)
            threading.Thread(target=job.run, name=f"convert-{name}", daemon=True).start()
        return job


def start_background_conversions() -> None:
    """Convert (or hash-check) every installed packaged model in the background; the caller does not wait.

    ``app.py`` calls it on every run; only the first call of the process does anything.
    """
    global _started
    if _started:
        return
    _started = True
    for name in GGUF_MODELS:
        if gguf_model_available(name):
            background_conversion(name)


def prepare_with_progress(name: str, poll_s: float = 0.25) -> None:
    """Wait for the background conversion of ``name`` (started here if the server has not started it), showing
    its progress bar while it runs: tens of seconds once per machine, about a second's hash check once per process.

    Raises:
        engine.checkpoints.CheckpointError: the conversion failed (the caller shows the message).
    """
    job = background_conversion(name)
    if not job.done.is_set():
        bar = st.progress(0.0, text=t("smollm2.stage.verify", done=0, total=1))
        try:
            while not job.done.wait(poll_s):
                done, total, stage = job.progress
                lo, hi = STAGE_SPANS[stage]
                bar.progress(min(1.0, lo + (hi - lo) * done / max(total, 1)),
                             text=t(f"smollm2.stage.{stage}", done=done, total=total))
        finally:
            bar.empty()
    if job.error is not None:
        raise job.error


# ---- the parity badge ----------------------------------------------------------------------------------------
def _share(diff: float, scale: float) -> str:
    return number(diff / scale, ".1e") if scale > 0 else DASH


def parity_badge(ctx, eager_logits: torch.Tensor) -> None:
    """Green or red: does SmolLM2 compute what it should on this text? Shown only for a named GGUF model.

    Two checks (see :mod:`engine.parity`): the text on screen through the explicit-softmax attention (the cached
    trace's logits, ``eager_logits`` ``[1, T, V]``) against PyTorch's fused SDPA; and the stored prompts against
    transformers' numbers shipped with the tests.
    """
    name = ctx.model_key.removeprefix("checkpoint:")
    if not ctx.model_key.startswith("checkpoint:") or name not in GGUF_MODELS:
        return
    ids = tuple(ctx.input_ids[0].tolist())
    with st.spinner(t("smollm2.badge.computing")):
        paths = attention_paths(ctx.model, ids, eager_logits)
        rows = reference_rows(ctx.model)
    ref_diff = max(r["max_abs_diff"] for r in rows)
    ref_scale = max(r["scale"] for r in rows)
    ok = paths["ok"] and all(r["ok"] and r["same_top1"] for r in rows)
    worst = max(paths["max_abs_diff"], ref_diff)
    presenting = presenter_mode()  # one line: the badge, its two checks behind a button
    box = (st.container(horizontal=True, vertical_alignment="center", gap="small") if presenting
           else st.container(border=True))
    # No icon: Streamlit fetches a Material icon's SVG from fonts.gstatic.com, and the app stays offline.
    box.badge(("✓ " if ok else "✗ ") + t("smollm2.badge.ok" if ok else "smollm2.badge.bad", diff=f"{worst:.1e}"),
              color="green" if ok else "red")
    with box.popover(t("smollm2.badge.details")) if presenting else box:
        st.markdown(t("smollm2.badge.paths", n=len(ids), diff=f"{paths['max_abs_diff']:.1e}",
                      share=_share(paths["max_abs_diff"], paths["scale"]), scale=f"{paths['scale']:.1f}"))
        same = [r for r in rows if tuple(r.get("ids", ())) == ids]
        st.markdown(t("smollm2.badge.reference", n=len(rows), tokens=sum(r["n_tokens"] for r in rows),
                      diff=f"{ref_diff:.1e}", share=_share(ref_diff, ref_scale),
                      top1=t("smollm2.badge.yes" if all(r["same_top1"] for r in rows) else "smollm2.badge.no")))
        if same:
            st.caption(t("smollm2.badge.same_text", diff=f"{same[0]['max_abs_diff']:.1e}"))
        st.caption(t("smollm2.badge.rule", rtol=f"{PARITY_RTOL:.0e}"))
