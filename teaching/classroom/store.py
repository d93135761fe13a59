"""The class store: classes, their students and answers in a real database through SQLAlchemy Core.

SQLite by default, any SQLAlchemy URL through ``EXPLORER_CLASS_DB`` (PostgreSQL for replicas on several machines).
The tables, the engine, the schema version and its migrations are in :mod:`teaching.classroom.database`, the
checks of what callers pass in :mod:`teaching.classroom.inputs`; the schema is created (or migrated) on start.

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
* a database that fails for a while (stopped, restarting, a SQLite file locked by another process or read-only)
  does not fail a call: every public method retries it with backoff (0.05 s doubling to 2 s), each attempt its own
  transaction, for up to ``retry_s`` (writes: 30 s, a page's click waits for a restart) or ``read_retry_s``
  (reads: 2 s, the live bar's next refresh reads again) plus the attempt under way (a SQLite busy timeout of 10 s,
  a PostgreSQL connect timeout of 5 s), then raises one
  :class:`~teaching.classroom.errors.StoreUnavailable` (the class is still there: never "you are out of the
  class"). A retried write never counts twice: an answer, a join, a reveal, closing joins and the end are
  upserts or assignments (a retried answer already stored is not refused by a reveal made since); a step's move is a compare-and-set that returns the number of a move already made;
  a new class whose insert may have committed is found again by its code and its secret's hash;
* connections that failed (a read-only episode, a restarted server) are dropped, not pooled again
  (:func:`~teaching.classroom.database.open_engine`);
* a SQLite file deleted or replaced under a running server is noticed (its device and inode, checked at most once
  a second): the store opens the file at its path again (a new file gets the schema) and a class that is not
  found there raises :class:`~teaching.classroom.errors.StoreLost`, which says so;
* joins are rate-limited per client address when the caller passes one (``join(..., client=)``: 20 a minute,
  :mod:`teaching.classroom.limits`), refused before any query.

Times are seconds since the epoch (``time.time()``); every method takes ``now=`` so tests can move the clock.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from teaching.classroom.errors import (
    AnswerClosed,
    BadInput,
    ClassEnded,
    ClassExpired,
    ClassFull,
    JoinsClosed,
    NotJoined,
    NotLecturer,
    StepMoved,
    StoreLost,
    StoreUnavailable,
    TooManyJoins,
    UnknownClass,
)
from teaching.classroom.database import (
    MIGRATIONS,
    SCHEMA_VERSION,
    answers,
    classes,
    default_url,
    is_transient,
    metadata,
    open_engine,
    questions,
    reveals,
    schema_version,
    students,
)
from teaching.classroom.inputs import (
    CODE_ALPHABET,
    CODE_LENGTH,
    MAX_ANSWER_BYTES,
    MAX_STEP_BYTES,
    canonical_json,
    distribution_of,
    check_code,
    check_question,
    check_student_id,
    clean_nickname,
)
from teaching.classroom.limits import KeyedLimiter

CLASS_TTL_S = 12 * 3600
MAX_STUDENTS = 300
WRITE_RETRY_S = 30.0  # a click waits this long for a database that is restarting or locked
READ_RETRY_S = 2.0  # a read (the live bar's, a page's run) gives up sooner: the next refresh reads again
FIRST_DELAY_S, MAX_DELAY_S = 0.05, 2.0  # the backoff between attempts: doubling from the first to the most
FILE_CHECK_S = 1.0  # a SQLite file's identity is checked at most this often

log = logging.getLogger(__name__)
T = TypeVar("T")


# ---- codes, ids and secrets --------------------------------------------------------------------------------------
def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_student_id() -> str:
    """A random student id for a browser (22 URL-safe characters)."""
    return secrets.token_urlsafe(16)


def _hash_secret(salt: str, secret: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + secret.encode("utf-8")).hexdigest()


def _now(now: float | None) -> float:
    return time.time() if now is None else float(now)


def _retried(write: bool) -> Callable:
    """A public method run by :meth:`ClassStore._run`: retried while the database fails for a while."""
    def wrap(method):
        @functools.wraps(method)
        def call(self, *args, **kwargs):
            return self._run(write, lambda: method(self, *args, **kwargs))
        return call
    return wrap


def _file_of(url: sa.URL) -> Path | None:
    """A SQLite URL's file (None: another database, memory, a URI)."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:") or url.query.get("uri"):
        return None
    return Path(url.database).expanduser()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


# ---- the store --------------------------------------------------------------------------------------------------
class ClassStore:
    """Every class of this server (or of every replica sharing the database). Thread-safe; one per process.

    ``retry_s`` / ``read_retry_s``: how long a write / a read retries a failing database before
    :class:`StoreUnavailable`; ``busy_timeout_ms``: how long one SQLite attempt waits for a lock another connection
    holds; ``join_limit``: the limiter of ``join(..., client=)`` (default 20 joins a minute per client)."""

    def __init__(self, url: str | None = None, *, ttl_s: float = CLASS_TTL_S, max_students: int = MAX_STUDENTS,
                 retry_s: float = WRITE_RETRY_S, read_retry_s: float = READ_RETRY_S,
                 busy_timeout_ms: int | None = None, join_limit: KeyedLimiter | None = None):
        self.url = url or default_url()
        self.ttl_s = float(ttl_s)
        self.max_students = int(max_students)
        self.retry_s, self.read_retry_s = float(retry_s), float(read_retry_s)
        self.join_limit = KeyedLimiter() if join_limit is None else join_limit
        sa_url = sa.make_url(self.url)
        self._sqlite = sa_url.get_backend_name() == "sqlite"
        self._engine_args = {} if busy_timeout_ms is None else {"busy_timeout_ms": int(busy_timeout_ms)}
        self.engine = open_engine(self.url, **self._engine_args)
        self._insert = sqlite.insert if self._sqlite else postgresql.insert
        self._down_since: float | None = None  # time.time() of the first failure of the current outage
        self._file, self._file_id, self._checked_at = None, None, time.monotonic()
        self._file_lock = threading.Lock()
        self._lost: tuple[float, str] | None = None  # (when, "deleted"/"replaced"): the file went under the server
        self._run(True, self._create_schema)
        self._file = _file_of(sa_url)
        self._file_id = None if self._file is None else _identity(self._file)

    def close(self) -> None:
        self.engine.dispose()

    # -- retries --
    def _run(self, write: bool, attempt: Callable[[], T]) -> T:
        """``attempt()`` (one transaction, or a few that are safe to repeat), again after a transient database
        error (:func:`~teaching.classroom.database.is_transient`) with backoff, for up to ``retry_s`` (a write) or
        ``read_retry_s``; then :class:`StoreUnavailable`. Other errors (a refusal, a constraint) pass at once."""
        deadline = self.retry_s if write else self.read_retry_s
        start, delay = time.monotonic(), FIRST_DELAY_S
        while True:
            try:
                self._check_file()
                result = attempt()
            except sa.exc.DBAPIError as err:
                if not is_transient(err):
                    raise
                since = self._down_since = self._down_since or time.time()
                waited = time.monotonic() - start
                if waited >= deadline:
                    reason = str(err.orig).strip().splitlines()[0][:200] if err.orig else type(err).__name__
                    raise StoreUnavailable(f"the class database is not answering ({reason}); retried for "
                                           f"{waited:.1f} s", since=since, waited_s=waited) from err
                time.sleep(min(delay, deadline - waited))
                delay = min(2 * delay, MAX_DELAY_S)
            else:
                self._down_since = None
                return result

    def _check_file(self) -> None:
        """A SQLite file deleted or replaced since it was opened (its device and inode changed; checked at most
        every :data:`FILE_CHECK_S`): the engine is opened again on the path (a new file gets the schema) and the
        loss remembered, so that a class not found says why (:meth:`_unknown`)."""
        if self._file is None or time.monotonic() - self._checked_at < FILE_CHECK_S:
            return
        with self._file_lock:
            if time.monotonic() - self._checked_at < FILE_CHECK_S:
                return
            self._checked_at = time.monotonic()
            now_id = _identity(self._file)
            if now_id == self._file_id:
                return
            what = "deleted" if now_id is None else "replaced"
            log.warning("the class database file %s was %s while the server ran: opening it again", self._file, what)
            self.engine.dispose()
            for suffix in ("-wal", "-shm", "-journal"):  # the old file's: replayed into the new one, they corrupt it
                Path(f"{self._file}{suffix}").unlink(missing_ok=True)
            self.engine = open_engine(self.url, **self._engine_args)
            self._create_schema()
            self._file_id, self._lost = _identity(self._file), (time.time(), what)

    def _unknown(self, code: str) -> UnknownClass:
        """The error for a class this database does not hold: :class:`StoreLost` when the SQLite file was deleted
        or replaced within a class's lifetime (the class may have been in the old file)."""
        if self._lost is not None and time.time() - self._lost[0] < self.ttl_s:
            when = time.strftime("%H:%M:%S", time.localtime(self._lost[0]))
            return StoreLost(f"no class has the code {code}: the class database file {self._file} was "
                             f"{self._lost[1]} at {when} while the server ran: the classes of the old file are gone")
        return UnknownClass(f"no class has the code {code}")

    # -- schema --
    def _create_schema(self) -> None:
        for attempt in range(3):  # two processes starting at once may race on CREATE TABLE / the version row
            try:
                with self._write() as conn:
                    metadata.create_all(conn)
                    version = conn.execute(sa.select(schema_version.c.version).where(schema_version.c.id == 1))
                    version = version.scalar()
                    if version is None:
                        conn.execute(schema_version.insert().values(id=1, version=SCHEMA_VERSION))
                    elif version > SCHEMA_VERSION:
                        raise RuntimeError(f"the class database {self.url!r} has schema version {version}, newer "
                                           f"than this app's {SCHEMA_VERSION}: update the app")
                    else:
                        while version < SCHEMA_VERSION:
                            MIGRATIONS[version](conn)
                            version += 1
                        conn.execute(schema_version.update().where(schema_version.c.id == 1).values(version=version))
                return
            except (IntegrityError, sa.exc.ProgrammingError):
                if attempt == 2:
                    raise

    # -- transactions --
    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        """A write transaction (SQLite: BEGIN IMMEDIATE, so read-then-write never fails on a stale snapshot)."""
        with self.engine.connect().execution_options(class_write=True) as conn, conn.begin():
            yield conn

    @contextmanager
    def _read(self) -> Iterator[sa.Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    def _class_row(self, conn: sa.Connection, code: str, now: float, *, lock: str | None = None,
                   allow_ended: bool = False):
        query = sa.select(classes).where(classes.c.code == code)
        if lock and not self._sqlite:  # PostgreSQL: serialise on the class row (SQLite: BEGIN IMMEDIATE already)
            query = query.with_for_update(read=lock == "share")
        row = conn.execute(query).mappings().first()
        if row is None:
            raise self._unknown(code)
        if now >= row["expires_at"]:
            raise ClassExpired(f"the class {code} has expired")
        if row["ended"] and not allow_ended:
            raise ClassEnded(f"the class {code} has ended")
        return row

    def _check_secret(self, row, secret: Any) -> None:
        ok = isinstance(secret, str) and secret != "" and hmac.compare_digest(
            _hash_secret(row["secret_salt"], secret), row["secret_hash"])
        if not ok:
            raise NotLecturer(f"only the lecturer of class {row['code']} may do this")

    # -- the lecturer --
    def create_class(self, now: float | None = None) -> tuple[str, str]:
        """A new class: ``(code, lecturer_secret)``. The secret is shown once; only its salted hash is stored."""
        now = _now(now)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_hex(16)
        digest = _hash_secret(salt, secret)
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

    @_retried(write=False)
    def check_lecturer(self, code: str, secret: str, now: float | None = None) -> None:
        """Raise :class:`NotLecturer` unless ``secret`` is this class's (a private lecturer link being opened)."""
        code, now = check_code(code), _now(now)
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
        code, now = check_code(code), _now(now)
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

    @_retried(write=True)
    def reveal(self, code: str, secret: str, question: str | None = None, now: float | None = None) -> None:
        """Close ``question`` (default: the current step's) and show its answer and distribution to everyone, for
        good. A question the class has left since the button was drawn (another tab's Next) is revealed all the
        same, and the class's new question stays open. Revealing twice, or with no question open, is fine."""
        code, now = check_code(code), _now(now)
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

    def _revealed(self, conn: sa.Connection, code: str, question: str | None) -> bool:
        if question is None:
            return False
        return conn.execute(sa.select(reveals.c.question).where(
            (reveals.c.class_code == code) & (reveals.c.question == question))).first() is not None

    @_retried(write=True)
    def set_joining(self, code: str, secret: str, open_: bool, now: float | None = None) -> None:
        """Open or close joining (a student who joined before still rejoins: a reload, a lost network)."""
        code, now = check_code(code), _now(now)
        with self._write() as conn:
            self._check_secret(self._class_row(conn, code, now, lock="update"), secret)
            conn.execute(classes.update().where(classes.c.code == code).values(joins_closed=not open_))

    @_retried(write=True)
    def end(self, code: str, secret: str, now: float | None = None) -> None:
        """End the class: no more joins, steps or answers (its state still says ``ended``). Ending twice is fine."""
        code, now = check_code(code), _now(now)
        with self._write() as conn:
            row = self._class_row(conn, code, now, lock="update", allow_ended=True)
            self._check_secret(row, secret)
            conn.execute(classes.update().where(classes.c.code == code).values(ended=True))

    @_retried(write=False)
    def roster(self, code: str, secret: str, now: float | None = None) -> list[dict]:
        """The joined students, first joined first: ``[{nickname, joined_at, last_seen}]`` (no student ids).
        Nicknames are plain text: escape them to show them."""
        code, now = check_code(code), _now(now)
        with self._read() as conn:
            row = self._class_row(conn, code, now, allow_ended=True)
            self._check_secret(row, secret)
            rows = conn.execute(
                sa.select(students.c.nickname, students.c.joined_at, students.c.last_seen)
                .where(students.c.class_code == code).order_by(students.c.joined_at, students.c.student_id))
            return [dict(r) for r in rows.mappings()]

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
        code, student_id, now = check_code(code), check_student_id(student_id), _now(now)
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
        code, student_id, now = check_code(code), check_student_id(student_id), _now(now)
        question = check_question(question)
        text = canonical_json(value, MAX_ANSWER_BYTES, "an answer")
        attempts: list[int] = []
        self._run(True, lambda: self._answer(code, student_id, question, text, now, attempts))

    def _answer(self, code: str, student_id: str, question: str, text: str, now: float, attempts: list[int]) -> None:
        attempts.append(1)
        with self._write() as conn:
            row = self._class_row(conn, code, now, lock="share")
            key = (students.c.class_code == code) & (students.c.student_id == student_id)
            if conn.execute(sa.select(students.c.student_id).where(key)).first() is None:
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
            conn.execute(students.update().where(key).values(last_seen=now))

    @_retried(write=False)
    def my_answer(self, code: str, student_id: str, question: str, now: float | None = None) -> Any:
        """This student's answer to ``question`` (``None`` if none): what a reloaded page shows again."""
        code, student_id, now = check_code(code), check_student_id(student_id), _now(now)
        question = check_question(question)
        with self._read() as conn:
            self._class_row(conn, code, now, allow_ended=True)
            text = conn.execute(sa.select(answers.c.value).where(
                (answers.c.class_code == code) & (answers.c.question == question)
                & (answers.c.student_id == student_id))).scalar()
        return None if text is None else json.loads(text)

    # -- everyone --
    @_retried(write=False)
    def state(self, code: str, now: float | None = None) -> dict:
        """What a student follows: ``{code, step, step_seq, question, revealed, ended, joins_closed, expires_at}``
        (``revealed``: the current question's answer has been revealed; False without a question)."""
        return self._state(code, now)

    def _state(self, code: str, now: float | None) -> dict:
        code, now = check_code(code), _now(now)
        with self._read() as conn:
            row = self._class_row(conn, code, now, allow_ended=True)
            revealed = self._revealed(conn, code, row["question"])
        return {"code": code, "step": None if row["step"] is None else json.loads(row["step"]),
                "step_seq": row["step_seq"], "question": row["question"], "revealed": revealed,
                "ended": bool(row["ended"]), "joins_closed": bool(row["joins_closed"]), "expires_at": row["expires_at"]}

    @_retried(write=False)
    def is_revealed(self, code: str, question: str, now: float | None = None) -> bool:
        """Whether ``question`` has been revealed in this class (current or not: a reveal is for good)."""
        code, now = check_code(code), _now(now)
        question = check_question(question)
        with self._read() as conn:
            self._class_row(conn, code, now, allow_ended=True)
            return self._revealed(conn, code, question)

    @_retried(write=False)
    def counts(self, code: str, question: str, now: float | None = None) -> dict:
        """``{joined, answered, distribution: {value: n}}`` for one question, no names. A value that is a string,
        number, bool or null is its own key; a list or dict is keyed by its canonical JSON text."""
        code, now = check_code(code), _now(now)
        question = check_question(question)
        with self._read() as conn:
            self._class_row(conn, code, now, allow_ended=True)
            joined = self._joined(conn, code)
            rows = conn.execute(sa.select(answers.c.value, sa.func.count()).where(
                (answers.c.class_code == code) & (answers.c.question == question)).group_by(answers.c.value)).all()
        distribution = distribution_of(rows)
        return {"joined": joined, "answered": sum(distribution.values()), "distribution": distribution}

    @staticmethod
    def _joined(conn: sa.Connection, code: str) -> int:
        return conn.execute(sa.select(sa.func.count()).where(students.c.class_code == code)).scalar_one()

    @_retried(write=False)
    def results(self, code: str, secret: str, now: float | None = None) -> dict:
        """The lecturer's record of the class (ended or not, until it expires): ``{joined, questions: [{question,
        step, asked_at, revealed, answered, distribution}]}`` in the order they were asked; no names."""
        code, now = check_code(code), _now(now)
        with self._read() as conn:
            self._check_secret(self._class_row(conn, code, now, allow_ended=True), secret)
            joined = self._joined(conn, code)
            asked = conn.execute(sa.select(questions).where(questions.c.class_code == code)
                                 .order_by(questions.c.asked_at, questions.c.question)).mappings().all()
            shown = set(conn.execute(sa.select(reveals.c.question).where(reveals.c.class_code == code)).scalars())
            rows = conn.execute(sa.select(answers.c.question, answers.c.value, sa.func.count())
                                .where(answers.c.class_code == code)
                                .group_by(answers.c.question, answers.c.value)).all()
        out = []
        for q in asked:
            distribution = distribution_of([(value, n) for question, value, n in rows if question == q["question"]])
            out.append({"question": q["question"], "step": json.loads(q["step"]), "asked_at": q["asked_at"],
                        "revealed": q["question"] in shown, "answered": sum(distribution.values()),
                        "distribution": distribution})
        return {"joined": joined, "questions": out}

    @_retried(write=True)
    def purge(self, now: float | None = None) -> int:
        """Delete every expired class with its students and answers; returns how many classes went."""
        now = _now(now)
        with self._write() as conn:
            gone = sa.select(classes.c.code).where(classes.c.expires_at <= now).scalar_subquery()
            conn.execute(answers.delete().where(answers.c.class_code.in_(gone)))
            conn.execute(reveals.delete().where(reveals.c.class_code.in_(gone)))
            conn.execute(questions.delete().where(questions.c.class_code.in_(gone)))
            conn.execute(students.delete().where(students.c.class_code.in_(gone)))
            return conn.execute(classes.delete().where(classes.c.expires_at <= now)).rowcount

__all__ = ["ClassStore", "clean_nickname", "default_url", "new_code", "new_student_id"]
