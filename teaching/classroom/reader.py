"""What a class store reads (:class:`Reader`, under :class:`~teaching.classroom.store.ClassStore`): a class's
state, whether a question was revealed, a student's own answer, the counts of a question's answers and the
lecturer's record of the class; no names next to answers. Every query filters by the class code; the lecturer's
reads compare a salted SHA-256 of the secret in constant time (only the hash is stored)."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import sqlalchemy as sa

from teaching.classroom.connection import Connection, now_or, retried
from teaching.classroom.database import answers, classes, questions, reveals, students
from teaching.classroom.errors import ClassEnded, ClassExpired, NotLecturer
from teaching.classroom.inputs import check_code, check_question, check_student_id, distribution_of


def hash_secret(salt: str, secret: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + secret.encode("utf-8")).hexdigest()


class Reader(Connection):
    """The reads of a class store (see :class:`~teaching.classroom.store.ClassStore` for the rules they keep)."""

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
            hash_secret(row["secret_salt"], secret), row["secret_hash"])
        if not ok:
            raise NotLecturer(f"only the lecturer of class {row['code']} may do this")

    def _revealed(self, conn: sa.Connection, code: str, question: str | None) -> bool:
        if question is None:
            return False
        return conn.execute(sa.select(reveals.c.question).where(
            (reveals.c.class_code == code) & (reveals.c.question == question))).first() is not None

    @retried(write=False)
    def roster(self, code: str, secret: str, now: float | None = None) -> list[dict]:
        """The joined students, first joined first: ``[{nickname, joined_at, last_seen}]`` (no student ids).
        Nicknames are plain text: escape them to show them."""
        code, now = check_code(code), now_or(now)
        with self._read() as conn:
            row = self._class_row(conn, code, now, allow_ended=True)
            self._check_secret(row, secret)
            rows = conn.execute(
                sa.select(students.c.nickname, students.c.joined_at, students.c.last_seen)
                .where(students.c.class_code == code).order_by(students.c.joined_at, students.c.student_id))
            return [dict(r) for r in rows.mappings()]

    @retried(write=False)
    def my_answer(self, code: str, student_id: str, question: str, now: float | None = None) -> Any:
        """This student's answer to ``question`` (``None`` if none): what a reloaded page shows again."""
        code, student_id, now = check_code(code), check_student_id(student_id), now_or(now)
        question = check_question(question)
        with self._read() as conn:
            self._class_row(conn, code, now, allow_ended=True)
            text = conn.execute(sa.select(answers.c.value).where(
                (answers.c.class_code == code) & (answers.c.question == question)
                & (answers.c.student_id == student_id))).scalar()
        return None if text is None else json.loads(text)

    # -- everyone --
    @retried(write=False)
    def state(self, code: str, now: float | None = None) -> dict:
        """What a student follows: ``{code, step, step_seq, question, revealed, ended, joins_closed, expires_at}``
        (``revealed``: the current question's answer has been revealed; False without a question)."""
        return self._state(code, now)

    def _state(self, code: str, now: float | None) -> dict:
        code, now = check_code(code), now_or(now)
        with self._read() as conn:
            row = self._class_row(conn, code, now, allow_ended=True)
            revealed = self._revealed(conn, code, row["question"])
        return {"code": code, "step": None if row["step"] is None else json.loads(row["step"]),
                "step_seq": row["step_seq"], "question": row["question"], "revealed": revealed,
                "ended": bool(row["ended"]), "joins_closed": bool(row["joins_closed"]), "expires_at": row["expires_at"]}

    @retried(write=False)
    def is_revealed(self, code: str, question: str, now: float | None = None) -> bool:
        """Whether ``question`` has been revealed in this class (current or not: a reveal is for good)."""
        code, now = check_code(code), now_or(now)
        question = check_question(question)
        with self._read() as conn:
            self._class_row(conn, code, now, allow_ended=True)
            return self._revealed(conn, code, question)

    @retried(write=False)
    def figure(self, code: str, question: str, now: float | None = None) -> str | None:
        """The chart the lecturer's screen drew for a revealed ``question`` (Plotly JSON), or None (not revealed,
        or not drawn yet)."""
        code, now = check_code(code), now_or(now)
        question = check_question(question)
        with self._read() as conn:
            self._class_row(conn, code, now, allow_ended=True)
            return conn.execute(sa.select(reveals.c.figure).where(
                (reveals.c.class_code == code) & (reveals.c.question == question))).scalar()

    @retried(write=False)
    def counts(self, code: str, question: str, now: float | None = None) -> dict:
        """``{joined, on_step, answered, distribution: {value: n}}`` for one question, no names (``on_step``: the
        students whose phone has the class's current step). A value that is a string, number, bool or null is its
        own key; a list or dict is keyed by its canonical JSON text."""
        code, now = check_code(code), now_or(now)
        question = check_question(question)
        with self._read() as conn:
            row = self._class_row(conn, code, now, allow_ended=True)
            joined = self._joined(conn, code)
            on_step = conn.execute(sa.select(sa.func.count()).where(
                (students.c.class_code == code) & (students.c.seen_seq == row["step_seq"]))).scalar_one()
            rows = conn.execute(sa.select(answers.c.value, sa.func.count()).where(
                (answers.c.class_code == code) & (answers.c.question == question)).group_by(answers.c.value)).all()
        distribution = distribution_of(rows)
        return {"joined": joined, "on_step": on_step, "answered": sum(distribution.values()),
                "distribution": distribution}

    @staticmethod
    def _joined(conn: sa.Connection, code: str) -> int:
        return conn.execute(sa.select(sa.func.count()).where(students.c.class_code == code)).scalar_one()

    @retried(write=False)
    def results(self, code: str, secret: str, now: float | None = None) -> dict:
        """The lecturer's record of the class (ended or not, until it expires): ``{joined, questions: [{question,
        step, asked_at, revealed, answered, distribution}]}`` in the order they were asked; no names."""
        code, now = check_code(code), now_or(now)
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
