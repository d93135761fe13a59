"""The student's phone in class mode: a light page, not a Streamlit session.

``app.py`` mounts :func:`routes` beside the Streamlit app (``st.App``: one process, one port). A phone loads one
small HTML page with its script (``static/``), joins, and polls the class's state with an ``ETag``; the lecturer
keeps the full app. ``view`` builds what a phone shows from the class store and the lessons (no HTTP);
``routes`` is the HTTP face (no view logic).
"""

from contextlib import asynccontextmanager

from ui.teaching.phone.routes import routes
from ui.teaching.phone.watch import release_on_exit


@asynccontextmanager
async def lifespan(_app):
    """The server's start and stop (``st.App(lifespan=...)``): a stop signal releases the held polls first."""
    release_on_exit()
    yield


__all__ = ["lifespan", "routes"]
