"""Escaping user-controlled strings (tokens, input text) for the place they are shown.

One helper per target, used everywhere a token is shown:

* :func:`md` / :func:`md_code`: Streamlit markdown (captions, headers, markdown, labels). Every ASCII punctuation
  character is backslash-escaped (CommonMark), so backticks, ``[links](...)``, ``![images](...)``, emphasis, ``$``
  math and HTML-like text show literally; line breaks become visible ``⏎``.
* :func:`html_text`: text inside an HTML block given to ``st.markdown(..., unsafe_allow_html=True)``: escaped, and
  line breaks written ``&#10;`` (a blank line would end the HTML block and show the rest as markdown or code).
* :func:`plotly`: Plotly text (tick text, hover text, legend names, titles, annotations), which Plotly parses
  as a small HTML subset (``<b>``, ``<br>``, ``<a href>``): ``&``, ``<`` and ``>`` become entities.

DataFrames and CSV files take raw strings (they are not markup).
"""

from __future__ import annotations

import html
import re

_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def md(text: str) -> str:
    """``text`` as literal Streamlit markdown."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")


def md_code(text: str) -> str:
    """``text`` as a literal, code-styled token in markdown (a backtick in it cannot close the span)."""
    s = str(text).replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")
    fence = "`"
    while fence in s:
        fence += "`"
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def html_text(text: str, visible_breaks: bool = False) -> str:
    """``text`` as literal text inside a markdown HTML block (``white-space:pre-wrap`` keeps its line breaks).

    With ``visible_breaks`` each line break is preceded by ``⏎``: a generated continuation that is mostly line
    breaks (a poem model starting a new poem) otherwise shows as empty highlighted lines."""
    s = html.escape(str(text), quote=False).replace("\r\n", "\n").replace("\r", "\n")
    return s.replace("\n", "⏎&#10;" if visible_breaks else "&#10;")


def plotly(text: str) -> str:
    """``text`` as literal Plotly text (no tags, no links, no entities)."""
    return html.escape(str(text), quote=False)


def plotly_all(texts) -> list[str]:
    """:func:`plotly` of each string."""
    return [plotly(s) for s in texts]
