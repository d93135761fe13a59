"""The class store's errors: one base class, one subclass per reason, each with a message a person can read.

The UI catches :class:`ClassError` and words it by its type; no raw SQL error reaches a caller for bad input.
"""

from __future__ import annotations


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
