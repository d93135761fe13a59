"""Chinese/English interface strings: ``t("key", **fmt)``.

Catalogs live in ``ui/strings/<namespace>.py``, one module per page or area, each defining ``EN`` and ``ZH``
dicts with identical keys and identical ``{placeholder}`` sets (a test checks both). Keys are namespaced
``"<namespace>.<name>"``. The current language is the sidebar widget ``"ui.lang"`` in session state.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache

LANGS = ("zh", "en")
DEFAULT_LANG = "en"
URL_LANG = {"中文": "zh", "English": "en", "zh": "zh", "en": "en"}  # the URL holds the switch's label


@lru_cache(maxsize=1)
def catalogs() -> dict[str, dict[str, str]]:
    """Merged ``{"en": {...}, "zh": {...}}`` from every module in :mod:`ui.strings`.

    Raises:
        ValueError: if two modules define the same key.
    """
    import ui.strings as pkg

    merged: dict[str, dict[str, str]] = {"en": {}, "zh": {}}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"ui.strings.{info.name}")
        for lang, table in (("en", mod.EN), ("zh", mod.ZH)):
            dup = set(table) & set(merged[lang])
            if dup:
                raise ValueError(f"duplicate i18n keys in ui/strings/{info.name}.py: {sorted(dup)}")
            merged[lang].update(table)
    return merged


def placeholders(text: str) -> set[str]:
    """The ``{name}`` fields of a format string (LaTeX groups such as ``{head}`` count too, in both catalogs)."""
    return set(re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", text))


def browser_lang() -> str:
    """"zh" when the browser's locale (``st.context.locale``) is Chinese, else "en"."""
    try:
        import streamlit as st

        locale = (st.context.locale or "").lower()
    except Exception:  # outside a script run
        locale = ""
    return "zh" if locale.startswith("zh") else DEFAULT_LANG


def current_lang() -> str:
    """The session's language: the sidebar switch ``"ui.lang"``, else the URL's ``ui.lang``, else the
    browser's locale; English outside a Streamlit run."""
    try:
        import streamlit as st

        lang = st.session_state.get("ui.lang") or URL_LANG.get(st.query_params.get("ui.lang", ""), "") or browser_lang()
    except Exception:  # outside a script run (plain Python, tests of figure builders)
        lang = DEFAULT_LANG
    return lang if lang in LANGS else DEFAULT_LANG


def t(key: str, lang: str | None = None, **fmt) -> str:
    """Translate ``key`` into ``lang`` (default: the session language) and fill ``{placeholders}``.

    A missing key returns the key itself, so a gap is visible on the page instead of crashing it.
    """
    table = catalogs()[lang or current_lang()]
    text = table.get(key, key)
    return text.format(**fmt) if fmt else text


def labeler(prefix: str, none_key: str | None = None, lang: str | None = None):
    """``format_func`` for a selection widget: ``value -> t(prefix + value)`` in this run's language (or ``lang``).

    The language is captured when the widget is drawn, so the label stays the same when Streamlit (or
    AppTest) calls the function later outside the script run. ``none_key`` labels a falsy value. The function's
    ``in_lang(lang)`` is the same labeler in another language (a link may name an option by either label).
    """
    lang = lang or current_lang()

    def label(v) -> str:
        return t(none_key, lang=lang) if (none_key and not v) else t(f"{prefix}{v}", lang=lang)

    label.in_lang = lambda other: labeler(prefix, none_key, other)
    return label
