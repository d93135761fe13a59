"""The class database: where it is (:func:`default_url`), how it is opened (:func:`open_engine`: SQLite's
connection settings), its tables, and the schema version with the migrations from older versions.

The schema is created on start by :class:`~teaching.classroom.store.ClassStore`; the ``schema_version`` table holds
its version so that a later version can migrate it (:data:`MIGRATIONS`).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from teaching.classroom.inputs import CODE_LENGTH, MAX_NICKNAME, MAX_QUESTION

ENV_URL = "EXPLORER_CLASS_DB"
ENV_DATA_DIR = "EXPLORER_DATA_DIR"
DB_FILE = "classes.sqlite3"
SQLITE_BUSY_TIMEOUT_MS = 10_000  # one attempt's wait for another connection's lock (the store retries after it)
PG_CONNECT_TIMEOUT_S = 5

SCHEMA_VERSION = 4

metadata = sa.MetaData()
schema_version = sa.Table(
    "schema_version", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("version", sa.Integer, nullable=False),
)
classes = sa.Table(
    "classes", metadata,
    sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("secret_salt", sa.String(64), nullable=False),
    sa.Column("secret_hash", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("expires_at", sa.Double, nullable=False),
    sa.Column("step", sa.Text, nullable=True),  # canonical JSON text of the current step (None before the first)
    sa.Column("step_seq", sa.Integer, nullable=False, default=0),  # +1 on every set_step: "the step changed"
    sa.Column("question", sa.String(MAX_QUESTION), nullable=True),  # the current step's question id, if any
    sa.Column("ended", sa.Boolean, nullable=False, default=False),
    sa.Column("joins_closed", sa.Boolean, nullable=False, default=False,  # version 3: the lecturer closed joining
              server_default=sa.false()),
)
reveals = sa.Table(  # schema version 2: a reveal is a question's, for good (version 1 had classes.revealed)
    "reveals", metadata,
    sa.Column("class_code", sa.String(CODE_LENGTH), sa.ForeignKey("classes.code", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("question", sa.String(MAX_QUESTION), primary_key=True),
    sa.Column("revealed_at", sa.Double, nullable=False),
    sa.Column("figure", sa.Text, nullable=True),  # version 4: the step's chart as the lecturer's screen drew it
)
questions = sa.Table(  # schema version 3: every question a class was asked, with the step that asked it
    "questions", metadata,
    sa.Column("class_code", sa.String(CODE_LENGTH), sa.ForeignKey("classes.code", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("question", sa.String(MAX_QUESTION), primary_key=True),
    sa.Column("step", sa.Text, nullable=False),  # canonical JSON text of the step (a poll's prompt and options)
    sa.Column("asked_at", sa.Double, nullable=False),
)
students = sa.Table(
    "students", metadata,
    sa.Column("class_code", sa.String(CODE_LENGTH), sa.ForeignKey("classes.code", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("student_id", sa.String(64), primary_key=True),
    sa.Column("nickname", sa.String(4 * MAX_NICKNAME), nullable=True),
    sa.Column("joined_at", sa.Double, nullable=False),
    sa.Column("last_seen", sa.Double, nullable=False),
    sa.Column("seen_seq", sa.Integer, nullable=True),  # version 4: the class step (step_seq) the phone last got
)
answers = sa.Table(
    "answers", metadata,
    sa.Column("class_code", sa.String(CODE_LENGTH), primary_key=True),
    sa.Column("question", sa.String(MAX_QUESTION), primary_key=True),
    sa.Column("student_id", sa.String(64), primary_key=True),  # primary key = UNIQUE(class, question, student)
    sa.Column("value", sa.Text, nullable=False),  # canonical JSON text (grouped on for the distribution)
    sa.Column("answered_at", sa.Double, nullable=False),
    sa.ForeignKeyConstraint(["class_code", "student_id"], ["students.class_code", "students.student_id"],
                            ondelete="CASCADE"),
)


def _migrate_1(conn: sa.Connection) -> None:
    """Version 1 -> 2: the class's one ``revealed`` flag (cleared by every step, a quick poll's too) becomes a
    row of ``reveals`` for the question it was set on; the column goes (``create_all`` made the table)."""
    conn.execute(sa.text("INSERT INTO reveals (class_code, question, revealed_at) SELECT code, question, created_at "
                         "FROM classes WHERE revealed AND question IS NOT NULL"))
    conn.execute(sa.text("ALTER TABLE classes DROP COLUMN revealed"))


def _migrate_2(conn: sa.Connection) -> None:
    """Version 2 -> 3: ``questions`` (made by ``create_all``) gets each class's open question, the one step the
    version-2 schema kept; classes get ``joins_closed`` (open)."""
    conn.execute(sa.text("ALTER TABLE classes ADD COLUMN joins_closed BOOLEAN NOT NULL DEFAULT FALSE"))
    conn.execute(sa.text("INSERT INTO questions (class_code, question, step, asked_at) SELECT code, question, step, "
                         "created_at FROM classes WHERE question IS NOT NULL AND step IS NOT NULL"))


def _migrate_3(conn: sa.Connection) -> None:
    """Version 3 -> 4: a revealed question keeps the chart the phones draw (``reveals.figure``, none yet; from an
    older version ``create_all`` has just made ``reveals`` with it), and a student the step their phone last got
    (``students.seen_seq``: the lecturer's "phones on this step")."""
    if "figure" not in {c["name"] for c in sa.inspect(conn).get_columns("reveals")}:
        conn.execute(sa.text("ALTER TABLE reveals ADD COLUMN figure TEXT"))
    conn.execute(sa.text("ALTER TABLE students ADD COLUMN seen_seq INTEGER"))


# version n -> a function(connection) that turns a version-n schema into version n + 1
MIGRATIONS: dict[int, Any] = {1: _migrate_1, 2: _migrate_2, 3: _migrate_3}


def default_url() -> str:
    """``$EXPLORER_CLASS_DB``, else a SQLite file ``classes.sqlite3`` in ``$EXPLORER_DATA_DIR`` (default
    ``~/.cache/transformer-explorer``)."""
    if os.environ.get(ENV_URL):
        return os.environ[ENV_URL]
    folder = Path(os.environ.get(ENV_DATA_DIR) or Path.home() / ".cache" / "transformer-explorer")
    return f"sqlite:///{folder / DB_FILE}"


def open_engine(url: str, *, busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS) -> sa.Engine:
    """An engine for ``url``. SQLite: its folder created, a busy timeout, WAL mode, foreign keys, write transactions
    ``BEGIN IMMEDIATE`` (a connection with the ``class_write`` execution option), and a connection that failed as
    read-only or on disk I/O dropped with every other pooled one (:func:`_sqlite_error`); any other database: a
    pre-ping before a pooled connection is used (a restarted server's dead connections are replaced), and
    PostgreSQL a connect timeout."""
    sa_url = sa.make_url(url)
    if sa_url.get_backend_name() != "sqlite":
        args = {}
        if sa_url.get_backend_name() == "postgresql" and "connect_timeout" not in sa_url.query:
            args = {"connect_timeout": PG_CONNECT_TIMEOUT_S}  # an unreachable host: one attempt, not minutes
        return sa.create_engine(sa_url, pool_pre_ping=True, connect_args=args)
    if sa_url.database and sa_url.database != ":memory:":
        Path(sa_url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(sa_url, connect_args={"timeout": busy_timeout_ms / 1000})

    def connect(dbapi_connection, _record) -> None:
        _sqlite_connect(dbapi_connection, busy_timeout_ms)

    sa.event.listen(engine, "connect", connect)
    sa.event.listen(engine, "begin", _sqlite_begin)
    sa.event.listen(engine, "handle_error", _sqlite_error)
    return engine


# ---- which errors are worth a retry ------------------------------------------------------------------------------
# SQLite errors after which a connection is not to be used again: it was opened while the file was read-only (it
# stays read-only), or the file under it went away
SQLITE_POISONED = ("readonly database", "disk i/o error", "unable to open database file")
# errors that are about the statement, not the database's availability: retrying cannot help
NOT_TRANSIENT = ("no such table", "no such column", "syntax error", "has no column")


def is_transient(err: BaseException) -> bool:
    """Whether ``err`` (raised by SQLAlchemy) may go away by itself: the server stopped, restarting or refusing
    connections, a connection dropped, a SQLite file locked by another process or read-only for a while, a
    serialisation failure. Not: a constraint broken, a statement's own fault."""
    if not isinstance(err, sa.exc.DBAPIError):
        return False
    if err.connection_invalidated:
        return True
    if not isinstance(err, (sa.exc.OperationalError, sa.exc.InterfaceError)):
        return False
    return not any(words in str(err.orig).lower() for words in NOT_TRANSIENT)


def _sqlite_error(context) -> None:
    """SQLAlchemy's ``handle_error``: a read-only or I/O failure counts as a disconnect, so the connection (and the
    pool's older ones) is replaced by a fresh one instead of failing again on the next checkout."""
    if any(words in str(context.original_exception).lower() for words in SQLITE_POISONED):
        context.is_disconnect = True


# ---- SQLite connection settings ----------------------------------------------------------------------------------
_wal_lock = threading.Lock()


def _sqlite_connect(dbapi_connection, busy_timeout_ms: int) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy's begin event below emits BEGIN itself
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    with _wal_lock:
        cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def _sqlite_begin(conn: sa.Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("class_write") else "BEGIN")
