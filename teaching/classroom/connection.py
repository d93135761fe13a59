"""The class store's database connection (:class:`Connection`, under :class:`~teaching.classroom.store.ClassStore`):
its engine, its schema (created or migrated on start), its transactions, and every call retried while the database
fails for a while.

* a database that fails for a while (stopped, restarting, a SQLite file locked by another process or read-only)
  does not fail a call: every public method retries it with backoff (0.05 s doubling to 2 s), each attempt its own
  transaction, for up to ``retry_s`` (writes: 30 s, a page's click waits for a restart) or ``read_retry_s``
  (reads: 2 s, the live bar's next refresh reads again) plus the attempt under way (a SQLite busy timeout of 10 s,
  a PostgreSQL connect timeout of 5 s), then raises one :class:`~teaching.classroom.errors.StoreUnavailable` (the
  class is still there: never "you are out of the class");
* connections that failed (a read-only episode, a restarted server) are dropped, not pooled again
  (:func:`~teaching.classroom.database.open_engine`);
* a SQLite file deleted or replaced under a running server is noticed (its device and inode, checked at most once
  a second): the file at its path is opened again (a new file gets the schema) and a class that is not found
  there raises :class:`~teaching.classroom.errors.StoreLost`, which says so.

It knows nothing of classes but their table's name in a lost file's message: what a call does is the caller's.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from teaching.classroom.database import (MIGRATIONS, SCHEMA_VERSION, default_url, is_transient, metadata, open_engine,
                                         schema_version)
from teaching.classroom.errors import StoreLost, StoreUnavailable, UnknownClass

CLASS_TTL_S = 12 * 3600
WRITE_RETRY_S = 30.0  # a click waits this long for a database that is restarting or locked
READ_RETRY_S = 2.0  # a read (the live bar's, a page's run) gives up sooner: the next refresh reads again
FIRST_DELAY_S, MAX_DELAY_S = 0.05, 2.0  # the backoff between attempts: doubling from the first to the most
FILE_CHECK_S = 1.0  # a SQLite file's identity is checked at most this often

log = logging.getLogger(__name__)
T = TypeVar("T")


def now_or(now: float | None) -> float:
    """``now`` (a test's clock), else ``time.time()``."""
    return time.time() if now is None else float(now)


def retried(write: bool) -> Callable:
    """A public method run by :meth:`Connection._run`: retried while the database fails for a while."""
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


class Connection:
    """The database under a class store: its engine, its schema, and calls retried while it fails for a while.

    ``retry_s`` / ``read_retry_s``: how long a write / a read retries a failing database before
    :class:`StoreUnavailable`; ``busy_timeout_ms``: how long one SQLite attempt waits for a lock another connection
    holds; ``ttl_s``: a class's lifetime (a lost file's classes are said lost for as long)."""

    def __init__(self, url: str | None = None, *, ttl_s: float = CLASS_TTL_S, retry_s: float = WRITE_RETRY_S,
                 read_retry_s: float = READ_RETRY_S, busy_timeout_ms: int | None = None):
        self.url = url or default_url()
        self.ttl_s = float(ttl_s)
        self.retry_s, self.read_retry_s = float(retry_s), float(read_retry_s)
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
