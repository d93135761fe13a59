"""The class store: classes, their students and answers in a real database through SQLAlchemy Core.

SQLite by default, any SQLAlchemy URL through ``EXPLORER_CLASS_DB`` (PostgreSQL for replicas on several machines).
The tables, the engine, the schema version and its migrations are in :mod:`teaching.classroom.database`, the
checks of what callers pass in :mod:`teaching.classroom.inputs`; the connection with its retries in
:mod:`teaching.classroom.connection`, the reads in :mod:`teaching.classroom.reader`; this module makes the writes.

Rules every method keeps:

* every query filters by the class code: two classes never see each other's step, students or answers;
* lecturer actions compare a salted SHA-256 of the secret in constant time (only the hash is stored);
* a student answers only in a class they joined, only the class's current question, only until the reveal;
* a reveal belongs to a question (``reveals``: one row per class and question id), not to the class's current
  step: it is never undone, so moving away from a revealed question and back (a quick poll, Back, a second
  lecturer tab) finds it revealed, its answers closed; a reveal drawn for a question the class has just left (a
  Next from another tab got there first) is recorded for that question, never lost and never given to the next;
* the lecturer's step moves by compare-and-set: ``set_step(..., expect_seq=n)`` moves the class only from the
  step numbered ``n`` the caller last saw (``StepMoved`` otherwise): a stale tab cannot move it back;
* bounds: codes expire (12 h by default), at most 300 students a class, a nickname of at most 24 characters
  (control and format characters removed), a question id of at most 200 characters, an answer of at most 200
  bytes of JSON, a step of at most 4,000 bytes of JSON;
* bad input raises a :class:`~teaching.classroom.errors.ClassError` with a readable message, never an SQL error;
* a database that fails for a while does not fail a call (:mod:`teaching.classroom.connection`: retried with
  backoff, then one :class:`~teaching.classroom.errors.StoreUnavailable`). A retried write never counts twice: an
  answer, a join, a reveal, closing joins and the end are upserts or assignments (a retried answer already stored
  is not refused by a reveal made since); a step's move is a compare-and-set that returns the number of a move
  already made; a new class whose insert may have committed is found again by its code and its secret's hash;
* joins are rate-limited per client address when the caller passes one (``join(..., client=)``: 20 a minute,
  :mod:`teaching.classroom.limits`), refused before any query.

Times are seconds since the epoch (``time.time()``); every method takes ``now=`` so tests can move the clock.
"""

from __future__ import annotations

import secrets
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from teaching.classroom.connection import CLASS_TTL_S, READ_RETRY_S, WRITE_RETRY_S, now_or, retried
from teaching.classroom.database import answers, classes, questions, reveals, students
from teaching.classroom.errors import (AnswerClosed, BadInput, ClassFull, JoinsClosed, NotJoined, StepMoved,
                                       TooManyJoins)
from teaching.classroom.inputs import (CODE_ALPHABET, CODE_LENGTH, MAX_ANSWER_BYTES, MAX_STEP_BYTES, canonical_json,
                                       check_code, check_question, check_student_id, clean_nickname)
from teaching.classroom.limits import KeyedLimiter
from teaching.classroom.reader import Reader, hash_secret

MAX_STUDENTS = 300
MAX_FIGURE_BYTES = 8 * 1024 * 1024  # a revealed step's chart (a SmolLM2 heatmap's JSON is well under)


# ---- codes, ids and secrets --------------------------------------------------------------------------------------
def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_student_id() -> str:
    """A random student id for a browser (22 URL-safe characters)."""
    return secrets.token_urlsafe(16)


# ---- the store --------------------------------------------------------------------------------------------------
class ClassStore(Reader):
    """Every class of this server (or of every replica sharing the database). Thread-safe; one per process.

    ``max_students``: a class's places; ``join_limit``: the limiter of ``join(..., client=)`` (default 20 joins a
    minute per client); the rest: :class:`~teaching.classroom.connection.Connection`'s."""

    def __init__(self, url: str | None = None, *, ttl_s: float = CLASS_TTL_S, max_students: int = MAX_STUDENTS,
                 retry_s: float = WRITE_RETRY_S, read_retry_s: float = READ_RETRY_S,
                 busy_timeout_ms: int | None = None, join_limit: KeyedLimiter | None = None):
        self.max_students = int(max_students)
        self.join_limit = KeyedLimiter() if join_limit is None else join_limit
        super().__init__(url, ttl_s=ttl_s, retry_s=retry_s, read_retry_s=read_retry_s,
                         busy_timeout_ms=busy_timeout_ms)

    # -- the lecturer --
    def create_class(self, now: float | None = None) -> tuple[str, str]:
        """A new class: ``(code, lecturer_secret)``. The secret is shown once; only its salted hash is stored."""
        now = now_or(now)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_hex(16)
        digest = hash_secret(salt, secret)
        drawn: list[str] = []  # codes earlier attempts inserted: one may have committed before its attempt failed

        def attempt() -> tuple[str, str]:
            if drawn:
                with self._read() as conn:
                    mine = conn.execute(sa.select(classes.c.code).where(
                        classes.c.code.in_(drawn) & (classes.c.secret_hash == digest))).scalar()
                if mine is not None:
                    return mine, secret
            for _ in range(20):
                code = new_code()
                drawn.append(code)
                try:
                    with self._write() as conn:
                        conn.execute(classes.insert().values(
                            code=code, secret_salt=salt, secret_hash=digest, created_at=now,
                            expires_at=now + self.ttl_s, step=None, step_seq=0, question=None, ended=False))
                    return code, secret
                except IntegrityError:
                    continue  # the code is taken: draw another
            raise RuntimeError("could not find a free class code in 20 draws")

        return self._run(True, attempt)

    @retried(write=False)
    def check_lecturer(self, code: str, secret: str, now: float | None = None) -> None:
        """Raise :class:`NotLecturer` unless ``secret`` is this class's (a private lecturer link being opened)."""
        code, now = check_code(code), now_or(now)
        with self._read() as conn:
            row = self._class_row(conn, code, now, allow_ended=True)
        self._check_secret(row, secret)

    def set_step(self, code: str, secret: str, step: Any, now: float | None = None, *,
                 expect_seq: int | None = None) -> int:
        """Move the class to ``step`` (a small JSON value: ``{"lesson", "step", "settings"}`` or a poll). A dict
        with a ``"question"`` key opens that question id for answers, unless it was revealed before (a reveal is
        for good); otherwise no answer is taken. Returns the new step number (``step_seq``).

        ``expect_seq``: the step number the caller last saw (the step its button was drawn for); when the class has
        moved since, raise :class:`StepMoved` and change nothing, unless the class already shows ``step`` (two
        tabs making the same move: its number is returned)."""
        code, now = check_code(code), now_or(now)
        text = canonical_json(step, MAX_STEP_BYTES, "a step")
        question = step.get("question") if isinstance(step, dict) else None
        if question is not None:
            question = check_question(question)
        if expect_seq is not None and (not isinstance(expect_seq, int) or isinstance(expect_seq, bool)):
            raise BadInput("a step number is an integer")
        seen: list[int] = []  # the step number an earlier attempt found (its commit may have gone through)
        return self._run(True, lambda: self._set_step(code, secret, text, question, now, expect_seq, seen))

    def _set_step(self, code: str, secret: str, text: str, question: str | None, now: float,
                  expect_seq: int | None, seen: list[int]) -> int:
        with self._write() as conn:
            row = self._class_row(conn, code, now, lock="update")
            self._check_secret(row, secret)
            if expect_seq is not None and row["step_seq"] != expect_seq:
                if row["step"] == text:
                    return row["step_seq"]
                raise StepMoved(f"the class {code} moved to step {row['step_seq']} since step {expect_seq}")
            if seen and row["step_seq"] == seen[0] + 1 and row["step"] == text:
                return row["step_seq"]  # this call's own move, committed by an attempt that then failed
            seen[:] = [row["step_seq"]]
            seq = row["step_seq"] + 1
            conn.execute(classes.update().where(classes.c.code == code).values(step=text, step_seq=seq,
                                                                                 question=question))
            if question is not None:  # kept for the results: the step that first asked it
                conn.execute(self._insert(questions).values(class_code=code, question=question, step=text,
                                                            asked_at=now).on_conflict_do_nothing(
                    index_elements=[questions.c.class_code, questions.c.question]))
        return seq

    @retried(write=True)
    def reveal(self, code: str, secret: str, question: str | None = None, now: float | None = None) -> None:
        """Close ``question`` (default: the current step's) and show its answer and distribution to everyone, for
        good. A question the class has left since the button was drawn (another tab's Next) is revealed all the
        same, and the class's new question stays open. Revealing twice, or with no question open, is fine."""
        code, now = check_code(code), now_or(now)
        if question is not None:
            question = check_question(question)
        with self._write() as conn:
            row = self._class_row(conn, code, now, lock="update")
            self._check_secret(row, secret)
            question = question if question is not None else row["question"]
            if question is None:
                return
            stmt = self._insert(reveals).values(class_code=code, question=question, revealed_at=now)
            conn.execute(stmt.on_conflict_do_nothing(index_elements=[reveals.c.class_code, reveals.c.question]))

    @retried(write=True)
    def put_figure(self, code: str, secret: str, question: str, figure: str, now: float | None = None) -> None:
        """Keep the chart of a revealed ``question`` (Plotly JSON, as the lecturer's screen drew it) for the phones:
        once, the first drawing wins (a later redraw at other settings does not replace what the class saw)."""
        code, now = check_code(code), now_or(now)
        question = check_question(question)
        if not isinstance(figure, str) or len(figure.encode("utf-8")) > MAX_FIGURE_BYTES:
            raise BadInput(f"a chart is a JSON text of at most {MAX_FIGURE_BYTES:,} bytes")
        with self._write() as conn:
            self._check_secret(self._class_row(conn, code, now, allow_ended=True), secret)
            conn.execute(reveals.update().where((reveals.c.class_code == code) & (reveals.c.question == question)
                                                & reveals.c.figure.is_(None)).values(figure=figure))

    @retried(write=True)
    def mark_seen(self, code: str, seq: int, student_ids: list[str], now: float | None = None) -> None:
        """These students' phones have the class's step ``seq`` (one write for a batch: the phone page collects
        them for a second). A later step already marked is kept."""
        code, now = check_code(code), now_or(now)
        ids = [check_student_id(s) for s in student_ids][:1000]
        if not ids or not isinstance(seq, int) or isinstance(seq, bool):
            return
        with self._write() as conn:
            conn.execute(students.update().where(
                (students.c.class_code == code) & students.c.student_id.in_(ids)
                & ((students.c.seen_seq.is_(None)) | (students.c.seen_seq < seq))).values(seen_seq=seq, last_seen=now))

    @retried(write=True)
    def set_joining(self, code: str, secret: str, open_: bool, now: float | None = None) -> None:
        """Open or close joining (a student who joined before still rejoins: a reload, a lost network)."""
        code, now = check_code(code), now_or(now)
        with self._write() as conn:
            self._check_secret(self._class_row(conn, code, now, lock="update"), secret)
            conn.execute(classes.update().where(classes.c.code == code).values(joins_closed=not open_))

    @retried(write=True)
    def end(self, code: str, secret: str, now: float | None = None) -> None:
        """End the class: no more joins, steps or answers (its state still says ``ended``). Ending twice is fine."""
        code, now = check_code(code), now_or(now)
        with self._write() as conn:
            row = self._class_row(conn, code, now, lock="update", allow_ended=True)
            self._check_secret(row, secret)
            conn.execute(classes.update().where(classes.c.code == code).values(ended=True))

    # -- the students --
    def join(self, code: str, student_id: str, nickname: str | None = None, now: float | None = None, *,
             client: str | None = None) -> dict:
        """Join (or rejoin: the answers are kept, the nickname replaced) and return :meth:`state`.

        ``client``: the address the request came from; :class:`TooManyJoins` (before any query) when it joined
        too often (:attr:`join_limit`). None: not limited (a session the app already rate-limits)."""
        if client is not None and not self.join_limit.allow(client):
            raise TooManyJoins("too many joins from this address: wait a minute and try again")
        return self._run(True, lambda: self._join(code, student_id, nickname, now))

    def _join(self, code: str, student_id: str, nickname: str | None, now: float | None) -> dict:
        code, student_id, now = check_code(code), check_student_id(student_id), now_or(now)
        nickname = clean_nickname(nickname)
        with self._write() as conn:
            row = self._class_row(conn, code, now, lock="update")
            key = (students.c.class_code == code) & (students.c.student_id == student_id)
            if conn.execute(sa.select(students.c.student_id).where(key)).first() is not None:
                conn.execute(students.update().where(key).values(nickname=nickname, last_seen=now))
            elif row["joins_closed"]:
                raise JoinsClosed(f"the lecturer of class {code} has closed joining")
            else:
                joined = conn.execute(sa.select(sa.func.count()).select_from(students)
                                      .where(students.c.class_code == code)).scalar_one()
                if joined >= self.max_students:
                    raise ClassFull(f"the class {code} is full ({self.max_students} students)")
                conn.execute(students.insert().values(class_code=code, student_id=student_id, nickname=nickname,
                                                      joined_at=now, last_seen=now))
        return self._state(code, now)

    def answer(self, code: str, student_id: str, question: str, value: Any, now: float | None = None) -> None:
        """Record (or change) this student's answer to the class's current question, until the reveal."""
        code, student_id, now = check_code(code), check_student_id(student_id), now_or(now)
        question = check_question(question)
        text = canonical_json(value, MAX_ANSWER_BYTES, "an answer")
        attempts: list[int] = []
        self._run(True, lambda: self._answer(code, student_id, question, text, now, attempts))

    def _answer(self, code: str, student_id: str, question: str, text: str, now: float, attempts: list[int]) -> None:
        attempts.append(1)
        with self._write() as conn:
            row = self._class_row(conn, code, now, lock="share")
            key = (students.c.class_code == code) & (students.c.student_id == student_id)
            # one statement both checks the student and marks them seen (a refused answer rolls it back)
            if conn.execute(students.update().where(key).values(last_seen=now)).rowcount == 0:
                raise NotJoined(f"this student has not joined the class {code}")
            if len(attempts) > 1 and conn.execute(sa.select(answers.c.value).where(
                    (answers.c.class_code == code) & (answers.c.question == question)
                    & (answers.c.student_id == student_id))).scalar() == text:
                return  # an earlier attempt's commit went through (then its connection failed): a reveal since
                # has not refused what was already taken
            if row["question"] != question:
                raise AnswerClosed(f"the question {question[:40]!r} is not open in the class {code}")
            if self._revealed(conn, code, question):
                raise AnswerClosed(f"the answer to {question[:40]!r} has been revealed: answers are closed")
            stmt = self._insert(answers).values(class_code=code, question=question, student_id=student_id,
                                                value=text, answered_at=now)
            conn.execute(stmt.on_conflict_do_update(
                index_elements=[answers.c.class_code, answers.c.question, answers.c.student_id],
                set_={"value": stmt.excluded.value, "answered_at": stmt.excluded.answered_at}))

    @retried(write=True)
    def purge(self, now: float | None = None) -> int:
        """Delete every expired class with its students and answers; returns how many classes went."""
        now = now_or(now)
        with self._write() as conn:
            gone = sa.select(classes.c.code).where(classes.c.expires_at <= now).scalar_subquery()
            conn.execute(answers.delete().where(answers.c.class_code.in_(gone)))
            conn.execute(reveals.delete().where(reveals.c.class_code.in_(gone)))
            conn.execute(questions.delete().where(questions.c.class_code.in_(gone)))
            conn.execute(students.delete().where(students.c.class_code.in_(gone)))
            return conn.execute(classes.delete().where(classes.c.expires_at <= now)).rowcount

__all__ = ["ClassStore", "clean_nickname", "new_code", "new_student_id"]
