"""Screenshots of every page for a person to look at, taken the way a user gets there: a fresh browser context,
the language and presenter mode switched in the sidebar, every page reached by clicking the navigation.

    python -m tools.screenshots [--langs en zh] [--modes normal presenter] [--sizes 1440x1000 1280x720]
                                [--pages generate lens] [--no-default] [--no-smollm2] [--no-docs]
                                [--lessons minimind_block smollm2_inside]

Run it from the project root as a module (``-m``): the project root is then on ``sys.path``, so ``tests`` and the app's
packages import without a path insert (pytest's ``pythonpath`` setting does not apply to tools).

For each language x mode x size: one PNG per page of the default (random-init) model, as the viewport shows it
(what a projector shows without scrolling): ``screenshots/<size>-<mode>-<lang>-<page>.png``. Then, unless
``--no-smollm2``, SmolLM2-135M-Instruct is chosen in the sidebar and every page is shot again with it at the same
sizes, the real-model views (Head roles, Logit lens) with every chart of theirs as its own PNG too
(``...-smollm2-<page>-chart<i>.png``), since their lower charts lie below the first screen. With ``--lessons``,
every step of those lessons in each language x size, presenter mode, opened by its link: the step as the question
shows it, then after "Skip" (the chart revealed): ``screenshots/lesson-<id>-<size>-<lang>-<n>-{ask,reveal}.png``.
Finally
``docs/screenshot-attention.png`` (the README's picture: SmolLM2's induction head on the Attention page, English,
presenter mode, 1280 px wide; see :func:`docs_picture`) is regenerated unless ``--no-docs``. Starts its own ``streamlit run app.py`` on a free port and stops it at the end. Offline.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from urllib.parse import quote, urlencode

from tests.browser_support import (
    ARGS, CHART, CHARTLESS, CHROMIUM, NAV_LINKS, SHOTS, assert_clean, choose_smollm2, click_nav, open_app, settle, start_server,
)
from ui.examples import PROMPTS

ROOT = Path(__file__).resolve().parents[1]
CHART_PAGES = {"heads", "lens"}  # real-model views whose lower charts are shot one by one


def wait_for_chart(page, path: str) -> None:
    """Wait for the page's first chart (not on the pages that draw none at first, ``CHARTLESS``)."""
    if path not in CHARTLESS:
        page.wait_for_selector(f'[data-testid="stMain"] {CHART}', timeout=300_000)
    settle(page, 1200)


def shoot(page, name: str, charts: bool = False) -> list[Path]:
    """Save the viewport as ``screenshots/<name>.png`` (and, with ``charts``, every chart as its own PNG)."""
    SHOTS.mkdir(exist_ok=True)
    paths = [SHOTS / f"{name}.png"]
    page.screenshot(path=str(paths[0]))
    if charts:
        for i, el in enumerate(page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"]').all()):
            el.scroll_into_view_if_needed()
            page.wait_for_timeout(400)
            paths.append(SHOTS / f"{name}-chart{i}.png")
            el.screenshot(path=str(paths[-1]))
        page.locator('[data-testid="stMain"] h1').first.scroll_into_view_if_needed()
    return paths


def pages_run(browser, url: str, lang: str, mode: str, size: tuple[int, int], smollm2: bool,
              only: list[str] | None = None) -> list[Path]:
    w, h = size
    tag = f"{w}x{h}-{mode}-{lang}"
    page = open_app(browser, url, w, h, lang=lang, presenter=mode == "presenter", timeout=600_000)
    out = []
    try:
        if smollm2:
            choose_smollm2(page, lang, timeout=600_000)
            tag += "-smollm2"
        for i in range(page.locator(NAV_LINKS).count()):
            href = page.locator(NAV_LINKS).nth(i).get_attribute("href") or ""
            if only and not any(href.rstrip("/").endswith("/" + p) for p in only):
                continue
            path = click_nav(page, i, timeout=600_000)
            wait_for_chart(page, path)
            assert_clean(page)
            out += shoot(page, f"{tag}-{path}", charts=smollm2 and path in CHART_PAGES)
            print("  ", out[-1].name, flush=True)
    finally:
        page.close()
    return out


def lesson_run(browser, url: str, lesson_id: str, lang: str, size: tuple[int, int]) -> list[Path]:
    """Every step of a lesson in presenter mode, opened by its link: as asked, then revealed by "Skip"."""
    from teaching import lessons

    lesson = lessons.by_id(lesson_id)
    assert lesson is not None, f"no lesson {lesson_id!r}"
    w, h = size
    page = browser.new_page(viewport={"width": w, "height": h})
    page.set_default_timeout(600_000)
    out = []
    try:
        page.goto(f"{url}/?{urlencode({'lesson': lesson_id, 'step': 1, 'ui.lang': lang, 'ui.presenter': 'true'})}",
                  wait_until="domcontentloaded")
        for step in lesson.steps:
            page.wait_for_function("n => new URLSearchParams(location.search).get('step') === String(n)",
                                   arg=step.number)
            page.wait_for_selector(".st-key-lessons-banner")
            wait_for_chart(page, "lessons" if step.question else step.page)
            assert_clean(page)
            name = f"lesson-{lesson_id}-{w}x{h}-{lang}-{step.number:02d}"
            out += shoot(page, name + ("-ask" if step.question else ""))
            skip = page.locator(".st-key-lessons-skip button")
            if step.question and skip.count():
                skip.click()
                settle(page, 1500)
                wait_for_chart(page, step.page)
                out += shoot(page, name + "-reveal")
            print("  ", out[-1].name, flush=True)
            page.keyboard.press("PageDown")
    finally:
        page.close()
    return out


#: the README's view: SmolLM2 on the induction example prompt (ten random words repeated once), layer 19 head 7,
#: its strongest induction head (docs/lecturers.md, "What the real-model views show on SmolLM2")
DOCS_VIEW = {"model.source": "checkpoint", "model.checkpoint": "smollm2-135m", "ui.presenter": "true", "ui.lang": "en",
             "attn.layer": "19", "attn.head": "7", "input.text": dict(PROMPTS["en"])["induction"]}


def docs_picture(browser, url: str) -> Path:
    """The README's picture, opened by its share link: presenter mode, 1280 px wide and tall enough for the whole
    heatmap (each query of the first copy on token 0, the attention sink; each of the second copy on the token
    after its first occurrence, the induction stripe)."""
    page = browser.new_page(viewport={"width": 1280, "height": 1240})
    page.set_default_timeout(600_000)
    try:
        page.goto(f"{url}/attention?{urlencode(DOCS_VIEW, quote_via=quote)}", wait_until="domcontentloaded")
        wait_for_chart(page, "attention")
        assert_clean(page)
        target = ROOT / "docs" / "screenshot-attention.png"
        page.screenshot(path=str(target))
        return target
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    parser.add_argument("--modes", nargs="+", default=["normal", "presenter"], choices=["normal", "presenter"])
    parser.add_argument("--sizes", nargs="+", default=["1440x1000", "1280x720"])
    parser.add_argument("--pages", nargs="+", help="URL paths of the default model's pages to shoot (default: all)")
    parser.add_argument("--no-default", action="store_true", help="skip the default model's pages")
    parser.add_argument("--no-smollm2", action="store_true", help="skip the SmolLM2 views")
    parser.add_argument("--no-docs", action="store_true", help="do not regenerate docs/screenshot-attention.png")
    parser.add_argument("--lessons", nargs="+", default=[], help="lesson ids whose every step to shoot (presenter)")
    args = parser.parse_args()
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes]

    from playwright.sync_api import sync_playwright

    proc, url = start_server()
    t0 = time.time()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                for smollm2 in [False] * (not args.no_default) + [True] * (not args.no_smollm2):
                    for lang in args.langs:
                        for mode in args.modes:
                            for size in sizes:
                                print(f"{'SmolLM2' if smollm2 else 'default'} {lang} {mode} {size}", flush=True)
                                pages_run(browser, url, lang, mode, size, smollm2, args.pages)
                for lesson_id in args.lessons:
                    for lang in args.langs:
                        for size in sizes:
                            print(f"lesson {lesson_id} {lang} {size}", flush=True)
                            lesson_run(browser, url, lesson_id, lang, size)
                if not args.no_docs:
                    print("wrote", docs_picture(browser, url))
            finally:
                browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    print(f"done in {time.time() - t0:.0f} s; screenshots in {SHOTS}")


if __name__ == "__main__":
    main()
