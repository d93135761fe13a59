"""The class store's errors: one base class, one subclass per reason, each with a message a person can read.

The UI catches :class:`ClassError` and words it by its type; no raw SQL error reaches a caller for bad input.
"""

from __future__ import annotations

import time


class ClassError(Exception):
    """Base of every error the class store raises on purpose."""


class BadInput(ClassError, ValueError):
    """An argument is of the wrong type, too long, or not JSON."""


class UnknownClass(ClassError, LookupError):
    """No class has this code (or the code is not even of the code's form)."""


class ClassExpired(ClassError):
    """The class's code has expired."""


class ClassEnded(ClassError):
    """The lecturer ended the class."""


class ClassFull(ClassError):
    """The class already holds the most students it may."""


class NotLecturer(ClassError, PermissionError):
    """The lecturer secret is missing or wrong."""


class NotJoined(ClassError, PermissionError):
    """This student id has not joined this class."""


class StepMoved(ClassError):
    """The lecturer's move was drawn for a step the class has left (another tab or device moved it since)."""


class AnswerClosed(ClassError):
    """The question is not open: already revealed, or not the class's current question."""


class JoinsClosed(ClassError):
    """The lecturer closed joining: no new student (one who joined before rejoins)."""


class TooManyJoins(ClassError):
    """Too many joins from one client address in a short time (:mod:`teaching.classroom.limits`); refused before
    the database is asked."""


class StoreUnavailable(ClassError):
    """The database did not answer (stopped, restarting, locked by another process, read-only) for as long as the
    store retries a call. Nothing of the call was applied; the same call may be made again. Not a refusal: the
    class, its students and answers are still there when the database is back.

    ``since``: when this store saw the database fail first in the current outage (``time.time()``);
    ``waited_s``: how long this call retried; ``seconds``: how long the outage has lasted so far."""

    def __init__(self, message: str, *, since: float, waited_s: float):
        super().__init__(message)
        self.since, self.waited_s = since, waited_s

    @property
    def seconds(self) -> float:
        return max(0.0, time.time() - self.since)


class StoreLost(UnknownClass):
    """The SQLite file was deleted or replaced while the server ran: the store opened a fresh (or the new) file,
    and the classes of the old file are gone with it. Raised where an unknown class would be, for a class that may
    have been in the old file."""
