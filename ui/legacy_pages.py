"""The one place that touches a private Streamlit attribute: leaving v1 ("pages/ folder") multipage mode.

Streamlit (checked on 1.67) treats a ``pages/`` folder next to the entry script as a legacy multipage app until
some script calls ``st.navigation``: on a fresh server, the very first request to a URL such as ``/overview``
then runs ``pages/overview.py`` directly, with file-name navigation and without ``app.py``. Streamlit offers no
setting for this; the flag is ``PagesManager.uses_pages_directory`` (class-wide, decided once from the folder's
existence), and ``st.navigation`` itself sets it to False. The project keeps its page scripts in ``pages/``
(its stated layout), so every page clears the flag first and reruns once. ``tests/ui/test_legacy_pages.py`` fails
loudly when a Streamlit upgrade changes any part of this behaviour, so the patch can then be dropped or redone.
"""

from __future__ import annotations

import streamlit as st


def leave_legacy_multipage_mode() -> None:
    """Make Streamlit use ``app.py``'s ``st.navigation`` even on a fresh server's first request (see above).

    The flag is process-wide, so turning it off once and rerunning puts this and every later session on
    ``app.py``.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
