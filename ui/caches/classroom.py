"""The process's class store: one ``ClassStore`` (SQLite by default, PostgreSQL through ``EXPLORER_CLASS_DB``;
see teaching/classroom/store.py), shared by every session of the process."""

from __future__ import annotations

import streamlit as st

from teaching.classroom import ClassStore


@st.cache_resource(show_spinner=False)
def store() -> ClassStore:
    """The process's class store (the schema is created or migrated here; expired classes are purged)."""
    s = ClassStore()
    s.purge()
    return s
