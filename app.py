"""Transformer Block Explorer: ``streamlit run app.py``.

One process, one port: the Streamlit app (``explorer.py``: the pages, the lessons, the lecturer's class mode) and,
beside it, the light page students' phones use in a class (``/join``: ``ui/teaching/phone/``), mounted through
Streamlit's ``st.App``. ``streamlit run`` finds the ``app`` object below and serves both.
"""

from server.startup import serialise_ast_parse

serialise_ast_parse()  # before the heavy imports below (see server/startup.py)

import streamlit as st  # noqa: E402

from ui.teaching.phone import lifespan, routes  # noqa: E402

app = st.App("explorer.py", routes=routes(), lifespan=lifespan)
