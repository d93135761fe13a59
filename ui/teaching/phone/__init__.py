"""The student's phone in class mode: a light page, not a Streamlit session.

``app.py`` mounts :func:`routes` beside the Streamlit app (``st.App``: one process, one port). A phone loads one
small HTML page with its script (``static/``), joins, and polls the class's state with an ``ETag``; the lecturer
keeps the full app. ``view`` builds what a phone shows from the class store and the lessons (no HTTP);
``routes`` is the HTTP face (no view logic).
"""

from ui.teaching.phone.routes import routes

__all__ = ["routes"]
