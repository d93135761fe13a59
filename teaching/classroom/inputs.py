"""What the class store takes from its callers, and how it checks it: class codes, student ids, question ids,
nicknames and JSON values, with their bounds (the columns of :mod:`teaching.classroom.database` are sized from them).

Bad input raises a :class:`~classroom.errors.ClassError` with a readable message, never an SQL error.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from teaching.classroom.errors import BadInput, UnknownClass

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no O/0, no I/1
CODE_LENGTH = 6
MAX_NICKNAME = 24
MAX_QUESTION = 200
MAX_ANSWER_BYTES = 200
MAX_STEP_BYTES = 4000
STUDENT_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


def canonical_json(value: Any, limit: int, what: str) -> str:
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise BadInput(f"{what} must be a JSON value ({exc})") from None
    if len(text.encode("utf-8")) > limit:
        raise BadInput(f"{what} is too large: at most {limit} bytes of JSON")
    return text


def check_code(code: Any) -> str:
    if not isinstance(code, str):
        raise UnknownClass("a class code is 6 letters and digits")
    code = code.strip().upper()
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        raise UnknownClass(f"no class has the code {code[:12]!r}: a class code is 6 letters and digits")
    return code


def check_student_id(student_id: Any) -> str:
    if not isinstance(student_id, str) or not STUDENT_ID.fullmatch(student_id):
        raise BadInput("a student id is 8 to 64 letters, digits, '-' or '_'")
    return student_id


def check_question(question: Any) -> str:
    if not isinstance(question, str) or not question or len(question) > MAX_QUESTION:
        raise BadInput(f"a question id is a text of 1 to {MAX_QUESTION} characters")
    return question


def clean_nickname(nickname: Any) -> str | None:
    """The nickname as stored: control, format and separator characters removed (bidi overrides, zero-width
    spaces, newlines), white space collapsed, at most 24 characters; ``None`` when nothing is left. HTML is kept
    as text: whoever shows it escapes it."""
    if nickname is None:
        return None
    if not isinstance(nickname, str):
        raise BadInput("a nickname is a text")
    nickname = nickname[: 16 * MAX_NICKNAME]
    kept = "".join(" " if c.isspace() else c for c in nickname if unicodedata.category(c)[0] != "C" or c.isspace())
    kept = " ".join(kept.split())[:MAX_NICKNAME].strip()
    return kept or None


def distribution_of(rows) -> dict:
    """``{value: n}`` from ``(canonical JSON text, n)`` rows: a string, number, bool or null is its own key, a list
    or dict its JSON text."""
    distribution: dict = {}
    for text, n in rows:
        value = json.loads(text)
        key = text if isinstance(value, (list, dict)) else value
        distribution[key] = distribution.get(key, 0) + n
    return distribution
