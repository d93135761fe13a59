"""The class store on SQLite and on PostgreSQL (fixtures in conftest.py): codes, the lecturer secret, answers and
the reveal, counts without names, bounds, no cross-talk, nothing lost on restart, concurrent answers; a reveal is a
question's for good (a poll, Back, a replayed answer never re-open it), a reveal racing Next is never lost, a stale
tab cannot move the class back; a version-1 database is migrated."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa

import teaching.classroom.database
import teaching.classroom.store

from teaching.classroom import (
    CODE_ALPHABET,
    MAX_NICKNAME,
    AnswerClosed,
    BadInput,
    ClassEnded,
    ClassExpired,
    ClassFull,
    ClassStore,
    JoinsClosed,
    NotJoined,
    NotLecturer,
    StepMoved,
    UnknownClass,
    new_student_id,
)


@pytest.fixture(scope="module")
def store(db_url):
    s = ClassStore(db_url)
    yield s
    s.close()


def open_question(store, question="q1", now=None):
    code, secret = store.create_class(now=now)
    store.set_step(code, secret, {"lesson": "attention", "step": 2, "settings": "abc123", "question": question},
                   now=now)
    return code, secret


def test_codes_use_the_alphabet_without_look_alikes_and_are_unique(store):
    codes = [store.create_class()[0] for _ in range(30)]
    assert len(set(codes)) == 30
    for code in codes:
        assert len(code) == 6 and set(code) <= set(CODE_ALPHABET)
    assert not set("O0I1") & set(CODE_ALPHABET) and len(CODE_ALPHABET) == 32
    assert store.state(codes[0].lower())["code"] == codes[0]  # typed in lower case: still found


def test_a_taken_code_is_drawn_again(store, monkeypatch):
    taken, _ = store.create_class()
    fresh = "HJKMNP" if taken != "HJKMNP" else "QRSTUV"
    draws = iter([taken, taken, fresh])
    monkeypatch.setattr(teaching.classroom.store, "new_code", lambda: next(draws))
    code, _ = store.create_class()
    assert code == fresh


@pytest.mark.parametrize("action", ["set_step", "reveal", "end", "roster", "check_lecturer"])
def test_only_the_secret_controls_the_class(store, action):
    code, secret = store.create_class()
    student = new_student_id()
    store.join(code, student)
    _, other_secret = store.create_class()
    call = {
        "set_step": lambda s: store.set_step(code, s, {"question": "x"}),
        "reveal": lambda s: store.reveal(code, s),
        "end": lambda s: store.end(code, s),
        "roster": lambda s: store.roster(code, s),
        "check_lecturer": lambda s: store.check_lecturer(code, s),
    }[action]
    for wrong in ["", None, student, other_secret, secret[:-1], secret + "x", 12345, secret.encode()]:
        with pytest.raises(NotLecturer):
            call(wrong)
    assert store.state(code)["step_seq"] == 0 and not store.state(code)["revealed"]
    assert not store.state(code)["ended"]
    call(secret)


def test_the_secret_is_stored_only_as_a_salted_hash(store, db_url):
    code, secret = store.create_class()
    with store.engine.connect() as conn:
        row = conn.execute(teaching.classroom.database.classes.select().where(teaching.classroom.database.classes.c.code == code)).mappings()
        row = dict(row.one())
    assert secret not in json.dumps(row, default=str)
    assert len(row["secret_hash"]) == 64 and row["secret_salt"]


def test_answers_upsert_until_the_reveal_and_the_counts_have_no_names(store):
    code, secret = open_question(store)
    ids = [new_student_id() for _ in range(4)]
    for i, sid in enumerate(ids):
        store.join(code, sid, nickname=f"Nick{i}")
    store.answer(code, ids[0], "q1", "A")
    store.answer(code, ids[0], "q1", "B")  # changed her mind: one answer, the last
    store.answer(code, ids[1], "q1", "B")
    store.answer(code, ids[2], "q1", 3)
    counts = store.counts(code, "q1")
    assert counts == {"joined": 4, "on_step": 0, "answered": 3, "distribution": {"B": 2, 3: 1}}
    assert not any("Nick" in str(k) or k in ids for k in counts["distribution"])
    assert store.my_answer(code, ids[0], "q1") == "B" and store.my_answer(code, ids[3], "q1") is None

    store.reveal(code, secret)
    assert store.state(code)["revealed"]
    for sid, value in [(ids[0], "A"), (ids[3], "A")]:
        with pytest.raises(AnswerClosed):
            store.answer(code, sid, "q1", value)
    assert store.counts(code, "q1")["distribution"] == {"B": 2, 3: 1}

    store.set_step(code, secret, {"poll": "Which?", "options": ["x", "y"], "question": "poll-1"})
    assert not store.state(code)["revealed"]  # the poll's own question is open: the reveal was q1's
    with pytest.raises(AnswerClosed):  # the old question is not open any more
        store.answer(code, ids[3], "q1", "A")
    store.answer(code, ids[3], "poll-1", ["x", "y"])
    assert store.counts(code, "poll-1")["distribution"] == {'["x","y"]': 1}


def test_a_step_without_a_question_takes_no_answers(store):
    code, secret = store.create_class()
    sid = new_student_id()
    store.join(code, sid)
    with pytest.raises(AnswerClosed):
        store.answer(code, sid, "q1", "A")
    store.set_step(code, secret, {"lesson": "norms", "step": 0})
    assert store.state(code)["question"] is None
    with pytest.raises(AnswerClosed):
        store.answer(code, sid, "q1", "A")


def test_codes_expire(store):
    t0 = 1_000_000.0
    code, secret = open_question(store, now=t0)
    sid = new_student_id()
    store.join(code, sid, now=t0 + 60)
    store.answer(code, sid, "q1", "A", now=t0 + 11.9 * 3600)
    later = t0 + 12 * 3600
    for call in [lambda: store.state(code, now=later), lambda: store.join(code, new_student_id(), now=later),
                 lambda: store.answer(code, sid, "q1", "B", now=later), lambda: store.reveal(code, secret, now=later),
                 lambda: store.counts(code, "q1", now=later)]:
        with pytest.raises(ClassExpired):
            call()
    assert store.purge(now=later) >= 1
    with pytest.raises(UnknownClass):
        store.state(code, now=t0)


def test_an_ended_class_takes_nothing_more(store):
    code, secret = open_question(store)
    sid = new_student_id()
    store.join(code, sid)
    store.end(code, secret)
    store.end(code, secret)  # twice is fine
    assert store.state(code)["ended"]
    with pytest.raises(ClassEnded):
        store.join(code, new_student_id())
    with pytest.raises(ClassEnded):
        store.answer(code, sid, "q1", "A")
    with pytest.raises(ClassEnded):
        store.set_step(code, secret, {"question": "q2"})


def test_a_class_holds_at_most_300_students(store):
    code, _ = store.create_class()
    ids = [f"student-{i:04d}" for i in range(300)]
    for sid in ids:
        store.join(code, sid)
    with pytest.raises(ClassFull):
        store.join(code, "student-late")
    store.join(code, ids[7], nickname="back again")  # a rejoin is not a new student
    assert store.counts(code, "q1")["joined"] == 300


def test_two_classes_do_not_see_each_other(store):
    (a, sa), (b, sb) = open_question(store, "shared-q"), open_question(store, "shared-q")
    store.set_step(b, sb, {"lesson": "loss", "step": 5, "question": "shared-q"})
    alice, bob = new_student_id(), new_student_id()
    store.join(a, alice, nickname="Alice")
    store.join(b, bob, nickname="Bob")
    store.answer(a, alice, "shared-q", "A")
    store.answer(b, bob, "shared-q", "B")
    assert store.counts(a, "shared-q") == {"joined": 1, "on_step": 0, "answered": 1, "distribution": {"A": 1}}
    assert store.counts(b, "shared-q") == {"joined": 1, "on_step": 0, "answered": 1, "distribution": {"B": 1}}
    assert store.state(a)["step"]["lesson"] == "attention" and store.state(b)["step"]["lesson"] == "loss"
    assert [r["nickname"] for r in store.roster(a, sa)] == ["Alice"]
    with pytest.raises(NotLecturer):  # one class's secret is not another's
        store.reveal(b, sa)
    store.reveal(a, sa)
    assert store.state(a)["revealed"] and not store.state(b)["revealed"]
    store.answer(b, bob, "shared-q", "C")


def test_a_student_who_did_not_join_cannot_answer(store):
    (a, _), (b, _) = open_question(store), open_question(store)
    alice = new_student_id()
    store.join(a, alice)
    with pytest.raises(NotJoined):
        store.answer(b, alice, "q1", "A")
    with pytest.raises(NotJoined):
        store.answer(b, new_student_id(), "q1", "A")
    assert store.counts(b, "q1")["answered"] == 0


def test_hostile_nicknames_are_stored_as_bounded_plain_text(store):
    code, secret = store.create_class()
    hostile = {
        "x" * 10_000: "x" * MAX_NICKNAME,
        "<script>alert(1)</script>": "<script>alert(1)</script",
        "a\x00b\x1b[31mc\nd\u202eE\u200bF": "ab[31mc dEF",
        "Robert'); DROP TABLE students;--": "Robert'); DROP TABLE stu",
        "  \t\n ": None,
        "李白 🌙": "李白 🌙",
    }
    for i, nick in enumerate(hostile):
        store.join(code, f"hostile-{i:03d}", nickname=nick)
    stored = [r["nickname"] for r in store.roster(code, secret)]
    assert stored == list(hostile.values())
    assert all(n is None or (len(n) <= MAX_NICKNAME and n.isprintable()) for n in stored)
    with pytest.raises(BadInput):
        store.join(code, "hostile-999", nickname=["not", "text"])


@pytest.mark.parametrize("value", ["x" * 199, {"a": "b" * 300}, float("nan"), {1, 2}, object()])
def test_oversized_or_non_json_answers_are_bad_input(store, value):
    code, _ = open_question(store)
    sid = new_student_id()
    store.join(code, sid)
    with pytest.raises(BadInput):
        store.answer(code, sid, "q1", value)
    store.answer(code, sid, "q1", "x" * 198)  # 200 bytes with its quotes: the largest allowed
    assert store.counts(code, "q1")["answered"] == 1


@pytest.mark.parametrize("bad", [
    lambda s, c, sid: s.answer(c, sid, "q" * 201, "A"),
    lambda s, c, sid: s.answer(c, sid, "", "A"),
    lambda s, c, sid: s.answer(c, sid, None, "A"),
    lambda s, c, sid: s.answer(c, "short", "q1", "A"),
    lambda s, c, sid: s.answer(c, "x' OR '1'='1", "q1", "A"),
    lambda s, c, sid: s.join(c, None),
    lambda s, c, sid: s.set_step(c, "secret", {"question": "q" * 300}),
    lambda s, c, sid: s.set_step(c, "secret", {"big": "x" * 5000}),
])
def test_bad_input_is_a_clear_error_never_an_sql_error(store, bad):
    code, _ = open_question(store)
    sid = new_student_id()
    store.join(code, sid)
    with pytest.raises(BadInput):
        bad(store, code, sid)


@pytest.mark.parametrize("code", ["", "ABC", "ABCDEFG", "OOOOOO", "'; --", None, 123456, "ZZZZZZ"])
def test_a_bad_code_is_an_unknown_class(store, code):
    with pytest.raises(UnknownClass, match="class"):
        store.state(code)
    with pytest.raises(UnknownClass):
        store.join(code, new_student_id())


def test_nothing_is_lost_on_restart(db_url):
    first = ClassStore(db_url)
    code, secret = open_question(first, "restart-q")
    ids = [new_student_id() for _ in range(5)]
    for i, sid in enumerate(ids):
        first.join(code, sid, nickname=f"s{i}")
        if i < 4:
            first.answer(code, sid, "restart-q", "AB"[i % 2])
    state = first.state(code)
    first.close()

    second = ClassStore(db_url)  # a new process on the same database
    try:
        assert second.state(code) == state
        assert [r["nickname"] for r in second.roster(code, secret)] == [f"s{i}" for i in range(5)]
        assert second.counts(code, "restart-q") == {"joined": 5, "on_step": 0, "answered": 4, "distribution": {"A": 2, "B": 2}}
        second.answer(code, ids[4], "restart-q", "A")  # the question is still open, the students still joined
        second.reveal(code, secret)
        assert second.counts(code, "restart-q")["distribution"] == {"A": 3, "B": 2}
        assert second.state(code)["revealed"]
    finally:
        second.close()


def test_concurrent_answers_are_all_counted_once(store):
    code, secret = open_question(store, "race-q")
    ids = [new_student_id() for _ in range(50)]

    def student(i: int) -> None:
        store.join(code, ids[i], nickname=f"n{i}")
        store.answer(code, ids[i], "race-q", "A")
        store.answer(code, ids[i], "race-q", "ABCD"[i % 4])  # changes it: still one answer

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(student, range(50)))
    counts = store.counts(code, "race-q")
    assert counts["joined"] == 50 and counts["answered"] == 50
    assert counts["distribution"] == {"A": 13, "B": 13, "C": 12, "D": 12}


def test_answers_racing_the_reveal_are_either_counted_or_refused(store):
    code, secret = open_question(store, "reveal-race")
    ids = [new_student_id() for _ in range(40)]
    for sid in ids:
        store.join(code, sid)
    accepted, refused = [], []
    start = threading.Barrier(9)

    def student(chunk):
        start.wait()
        for sid in chunk:
            try:
                store.answer(code, sid, "reveal-race", "A")
                accepted.append(sid)
            except AnswerClosed:
                refused.append(sid)

    threads = [threading.Thread(target=student, args=(ids[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    start.wait()
    time.sleep(0.005)
    store.reveal(code, secret)
    for t in threads:
        t.join()
    assert len(accepted) + len(refused) == 40
    assert store.counts(code, "reveal-race")["answered"] == len(accepted)  # nothing slipped in after the reveal


def lesson_step(n: int) -> dict:
    return {"kind": "lesson", "lesson": "numpy_decoder", "step": n, "page": "attention",
            "question": f"numpy_decoder:{n}"}


POLL = {"kind": "poll", "question": "poll:7", "prompt": "Ready?", "options": ["yes", "no"], "page": "attention",
        "lesson": "numpy_decoder", "step": 1}


def test_a_reveal_is_the_questions_and_survives_a_poll_back_and_next(store):
    """Issue 32: a quick poll opened and closed after the reveal re-opened the question (one "revealed" flag for
    the class, cleared by every step): the phones took answers again and a student changed hers to the key."""
    code, secret = store.create_class()
    seq = store.set_step(code, secret, lesson_step(1))
    ids = [new_student_id() for _ in range(5)]
    for i, sid in enumerate(ids):
        store.join(code, sid)
        if i < 4:
            store.answer(code, sid, "numpy_decoder:1", 0 if i else 2)  # four answers, one of them 2
    store.reveal(code, secret)
    seq = store.set_step(code, secret, POLL, expect_seq=seq)
    assert not store.state(code)["revealed"]  # the poll's question is its own, open
    store.answer(code, ids[0], "poll:7", 1)
    seq = store.set_step(code, secret, lesson_step(1), expect_seq=seq)  # the poll closed: back to step 1
    state = store.state(code)
    assert state["question"] == "numpy_decoder:1" and state["revealed"]
    for sid in ids[:2] + ids[4:]:  # a changed answer (the one the key gave away) and a first one: both refused
        with pytest.raises(AnswerClosed):
            store.answer(code, sid, "numpy_decoder:1", 0)
    assert store.counts(code, "numpy_decoder:1")["distribution"] == {0: 3, 2: 1}
    # revealed per step: step 2 is open, and going Back to step 1 finds it still revealed
    seq = store.set_step(code, secret, lesson_step(2), expect_seq=seq)
    assert not store.state(code)["revealed"]
    store.answer(code, ids[4], "numpy_decoder:2", 1)
    seq = store.set_step(code, secret, lesson_step(1), expect_seq=seq)
    assert store.state(code)["revealed"]
    with pytest.raises(AnswerClosed):
        store.answer(code, ids[4], "numpy_decoder:1", 0)
    store.set_step(code, secret, lesson_step(2), expect_seq=seq)
    assert not store.state(code)["revealed"]
    store.answer(code, ids[4], "numpy_decoder:2", 0)  # never revealed: still open, its answer changed
    assert store.my_answer(code, ids[4], "numpy_decoder:2") == 0
    # a reveal is for good: revealing again (another tab, a replayed click) changes nothing
    store.reveal(code, secret)
    store.reveal(code, secret, "numpy_decoder:2")
    assert store.state(code)["revealed"]


def test_an_answer_after_the_reveal_is_refused_whatever_the_request(store):
    """The store refuses it, not only the page: a replayed or forged request with the right question id, the
    student's own id and a valid value changes nothing, even once the class has left the question and come back."""
    code, secret = store.create_class()
    seq = store.set_step(code, secret, lesson_step(3))
    sid = new_student_id()
    store.join(code, sid)
    store.answer(code, sid, "numpy_decoder:3", 1)
    store.reveal(code, secret, "numpy_decoder:3")
    for value in (0, 1, 2, "0", None):
        with pytest.raises(AnswerClosed):
            store.answer(code, sid, "numpy_decoder:3", value)
    store.join(code, sid, nickname="again")  # a rejoin does not re-open it either
    for step in (POLL, lesson_step(3)):
        seq = store.set_step(code, secret, step, expect_seq=seq)
    with pytest.raises(AnswerClosed):
        store.answer(code, sid, "numpy_decoder:3", 2)
    assert store.my_answer(code, sid, "numpy_decoder:3") == 1
    assert store.counts(code, "numpy_decoder:3")["distribution"] == {1: 1}


def test_a_reveal_racing_next_is_kept_for_its_question(store):
    """Reveal (tab A, drawn for step n) and Next (tab B, from step n) at once, many times over: whichever commits
    first, the end is "step n revealed, the class on step n + 1 with its question open", never step n unrevealed
    and never step n + 1's reveal."""
    code, secret = store.create_class()
    seq = store.set_step(code, secret, lesson_step(1))
    for n in range(1, 13):
        here, there = f"numpy_decoder:{n}", f"numpy_decoder:{n + 1}"
        start = threading.Barrier(2)
        errors = []

        def tab_a():
            start.wait()
            try:
                store.reveal(code, secret, here)
            except Exception as err:  # noqa: BLE001 -- reported below
                errors.append(err)

        def tab_b(drawn_seq=seq, n=n):
            start.wait()
            if n % 2:
                time.sleep(0.002)  # half the time Next a little later
            try:
                store.set_step(code, secret, lesson_step(n + 1), expect_seq=drawn_seq)
            except Exception as err:  # noqa: BLE001
                errors.append(err)

        threads = [threading.Thread(target=tab_a), threading.Thread(target=tab_b)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors
        state = store.state(code)
        assert state["question"] == there and not state["revealed"], n  # the next step's question is open
        seq = state["step_seq"]
        sid = new_student_id()
        store.join(code, sid)
        store.answer(code, sid, there, 0)  # and takes answers
        with pytest.raises(AnswerClosed):
            store.answer(code, sid, here, 0)
        assert store.is_revealed(code, here) and not store.is_revealed(code, there), n
        back = store.set_step(code, secret, lesson_step(n), expect_seq=seq)  # Back: step n was revealed
        assert store.state(code)["revealed"], n
        seq = store.set_step(code, secret, lesson_step(n + 1), expect_seq=back)


def test_a_stale_tab_cannot_move_the_class_back(store):
    """Next is a compare-and-set from the step it was drawn for: a tab that has not seen another tab's move is
    refused (and then takes the class's step), unless it makes the very same move."""
    code, secret = store.create_class()
    first = store.set_step(code, secret, lesson_step(1))
    second = store.set_step(code, secret, lesson_step(2), expect_seq=first)  # tab A: Next
    assert store.set_step(code, secret, lesson_step(2), expect_seq=first) == second  # tab B: the same Next
    with pytest.raises(StepMoved):  # tab B, still drawn for step 1, opens a poll over it
        store.set_step(code, secret, POLL, expect_seq=first)
    state = store.state(code)
    assert state["step"] == lesson_step(2) and state["step_seq"] == second
    with pytest.raises(BadInput):
        store.set_step(code, secret, POLL, expect_seq="2")
    with pytest.raises(NotLecturer):  # the secret is checked first: a stranger learns nothing about the step
        store.set_step(code, "guess", POLL, expect_seq=first)


def test_concurrent_nexts_move_the_class_once(store):
    code, secret = store.create_class()
    seq = store.set_step(code, secret, lesson_step(1))
    moved, refused = [], []
    start = threading.Barrier(6)

    def tab(i):
        start.wait()
        try:
            moved.append(store.set_step(code, secret, lesson_step(2) if i % 2 else POLL, expect_seq=seq))
        except StepMoved:
            refused.append(i)

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(tab, range(6)))
    assert store.state(code)["step_seq"] == seq + 1  # one move won; the others were refused or the same move
    assert len(moved) + len(refused) == 6 and set(moved) == {seq + 1}


def test_a_version_1_database_is_migrated_with_its_reveal(tmp_path):
    """A class database of schema version 1 (one ``revealed`` flag per class) opens with version 3: the flag
    becomes its question's reveal, answers to it stay closed, its open question enters the record of questions."""
    url = f"sqlite:///{tmp_path / 'v1.sqlite3'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        for sql in [
            "CREATE TABLE schema_version (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)",
            "INSERT INTO schema_version VALUES (1, 1)",
            "CREATE TABLE classes (code VARCHAR(6) PRIMARY KEY, secret_salt VARCHAR(64) NOT NULL, secret_hash "
            "VARCHAR(64) NOT NULL, created_at FLOAT NOT NULL, expires_at FLOAT NOT NULL, step TEXT, step_seq "
            "INTEGER NOT NULL, question VARCHAR(200), revealed BOOLEAN NOT NULL, ended BOOLEAN NOT NULL)",
            "CREATE TABLE students (class_code VARCHAR(6) NOT NULL REFERENCES classes (code) ON DELETE CASCADE, "
            "student_id VARCHAR(64) NOT NULL, nickname VARCHAR(96), joined_at FLOAT NOT NULL, last_seen FLOAT NOT "
            "NULL, PRIMARY KEY (class_code, student_id))",
            "CREATE TABLE answers (class_code VARCHAR(6) NOT NULL, question VARCHAR(200) NOT NULL, student_id "
            "VARCHAR(64) NOT NULL, value TEXT NOT NULL, answered_at FLOAT NOT NULL, PRIMARY KEY (class_code, "
            "question, student_id), FOREIGN KEY(class_code, student_id) REFERENCES students (class_code, "
            "student_id) ON DELETE CASCADE)",
        ]:
            conn.exec_driver_sql(sql)
        now = time.time()
        for code, revealed in (("ABCDEF", 1), ("GHJKLM", 0)):
            conn.exec_driver_sql(
                "INSERT INTO classes VALUES (?, 'aa', 'bb', ?, ?, '{\"question\":\"q1\"}', 3, 'q1', ?, 0)",
                (code, now, now + 3600, revealed))
            conn.exec_driver_sql("INSERT INTO students VALUES (?, 'student-0001', NULL, ?, ?)", (code, now, now))
    engine.dispose()
    store = ClassStore(url)
    try:
        assert store.state("ABCDEF")["revealed"] and not store.state("GHJKLM")["revealed"]
        with pytest.raises(AnswerClosed):
            store.answer("ABCDEF", "student-0001", "q1", "A")
        store.answer("GHJKLM", "student-0001", "q1", "A")
        with store.engine.connect() as conn:
            assert conn.execute(sa.select(teaching.classroom.database.schema_version.c.version)).scalar() == 4
            assert "figure" in {c["name"] for c in sa.inspect(conn).get_columns("reveals")}  # version 4
            assert "revealed" not in {c["name"] for c in sa.inspect(conn).get_columns("classes")}
            # version 3: the open question is on the class's record of questions (with the step that asked it)
            assert {(q.class_code, q.question) for q in conn.execute(sa.select(
                teaching.classroom.store.questions))} == {("ABCDEF", "q1"), ("GHJKLM", "q1")}
    finally:
        store.close()


def test_the_results_hold_every_question_asked_in_order_with_its_counts_and_no_names(store):
    """The lecturer's record (issue 34, results to keep): each question once, in the order asked, with the step
    that asked it (a poll's prompt and options), whether it was revealed, and the counts; a student cannot read it."""
    code, secret = store.create_class(now=1000.0)
    ids = [new_student_id() for _ in range(4)]
    for sid in ids:
        store.join(code, sid, now=1000.0)
    poll = {"kind": "poll", "question": "poll:1", "prompt": "Ready?", "options": ["yes", "no"]}
    store.set_step(code, secret, {"kind": "lesson", "lesson": "numpy_decoder", "step": 1,
                                  "question": "numpy_decoder:1"}, now=1001.0)
    for sid, value in zip(ids, [0, 1, 1]):
        store.answer(code, sid, "numpy_decoder:1", value, now=1002.0)
    store.reveal(code, secret, now=1003.0)
    store.set_step(code, secret, poll, now=1004.0)
    store.answer(code, ids[3], "poll:1", 0, now=1005.0)
    store.set_step(code, secret, {"kind": "page", "page": "overview"}, now=1006.0)
    store.set_step(code, secret, {"kind": "lesson", "lesson": "numpy_decoder", "step": 1,
                                  "question": "numpy_decoder:1"}, now=1007.0)  # Back: asked again, listed once
    store.end(code, secret, now=1008.0)
    got = store.results(code, secret, now=1009.0)  # after the class ended, before it expires
    assert got["joined"] == 4
    assert [(q["question"], q["revealed"], q["answered"], q["distribution"]) for q in got["questions"]] == [
        ("numpy_decoder:1", True, 3, {0: 1, 1: 2}), ("poll:1", False, 1, {0: 1})]
    assert got["questions"][1]["step"] == poll and got["questions"][0]["asked_at"] == 1001.0
    assert "student" not in json.dumps(got) and ids[0] not in json.dumps(got)
    with pytest.raises(NotLecturer):
        store.results(code, "guess", now=1009.0)


def test_closed_joining_refuses_newcomers_but_not_a_student_who_rejoins(store):
    code, secret = store.create_class()
    inside, late = new_student_id(), new_student_id()
    store.join(code, inside)
    store.set_joining(code, secret, False)
    assert store.state(code)["joins_closed"]
    with pytest.raises(JoinsClosed):
        store.join(code, late)
    store.join(code, inside, "back")  # a reload, a lost network: the student is still in the class
    with pytest.raises(NotLecturer):
        store.set_joining(code, "guess", True)
    store.set_joining(code, secret, True)
    store.join(code, late)
    assert store.counts(code, "-")["joined"] == 2


def test_a_revealed_questions_chart_is_kept_once_for_the_lecturer_only(store):
    """The phones draw the chart the lecturer's screen drew (issue 34): kept per revealed question, the first
    drawing wins, only the lecturer may put it, and it is not given out before the reveal."""
    code, secret = store.create_class(now=1000.0)
    store.set_step(code, secret, {"kind": "lesson", "question": "q1"}, now=1000.0)
    store.put_figure(code, secret, "q1", '{"data": []}', now=1001.0)  # not revealed yet: nothing kept
    assert store.figure(code, "q1", now=1001.0) is None
    store.reveal(code, secret, "q1", now=1002.0)
    with pytest.raises(NotLecturer):
        store.put_figure(code, "not-the-secret", "q1", '{"data": [1]}', now=1003.0)
    store.put_figure(code, secret, "q1", '{"data": [2]}', now=1003.0)
    store.put_figure(code, secret, "q1", '{"data": [3]}', now=1004.0)  # a redraw: the class saw the first
    assert store.figure(code, "q1", now=1005.0) == '{"data": [2]}'
    with pytest.raises(BadInput):
        store.put_figure(code, secret, "q1", "x" * (teaching.classroom.store.MAX_FIGURE_BYTES + 1), now=1006.0)


def test_phones_on_the_current_step_are_counted_from_their_marks(store):
    """The lecturer's pacing line: a student counts as on this step once their phone got it (a batch of marks,
    one write); a mark for an older step does not move a newer one back."""
    code, secret = store.create_class(now=1000.0)
    ids = [new_student_id() for _ in range(3)]
    for sid in ids:
        store.join(code, sid, now=1000.0)
    seq = store.set_step(code, secret, {"kind": "lesson", "question": "q1"}, now=1000.0)
    store.mark_seen(code, seq, ids[:2], now=1001.0)
    assert store.counts(code, "q1", now=1001.0)["on_step"] == 2
    store.mark_seen(code, seq - 1, ids[:1], now=1002.0)  # a late mark of the step before
    assert store.counts(code, "q1", now=1002.0)["on_step"] == 2
    seq = store.set_step(code, secret, {"kind": "lesson", "question": "q2"}, now=1003.0, expect_seq=seq)
    assert store.counts(code, "q2", now=1003.0)["on_step"] == 0  # nobody has the new step yet
    store.mark_seen(code, seq, ids, now=1004.0)
    assert store.counts(code, "q2", now=1004.0) == {"joined": 3, "on_step": 3, "answered": 0, "distribution": {}}
