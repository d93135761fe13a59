"""The class store's backends: a SQLite file, and the throwaway PostgreSQL cluster (``postgres``, tests/conftest.py;
tests/pg_support.py), one database per module."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def postgres_url(postgres):
    return postgres.url


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def db_url(request, tmp_path_factory):
    """One database per backend and test module (classes of different tests never share a code)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('classes') / 'classes.sqlite3'}"
    return request.getfixturevalue("postgres_url")
