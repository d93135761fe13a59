"""A class survives its database (issue 34), in real browsers: a lecturer (1280 × 720) and two phones (390 × 844, en
and zh) on a server whose class store is PostgreSQL, then on one whose store is a SQLite file.

1. PostgreSQL stopped for 20 s mid-question, a phone answering during it: every page stays in the class (the
   lecturer's bar says the store is retrying; the phone says its answer is not sent yet, or is being sent), and
   after PostgreSQL starts again the answer arrives, the lecturer's count has both answers and the reveal works;
2. the SQLite file locked by another process for 15 s mid-question: an answer given during the lock arrives after
   it; nobody is sent out of the class.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time

import pytest

from teaching.classroom import ClassStore
from tests.browser.test_browser_class import _answer, _phone, _start, _wait_count, css
from tests.browser_support import Room, settle
from ui.strings.classroom import EN

pytestmark = pytest.mark.browser

OUTAGE_S = 20
LOCK_S = 15


@pytest.fixture(scope="module")
def pg_room(browser, postgres):
    url = postgres.database("classfaults")
    r = Room(browser, env={"EXPLORER_CLASS_DB": url})
    r.update(db=url, cluster=postgres)
    yield r
    r.close()


def _in_class(lecturer, phones, code: str) -> None:
    """Every page is still in the class: the lecturer's sidebar names it (the bar may say the store is retrying),
    each phone shows its question."""
    assert code in lecturer.locator('[data-testid="stSidebar"]').inner_text()
    for page in phones:
        assert page.locator("#title").inner_text().endswith(code) and page.locator("#class").is_visible()


def test_postgresql_stopped_and_started_mid_question_keeps_everyone_and_every_answer(pg_room):
    lecturer, code = _start(pg_room, "en")
    phones = [_phone(pg_room, code, "en"), _phone(pg_room, code, "zh")]
    for page in phones:
        page.wait_for_selector("#options button")
    _answer(phones[0], 1)
    _wait_count(lecturer, "1 of 2 answered")
    pg_room["cluster"].stop()
    try:
        time.sleep(3)  # the held polls and the live bar meet the stopped database
        phones[1].locator("#options button").nth(2).click()  # answered during the outage
        phones[1].wait_for_function(
            "() => /Not sent yet|正在发送|尚未发送|Sending/.test(document.querySelector('#status').innerText)",
            timeout=30_000)
        lecturer.wait_for_function("t => document.body.innerText.includes(t)",
                                   arg=EN["class.err.unavailable"].split("(")[0].strip(), timeout=60_000)
        time.sleep(max(0.0, OUTAGE_S - 3))
        _in_class(lecturer, phones, code)
    finally:
        pg_room["cluster"].start()
    phones[1].wait_for_function("() => /已发送/.test(document.querySelector('#status').innerText)", timeout=120_000)
    _wait_count(lecturer, "2 of 2 answered")
    store = ClassStore(pg_room["db"])
    try:
        assert store.counts(code, "numpy_decoder:1")["distribution"] == {1: 1, 2: 1}  # both answers, as given
    finally:
        store.close()
    settle(lecturer)
    lecturer.locator(css("class.reveal") + " button").click()
    for page in phones:
        page.wait_for_selector(".verdict", timeout=120_000)
    _in_class(lecturer, phones, code)


def test_a_sqlite_file_locked_for_15_s_delays_an_answer_and_loses_none(browser, tmp_path):
    room = Room(browser, env={"EXPLORER_DATA_DIR": str(tmp_path)})
    try:
        lecturer, code = _start(room, "en")
        phone = _phone(room, code, "en")
        phone.wait_for_selector("#options button")
        locked, release = threading.Event(), threading.Event()

        def hold_lock() -> None:  # another process's lock, as a backup tool or a second program would hold it
            conn = sqlite3.connect(tmp_path / "classes.sqlite3", timeout=30, isolation_level=None)
            conn.execute("BEGIN EXCLUSIVE")
            locked.set()
            release.wait(LOCK_S)
            conn.execute("COMMIT")
            conn.close()

        holder = threading.Thread(target=hold_lock)
        holder.start()
        assert locked.wait(30)
        phone.locator("#options button").nth(3).click()  # answered while the file is locked
        time.sleep(LOCK_S / 2)
        assert re.search(r"Sending|Not sent yet", phone.locator("#status").inner_text())  # kept, not lost
        holder.join(LOCK_S + 30)
        phone.wait_for_function("() => document.querySelector('#status').innerText.includes('Sent')",
                                timeout=120_000)
        _wait_count(lecturer, "1 of 1 answered")
        _in_class(lecturer, [phone], code)
    finally:
        room.close()
