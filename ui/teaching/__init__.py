"""The teaching features around a page, in their one order (explorer.py calls :func:`teaching_hooks` once per
run, after the navigation is built and before the page runs). The students' phones are not sessions: their light
page is ``ui.teaching.phone`` (mounted by app.py).

1. a class (``class_hooks``): a lecturer link or cookie (a join link goes on to the phone page); a second lecturer
   session takes the class's step;
2. a lesson (``steps``): follow ``?lesson=&step=`` or the lesson's buttons to the step's page, its settings
   applied (a class's step arrives here through 1, so both go through the same ``go``);
3. the lecturer's step becomes the class's;
4. the sidebar's class section (start, the way to the phone page, the lecturer's code, QR, poll and roster);
5. above the page: the class step's question and reveal, else the lesson step's banner;
6. the lesson progress saved in a cookie (it survives a reload of the tab).
"""

from __future__ import annotations

from typing import Any

from ui.teaching.class_banner import class_banner
from ui.teaching.class_hooks import class_hook, class_sync
from ui.teaching.class_lecturer import class_panel
from ui.teaching.lesson_banner import banner
from ui.teaching.steps import lesson_hook, save_cookie


def teaching_hooks(pages: dict[str, Any], here: str) -> None:
    """Run the teaching hooks for the page at url path ``here`` (``pages``: url path -> ``st.Page``)."""
    class_hook(pages, here)
    lesson_hook(pages, here)
    class_sync(here)
    class_panel()
    if not class_banner(here):
        banner(here)
    save_cookie()
