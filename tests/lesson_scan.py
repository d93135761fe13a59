"""Read a lesson step's page as a learner sees it, and find the numbers on it that would give an answer away.

:func:`open_step` opens step n by its link (``?lesson=<id>&step=<n>``) in a fresh AppTest session: the lesson hook
applies the step's settings exactly as for a student who follows the link. :func:`page_text` is everything the
page shows: every text element and widget (labels, captions, help), the tables, and each Plotly figure's words
(titles, axis titles, annotations, legend names, printed trace text), not its data arrays (those are not read by
anyone looking at the page). :func:`printed_numbers` takes the numbers a text prints (``0.0889``, ``8,736``,
``27.35×``, ``12%``) in their printed form, and :func:`leaks` finds which of them the page prints too.
"""

from __future__ import annotations

import json
import re

from streamlit.testing.v1 import AppTest

from tests.page_helpers import ROOT
from settings.schema import DEFAULTS

# fields of an element that are not read as text: its ids (hashes, a download's file id among them), a choice's
# option list (the settings' choices) and a control's range (its settings, not a reading)
_HIDDEN_FIELDS = re.compile(r'^\s*(id|options|form_id|key|deferred_file_id): ".*"$'
                            r'|^\s*(min|max|default|step|format|value|max_chars)(_value)?: .*$', re.MULTILINE)
_TAG = re.compile(r"<[^>]*>")  # an HTML tag's attributes (a width, a colour) are not read
# (a clock's minutes, "1:32", are not a reading)
_NUMBER = re.compile(r"(?<![\w.:])[-−]?\d{1,3}(?:[,，]\d{3})+(?:\.\d+)?|(?<![\w.:])[-−]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def open_step(lesson_id: str, n: int, lang: str, page_script: str, timeout: float = 300) -> AppTest:
    """Step ``n`` of a lesson opened by its link, in ``lang``, in a fresh session (one run of the step's page)."""
    at = AppTest.from_file(str(ROOT / "explorer.py"), default_timeout=timeout)
    at.query_params.update({"lesson": lesson_id, "step": str(n)})
    at.switch_page(page_script)
    for k, v in {**DEFAULTS, "ui.lang": lang}.items():
        at.session_state[k] = v
    at.run()
    # before its first run AppTest names the page by its file; now st.navigation's pages are known, named again,
    # the page's next runs (a click) stay on it instead of going back to the default page
    return at.switch_page(page_script)


def _figure_words(spec: str, cells: bool = True) -> list[str]:
    """A figure's printed words: titles, names, annotations and (``cells``) its traces' labels (a heatmap's cells)."""
    fig = json.loads(spec)
    out: list[str] = []

    def walk(node, key=""):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            if key in ("text", "ticktext"):  # printed labels, not data
                out.extend(str(x) for x in node)
            else:
                for x in node:
                    if isinstance(x, (dict, list)):
                        walk(x, key)
        elif key in ("text", "name", "title") and isinstance(node, str):
            out.append(node)

    walk(fig.get("layout", {}))
    for trace in fig.get("data", []):
        walk({k: v for k, v in trace.items() if k in (("name", "text", "title") if cells else ("name", "title"))})
    return out


def page_text(at: AppTest, cells: bool = True) -> str:
    """Every word the page (main area and sidebar) shows, one element per line (``cells``: with the labels a
    chart prints on its bars and cells)."""
    parts: list[str] = []

    def walk(node):
        kids = getattr(node, "children", None)
        if kids:
            for child in kids.values():
                walk(child)
            return
        kind = getattr(node, "type", "")
        if kind == "plotly_chart":
            parts.extend(_figure_words(node.proto.spec, cells))
        elif kind in ("dataframe", "table"):
            try:
                parts.append(node.value.to_string(index=False))
            except Exception:  # noqa: BLE001 -- an arrow table AppTest cannot read back: its proto then
                parts.append(str(node.proto))
        elif kind == "html" and re.search(r"<(script|style)\b", str(getattr(node.proto, "body", ""))):
            return  # the page's scripts and styles: nothing a learner reads
        elif hasattr(node, "proto"):
            parts.append(_TAG.sub(" ", _HIDDEN_FIELDS.sub("", str(node.proto))))

    walk(at._tree)
    return "\n".join(parts)


def canonical(token: str) -> str:
    return token.replace("−", "-").replace(",", "").replace("，", "")


def printed_numbers(text: str) -> set[str]:
    """The numbers ``text`` prints, as printed (thousands separators dropped, minus signs normalised), except
    one-digit integers: a layer, a head, a step's number, on every page whatever the question."""
    return {n for n in (canonical(m) for m in _NUMBER.findall(text)) if not re.fullmatch(r"-?\d", n)}


def shown_in(number: str, text_numbers: set[str]) -> bool:
    """Whether one of ``text_numbers`` (printed by some text) shows ``number`` at its precision."""
    return any(_shows(t, number) for t in text_numbers)


def _shows(page_number: str, number: str) -> bool:
    """Whether ``page_number`` (as printed on the page) shows ``number`` (as printed in an explanation): the same
    token, or a decimal the page prints with more digits that rounds to it (the page's ``0.07454`` shows the
    explanation's ``0.0745``). An integer is only shown by itself (``4`` is not in ``3.99`` nor in ``48``)."""
    if page_number == number:
        return True
    if "." not in number or "e" in number.lower() or "e" in page_number.lower() or "." not in page_number:
        return False
    decimals = len(number.split(".")[1])
    if len(page_number.split(".")[1]) <= decimals:
        return False
    return f"{float(page_number):.{decimals}f}" == number


def leaks(numbers: set[str], page: str) -> dict[str, str]:
    """Which of ``numbers`` the page prints, at their printed precision: ``{number: a line of the page around it}``."""
    found = {}
    for m in _NUMBER.finditer(page):
        shown = canonical(m.group())
        for n in numbers:
            if n not in found and _shows(shown, n):
                found[n] = page[max(0, m.start() - 90): m.end() + 40].replace("\n", " ")
    return found
