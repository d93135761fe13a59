"""Shared test settings: deterministic torch, offline hub. The project root is on sys.path through
``pythonpath`` and the markers are registered in pyproject.toml."""

import os
import tempfile
from pathlib import Path

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may download while tests run
# the class store (teaching/classroom/, ui/teaching/) of this run's AppTests and servers: a fresh folder, never the user's
os.environ.setdefault("EXPLORER_DATA_DIR", tempfile.mkdtemp(prefix="explorer-tests-"))
torch.set_num_threads(1)


# ---- AppTest page tests (tests/page_helpers.py) --------------------------------------------------------------
import pytest  # noqa: E402


@pytest.fixture()
def charts():
    """The chart builder calls of the latest AppTest run: ``charts(contribution_bar).data`` is the DataFrame the
    page gave ``ui.figures.loss.contribution_bar`` (see ``page_helpers.recording_charts``)."""
    from tests.page_helpers import recording_charts

    with recording_charts() as record:
        yield record


@pytest.fixture(scope="module")
def built():
    """``built(settings)``: the ``StepInputs`` of a lesson step's settings (the answer functions' input), each
    model built once per module (tests/analysis, tests/teaching)."""
    from teaching import lessons
    from teaching.answers.core import StepInputs

    cache = {}

    def get(settings: dict) -> StepInputs:
        digest = lessons.settings_digest(settings)
        if digest not in cache:
            parts = lessons.build_parts(settings)
            cache[digest] = StepInputs(settings, lambda: parts)
        return cache[digest]

    return get


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL cluster on loopback (tests/pg_support.py): ``.url``, ``.stop()``, ``.start()``,
    ``.database(name)``. Fails, never skips, without PostgreSQL."""
    from tests.pg_support import cluster

    with cluster() as c:
        yield c


# ---- real-browser fixtures (tests/browser_support.py) -------------------------------------------------------


@pytest.fixture(scope="module")
def server():
    """URL of a ``streamlit run app.py`` server for this test module."""
    from tests.browser_support import CHROMIUM, start_server

    assert Path(CHROMIUM).exists(), f"chromium not found at {CHROMIUM}: install Debian's chromium (see README)"
    proc, url = start_server()
    yield url
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    """Chromium (Playwright) wrapped so every request to another host is recorded (see ``offline_guard``)."""
    from playwright.sync_api import sync_playwright

    from tests.browser_support import ARGS, CHROMIUM, GuardedBrowser

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield GuardedBrowser(b)
        b.close()


@pytest.fixture(autouse=True)
def offline_guard(request):
    """Fail any browser test whose pages requested a host other than the app server (the app must work
    offline: nothing it serves may fetch fonts, icons or scripts from elsewhere)."""
    yield
    if "browser" not in request.fixturenames:
        return
    guarded = request.getfixturevalue("browser")
    foreign, guarded.foreign[:] = list(guarded.foreign), []
    assert not foreign, f"requests to hosts other than the app server: {sorted(set(foreign))[:10]}"
