"""The join limiter (teaching/classroom/limits.py) with an injected clock, and the store's use of it: a flood of
joins from one address is refused before any query while another address still joins."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from teaching.classroom import ClassStore, KeyedLimiter, TooManyJoins, new_student_id


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_burst_then_the_rate_per_key():
    clock = Clock()
    limit = KeyedLimiter(20, 60.0, clock=clock)
    assert [limit.allow("a") for _ in range(25)] == [True] * 20 + [False] * 5
    assert limit.allow("b")  # another key has its own bucket
    clock.t += 2.9
    assert not limit.allow("a")  # 20 a minute: one token every 3 s
    clock.t += 0.2
    assert limit.allow("a") and not limit.allow("a")
    clock.t += 3600
    assert sum(limit.allow("a") for _ in range(25)) == 20  # refilled to the burst, not beyond


def test_memory_is_bounded_and_an_active_key_stays_limited():
    clock = Clock()
    limit = KeyedLimiter(5, 60.0, max_keys=100, clock=clock)
    for _ in range(5):
        assert limit.allow("flood")
    for i in range(1000):
        limit.allow(f"10.0.{i // 256}.{i % 256}")
        if i % 50 == 0:
            assert not limit.allow("flood")  # used recently: never evicted
    assert len(limit) <= 100


def test_threads_take_exactly_the_burst():
    limit = KeyedLimiter(50, 60.0, clock=Clock())
    allowed = []

    def hammer():
        allowed.extend(limit.allow("one") for _ in range(100))

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert allowed.count(True) == 50


def test_a_join_flood_from_one_address_is_refused_without_a_query_while_another_joins(tmp_path):
    store = ClassStore(f"sqlite:///{tmp_path / 'classes.sqlite3'}", join_limit=KeyedLimiter(5, 60.0, clock=Clock()))
    try:
        code, secret = store.create_class()
        queries = []
        sa.event.listen(store.engine, "before_cursor_execute", lambda *args: queries.append(args[2]))
        refused = 0
        for _ in range(40):
            try:
                store.join(code, new_student_id(), client="203.0.113.9")
            except TooManyJoins:
                refused += 1
        store.join(code, new_student_id(), "Ada", client="198.51.100.7")
        assert refused == 35 and len(store.roster(code, secret)) == 6
        with pytest.raises(TooManyJoins):
            queries.clear()
            store.join(code, new_student_id(), client="203.0.113.9")
        assert queries == []  # refused before the database was asked
        store.join(code, new_student_id())  # no client (an app session): not limited here
    finally:
        store.close()
