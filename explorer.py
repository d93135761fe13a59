"""Transformer Block Explorer: the Streamlit app (served by ``app.py``: ``streamlit run app.py``).

Sets the page config and the navigation; each page renders the shared sidebar itself through
``ui.sidebar.explorer()`` so its widgets behave the same on every page (AppTest renders one page at a time).
"""

import streamlit as st

from server.startup import warm_up  # first: it makes ast.parse thread-safe before the heavy imports
from ui.i18n import t  # noqa: E402
from ui.page_scope import release_page  # noqa: E402
from ui.share import refresh_qr  # noqa: E402
from ui.smollm2 import start_background_conversions  # noqa: E402
from ui.teaching import teaching_hooks  # noqa: E402
from ui.state import apply_pending, note_page  # noqa: E402

st.set_page_config(page_title="Transformer Block Explorer", layout="wide")

# Emoji icons, not ":material/..." ones: the browser would fetch those from an external font host, and the app
# must work offline (a lecture-room network without internet).
PAGES = [
    ("app_pages/overview.py", "nav.overview", "overview", "🧩"),
    ("app_pages/norms.py", "nav.norms", "norms", "📏"),
    ("app_pages/prepost.py", "nav.prepost", "pre-vs-post", "⚖️"),
    ("app_pages/attention.py", "nav.attention", "attention", "👁️"),
    ("app_pages/rope.py", "nav.rope", "rope", "🌀"),
    ("app_pages/heads.py", "nav.heads", "heads", "🧠"),
    ("app_pages/loss.py", "nav.loss", "loss", "🎯"),
    ("app_pages/next_token.py", "nav.next", "next-token", "✨"),
    ("app_pages/experts.py", "nav.experts", "experts", "🔀"),
    ("app_pages/generate.py", "nav.generate", "generate", "💬"),
    ("app_pages/lens.py", "nav.lens", "lens", "🔍"),
    ("app_pages/follow.py", "nav.follow", "follow", "🔦"),
    ("app_pages/interventions.py", "nav.interventions", "interventions", "✂️"),
    ("app_pages/train.py", "nav.train", "train", "🏋️"),
    # not app_pages/lessons.py: a page test puts app_pages/ first on sys.path, where that file would hide the lessons package
    ("app_pages/lesson_list.py", "nav.lessons", "lessons", "🎓"),
]

warm_up(path for path, *_ in PAGES)  # compile every page once, before sessions can race (server/startup.py)
start_background_conversions()  # SmolLM2's cache converted / hash-checked in a thread: no page waits for it

# the repairs the last run asked for (a link's values put back after a page switch, ui/state.py), before the
# navigation's titles are translated: the language may be one of them
apply_pending()
pages = [st.Page(path, title=t(key), url_path=url, icon=icon) for path, key, url, icon in PAGES]


def _root() -> None:
    """The app's root URL opens the first page at its own path (with the link's parameters).

    Streamlit serves its default page only at "/", so "/overview" would show "Page not found" if the Overview
    were the default page; a hidden default page that switches to it gives every page a working path.
    """
    st.switch_page(pages[0], query_params=st.query_params.to_dict())


# expanded: every page listed (Streamlit folds a long list behind "View n more", which a projector audience
# cannot see and which is never translated)
nav = st.navigation([st.Page(_root, title=t(PAGES[0][1]), url_path="home", default=True, visibility="hidden"), *pages],
                    expanded=True)
note_page(nav.url_path)  # before the page: control() tells a reopened page's stale widget value from an edit
by_url = {url: page for page, (_, _, url, _) in zip(pages, PAGES)}
teaching_hooks(by_url, nav.url_path)  # classes and lessons, in their one order (ui/teaching.py)
try:
    nav.run()
finally:  # the page's callbacks outlive its run: they must not keep its model and tables (ui/page_scope.py)
    release_page()
refresh_qr()  # the share panel's QR code with the link as the page left it (a page may write to it)
