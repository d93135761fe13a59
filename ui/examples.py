"""Example prompts per model, and the notice shown when the text is mostly outside the model's languages.

A model declares the languages it was trained on (``GGUFModelSpec.languages``); the sidebar offers example prompts
in those languages under the text box (the bundled corpus's, Chinese and English, for a model that declares none),
(a popover under the text box) and each page that shows what the model does on the text says once, near its top, when the text is mostly in
other scripts (rule: ``engine.tokenizer.languages``), with the same prompts one click away. A click writes the
prompt into ``input.text`` from a button's ``on_click`` callback, which runs before the next run draws the text
box (never a widget key after it is drawn).
"""

from __future__ import annotations

import streamlit as st

from engine.checkpoints import GGUF_MODELS
from engine.checkpoints.poem import POEM_MODELS
from engine.tokenizer.languages import mostly_outside, outside_share
from ui.format import percent
from ui.i18n import t
from ui.presenter import presenter_mode

#: per language: (id, prompt); the id names the button (``examples.<id>``). Chosen to show a model's structure:
#: a plain sentence (next-token predictions, the lens), code (indentation, brackets), and random words repeated
#: once (induction heads: the second copy attends to the token after the first occurrence).
PROMPTS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        ("sentence", "The capital of France is Paris. The capital of Italy is Rome. The capital of Spain is"),
        ("code", "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n"),
        ("induction", "lamp orbit velvet cactus mirror tundra pickle harbor quartz falcon "
                      "lamp orbit velvet cactus mirror tundra pickle harbor quartz falcon"),
    ),
    "zh": (
        ("poem", "千山鸟飞绝，万径人踪灭。孤舟蓑笠翁，独钓寒江雪。"),  # 江雪: one of the poems the poem model never saw
        ("induction_zh", "风江雪酒山花舟云柳鹤风江雪酒山花舟云柳鹤"),
    ),
}
BUNDLED_LANGUAGES = ("zh", "en")  # the bundled corpus: Tang poems and English text


def declared_languages(name: str) -> tuple[tuple[str, ...], str]:
    """``(languages, display title)`` of a checkpoint: what a shipped model's spec declares (``languages``, an
    optional field: ``()`` = not declared), ``((), name)`` for a checkpoint folder."""
    if name in POEM_MODELS:  # shipped in the repository: its name is translated
        return POEM_MODELS[name].languages, t("poem.name")
    spec = GGUF_MODELS.get(name)
    return tuple(getattr(spec, "languages", ()) or ()), getattr(spec, "title", name)


def prompts_for(languages: tuple[str, ...]) -> list[tuple[str, str]]:
    """The example prompts of a model's languages (the bundled corpus's when it declares none)."""
    return [p for lang in (languages or BUNDLED_LANGUAGES) for p in PROMPTS.get(lang, ())]


def _use(text: str) -> None:
    st.session_state["input.text"] = text  # a callback: runs before the text box is drawn again


def example_buttons(container, languages: tuple[str, ...], where: str) -> None:
    """One small button per example prompt; a click puts the prompt into the sidebar text box."""
    row = container.container(horizontal=True, gap="small")
    for pid, text in prompts_for(languages):
        row.button(t(f"examples.{pid}"), key=f"examples.{where}.{pid}", on_click=_use, args=(text,), help=text,
                   icon="📝" if where == "notice" else None)


def language_notice(ctx) -> None:
    """Once, near the top of a page: the text is mostly outside the languages the model declares (nothing for a
    model that declares none, or for random-id input), with the model's example prompts. In presenter mode one
    line: a short notice, the prompts behind a button beside it."""
    if not ctx.languages or ctx.tokenizer is None:
        return
    text = st.session_state.get("input.text", "")
    if not mostly_outside(text, ctx.languages):
        return
    share, _ = outside_share(text, ctx.languages)
    pieces = ctx.pieces
    split = sum(1 for p in pieces if not isinstance(p, str) and not p.whole)
    names = t("examples.list_sep").join(t(f"examples.lang.{lang}") for lang in ctx.languages)
    model = ctx.model_title.split(" (")[0]
    if presenter_mode():  # one line: the notice, the prompts behind a button beside it
        row = st.container(horizontal=True, vertical_alignment="center", gap="small")
        row.info(t("examples.notice_short", model=model, langs=names, share=percent(share)), icon="🌐")
        example_buttons(row.popover(t("examples.label"), icon="📝"), ctx.languages, "notice")
        return
    st.info(t("examples.notice", model=model, langs=names, share=percent(share), split=split, n=len(pieces)),
            icon="🌐")
    example_buttons(st, ctx.languages, "notice")
