"""The class store survives its database: a SQLite file locked by another connection, a read-only episode, a
PostgreSQL server stopped and started mid-class (the throwaway cluster of conftest.py), a SQLite file deleted or
replaced under the server; a write whose commit went through before its connection failed is not applied twice.

Waits are short (a lock of ~2 s, a low SQLite busy timeout) and time bounds generous."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import contextmanager

import pytest
import sqlalchemy as sa

import teaching.classroom.connection
import teaching.classroom.database
import teaching.classroom.store
from teaching.classroom import ClassStore, StoreLost, StoreUnavailable, UnknownClass, new_student_id


def sqlite_url(tmp_path_factory, name: str = "classes.sqlite3") -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('resilience') / name}"


def a_class(store, students: int = 1, question: str = "q1"):
    """A class with ``question`` open and ``students`` joined: ``(code, secret, [student ids])``."""
    code, secret = store.create_class()
    store.set_step(code, secret, {"kind": "poll", "question": question})
    ids = [new_student_id() for _ in range(students)]
    for sid in ids:
        store.join(code, sid)
    return code, secret, ids


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory):
    s = ClassStore(sqlite_url(tmp_path_factory), busy_timeout_ms=200, retry_s=15.0, read_retry_s=1.0)
    yield s
    s.close()


def hold_lock(path: str, seconds: float, locked: threading.Event) -> None:
    """Another connection holds the SQLite file's write lock (BEGIN EXCLUSIVE) for ``seconds``."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    locked.set()
    time.sleep(seconds)
    conn.execute("COMMIT")
    conn.close()


def test_an_answer_given_while_sqlite_is_locked_arrives_after_the_lock(sqlite_store):
    code, _, (sid,) = a_class(sqlite_store)
    locked = threading.Event()
    holder = threading.Thread(target=hold_lock, args=(sqlite_store.engine.url.database, 2.0, locked))
    holder.start()
    assert locked.wait(5)
    started = time.monotonic()
    sqlite_store.answer(code, sid, "q1", 2)  # retried past the 0.2 s busy timeout until the lock goes
    waited = time.monotonic() - started
    holder.join()
    assert 1.0 < waited < 12.0
    assert sqlite_store.counts(code, "q1")["distribution"] == {2: 1}


def test_a_lock_longer_than_the_deadline_raises_store_unavailable_and_nothing_is_applied(sqlite_store):
    code, _, (sid,) = a_class(sqlite_store)
    short = ClassStore(str(sqlite_store.engine.url), busy_timeout_ms=100, retry_s=0.5)
    locked = threading.Event()
    holder = threading.Thread(target=hold_lock, args=(sqlite_store.engine.url.database, 1.5, locked))
    holder.start()
    try:
        assert locked.wait(5)
        before = time.time()
        with pytest.raises(StoreUnavailable, match="locked") as err:
            short.answer(code, sid, "q1", 1)
        assert err.value.waited_s >= 0.5 and before - 1 <= err.value.since <= time.time()
        assert err.value.seconds >= 0
    finally:
        holder.join()
    assert sqlite_store.counts(code, "q1")["answered"] == 0
    short.answer(code, sid, "q1", 1)  # the same call, made again once the store is back
    assert sqlite_store.counts(code, "q1")["answered"] == 1
    short.close()


def test_after_a_read_only_episode_every_later_write_succeeds(tmp_path_factory):
    """Connections opened while the file was read-only stay read-only (modelled with PRAGMA query_only: the test
    runs as root, whom chmod does not stop); the store drops them instead of pooling them again."""
    store = ClassStore(sqlite_url(tmp_path_factory), busy_timeout_ms=200, retry_s=0.6)
    code, _, ids = a_class(store, students=10)

    def read_only(dbapi_connection, _record):
        dbapi_connection.execute("PRAGMA query_only = ON")

    sa.event.listen(store.engine, "connect", read_only)
    store.engine.dispose()
    with pytest.raises(StoreUnavailable, match="readonly"):
        store.answer(code, ids[0], "q1", 0)
    readers = [threading.Thread(target=store.counts, args=(code, "q1")) for _ in range(4)]
    for th in readers:  # reads go on during the episode: the pool fills with read-only connections
        th.start()
    for th in readers:
        th.join()
    sa.event.remove(store.engine, "connect", read_only)  # writable again; the pool still holds read-only ones
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA query_only").scalar() == 1
    for i, sid in enumerate(ids):
        store.answer(code, sid, "q1", i % 3)
    assert store.counts(code, "q1")["answered"] == 10
    store.close()


def test_a_deleted_database_file_is_said_and_a_fresh_one_opened(tmp_path_factory, monkeypatch):
    monkeypatch.setattr(teaching.classroom.connection, "FILE_CHECK_S", 0.0)
    store = ClassStore(sqlite_url(tmp_path_factory), busy_timeout_ms=200)
    code, secret, (sid,) = a_class(store)
    path = store.engine.url.database
    os.remove(path)
    with pytest.raises(StoreLost, match="deleted") as err:
        store.answer(code, sid, "q1", 1)
    assert isinstance(err.value, UnknownClass) and path in str(err.value)
    with pytest.raises(StoreLost):
        store.state(code)  # every page of the lost class is told why, not "no such class"
    new_code, new_secret = store.create_class()  # the fresh file has the schema: a new class starts
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT code FROM classes").fetchall() == [(new_code,)]
    store.close()


def test_a_replaced_database_file_is_said_and_the_new_file_used(tmp_path_factory, monkeypatch):
    monkeypatch.setattr(teaching.classroom.connection, "FILE_CHECK_S", 0.0)
    store = ClassStore(sqlite_url(tmp_path_factory), busy_timeout_ms=200)
    other = ClassStore(sqlite_url(tmp_path_factory, "backup.sqlite3"))
    kept, _, (kept_sid,) = a_class(other)
    other.close()
    gone, _, _ = a_class(store)
    os.replace(other.engine.url.database, store.engine.url.database)
    with pytest.raises(StoreLost, match="replaced"):
        store.state(gone)
    store.answer(kept, kept_sid, "q1", 0)  # the class in the new file goes on
    assert store.counts(kept, "q1")["answered"] == 1
    store.close()


# ---- a write whose commit went through, then its connection failed: retried, not doubled --------------------------
@pytest.fixture
def flaky_commit(monkeypatch):
    """``arm(store, then=None)``: the store's next write transaction commits, then (after ``then()``, another
    session's action) fails as if the connection dropped."""
    def arm(store, then=None):
        real = store._write
        armed = [True]

        @contextmanager
        def write():
            with real() as conn:
                yield conn
            if armed.pop() if armed else False:
                if then is not None:
                    then()
                raise sa.exc.OperationalError("COMMIT", {}, Exception("server closed the connection unexpectedly"))

        monkeypatch.setattr(store, "_write", write)
        return armed
    return arm


@pytest.fixture(scope="module")
def store(db_url):
    s = ClassStore(db_url, busy_timeout_ms=200)
    yield s
    s.close()


def test_retried_writes_are_not_doubled(store, flaky_commit):
    def classes() -> int:
        with store.engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(teaching.classroom.database.classes)).scalar()

    before = classes()
    armed = flaky_commit(store)
    code, secret = store.create_class()
    assert armed == [] and classes() == before + 1
    first = store.state(code)["step_seq"]
    for expect, question in ((None, "qa"), (first + 1, "qb")):
        flaky_commit(store)
        seq = store.set_step(code, secret, {"kind": "poll", "question": question}, expect_seq=expect)
        assert seq == store.state(code)["step_seq"] == (first + 1 if expect is None else first + 2)
    sids = [new_student_id() for _ in range(3)]
    for i, sid in enumerate(sids):
        flaky_commit(store)
        store.join(code, sid, f"s{i}")
        flaky_commit(store)
        store.answer(code, sid, "qb", i)
    flaky_commit(store)
    store.reveal(code, secret)
    counts = store.counts(code, "qb")
    assert counts["joined"] == 3 and counts["answered"] == 3 and len(store.roster(code, secret)) == 3
    assert store.state(code)["revealed"]
    code, secret, (sid,) = a_class(store)
    flaky_commit(store, then=lambda: store.reveal(code, secret))  # the reveal lands between commit and retry
    store.answer(code, sid, "q1", 1)  # taken before the reveal: not refused on the retry
    assert store.counts(code, "q1")["distribution"] == {1: 1}


# ---- PostgreSQL stopped and started mid-class ------------------------------------------------------------------
def test_postgresql_stopped_and_started_mid_class_loses_no_answer(postgres):
    store = ClassStore(postgres.url, retry_s=30.0, read_retry_s=1.0)
    code, secret, ids = a_class(store, students=6)
    store.answer(code, ids[0], "q1", 0)
    postgres.stop()
    try:
        during = threading.Thread(target=store.answer, args=(code, ids[1], "q1", 1))
        during.start()
        with pytest.raises(StoreUnavailable) as err:  # a read gives up soon, and says so: not "out of the class"
            store.state(code)
        assert err.value.seconds > 0
        assert during.is_alive()  # the answer is still being retried
    finally:
        postgres.start()
    during.join(30)
    assert not during.is_alive()
    for i, sid in enumerate(ids[2:], 2):  # every later write succeeds (the pool's dead connections are replaced)
        store.answer(code, sid, "q1", i % 2)
    assert store.counts(code, "q1") == {"joined": 6, "on_step": 0, "answered": 6, "distribution": {0: 3, 1: 3}}
    store.close()
