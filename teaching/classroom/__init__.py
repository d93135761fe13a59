"""Class mode's store: classes, students and answers in SQLite (default) or PostgreSQL, behind one interface.

``from teaching.classroom import ClassStore`` and its errors are all a caller needs (see docs/architecture.md, "The class
store"). Plain Python + SQLAlchemy Core: no Streamlit, no text for people beyond the errors' messages.
"""

from teaching.classroom.errors import (
    AnswerClosed,
    BadInput,
    ClassEnded,
    ClassError,
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
from teaching.classroom.database import default_url
from teaching.classroom.inputs import (
    CODE_ALPHABET,
    CODE_LENGTH,
    MAX_ANSWER_BYTES,
    MAX_NICKNAME,
    MAX_QUESTION,
    clean_nickname,
)
from teaching.classroom.limits import JOINS_PER_MINUTE, KeyedLimiter
from teaching.classroom.store import CLASS_TTL_S, MAX_STUDENTS, ClassStore, new_student_id

__all__ = [
    "AnswerClosed", "BadInput", "ClassEnded", "ClassError", "ClassExpired", "ClassFull", "JoinsClosed", "NotJoined",
    "NotLecturer", "StepMoved", "StoreLost", "StoreUnavailable", "TooManyJoins", "UnknownClass", "CLASS_TTL_S",
    "JOINS_PER_MINUTE", "KeyedLimiter", "CODE_ALPHABET", "CODE_LENGTH", "MAX_ANSWER_BYTES", "MAX_NICKNAME",
    "MAX_QUESTION", "MAX_STUDENTS", "ClassStore", "clean_nickname", "default_url", "new_student_id",
]
