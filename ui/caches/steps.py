"""The lesson steps' answer keys, computed once per (step, settings) on the app's cached models (the very models
the pages show), and on the Training lab once per finished run.

Everything a key depends on is an argument: the session's trained model and finished runs come in ``_session``
(not hashed; ``trained_id`` and ``run_ids`` name them in the cache key), so no cached function reads the session.
"""

from __future__ import annotations

import streamlit as st

from teaching import lessons as lesson_files
from teaching.lessons import Key, compute_key, inputs_for
from ui.caches import build_model, load_checkpoint, tokenizer_for


@st.cache_resource(max_entries=256, show_spinner=False)
def step_key(lesson_id: str, n: int, digest: str, trained_id: str | None, run_ids: tuple, _session: dict) -> Key:
    """Step ``n``'s key (``digest``: its settings' digest). ``_session``: ``{"trained": {...}}`` when the step is
    on the session's trained model, plus the finished runs (``{"train.job": job | None, "race.job": ...}``) when
    the step asks about one."""
    lesson = lesson_files.by_id(lesson_id)
    step = lesson.step(n)
    trained = _session.get("trained")
    inputs = inputs_for(step, session=_session, model_for=build_model, tokenizer_for=tokenizer_for,
                        checkpoint_for=load_checkpoint, trained_for=(lambda: trained["model"]) if trained else None)
    key = compute_key(lesson, step, inputs)
    key.raw = None  # only plain values are kept
    return key
