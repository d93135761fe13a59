"""Streamlit's v1 multipage behaviour that ui/legacy_pages.py works around is still there, and the workaround works.

If a Streamlit upgrade renames the flag, stops deciding it from a ``pages/`` folder, or gains a supported way to
turn it off, these tests fail: drop or redo the patch then (see the module docstring).
"""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from ui import legacy_pages


@pytest.fixture()
def flag():
    old = PagesManager.uses_pages_directory
    PagesManager.uses_pages_directory = None
    yield
    PagesManager.uses_pages_directory = old


def test_a_pages_folder_next_to_the_entry_script_switches_streamlit_to_v1_pages(tmp_path, flag):
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text("")
    PagesManager(str(tmp_path / "app.py"))
    assert PagesManager.uses_pages_directory is True  # the behaviour worked around


def test_without_a_pages_folder_it_does_not(tmp_path, flag):
    (tmp_path / "app.py").write_text("")
    PagesManager(str(tmp_path / "app.py"))
    assert PagesManager.uses_pages_directory is False


def test_st_navigation_is_what_turns_it_off():
    import inspect

    from streamlit.commands import navigation

    assert "PagesManager.uses_pages_directory = False" in inspect.getsource(navigation.navigation)


def test_the_patch_turns_it_off_once_and_reruns(flag, monkeypatch):
    reruns = []
    monkeypatch.setattr(st, "rerun", lambda: reruns.append(1))
    PagesManager.uses_pages_directory = True
    legacy_pages.leave_legacy_multipage_mode()
    assert PagesManager.uses_pages_directory is False and reruns == [1]
    legacy_pages.leave_legacy_multipage_mode()  # already off: nothing more happens
    assert reruns == [1]
