"""A throwaway PostgreSQL cluster on loopback for the tests (the class store on PostgreSQL, and the app's servers on
it), started with initdb/pg_ctl (Debian's ``postgresql``; ``bash .ci/run`` installs it). Without PostgreSQL the
tests fail, never skip. As root, the cluster runs as the unprivileged ``postgres`` user (initdb refuses root).
The ``postgres`` fixture (tests/conftest.py) also stops and starts the cluster (a database restarted under a class)."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

PG_USER = "postgres"


def _pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    return found[-1] if found else shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    """The throwaway cluster: its URL, and ``stop()`` / ``start()`` (the same port and data)."""
    url: str
    stop: Callable[[], None]
    start: Callable[[], None]
    port: int = 0

    def database(self, name: str) -> str:
        """A new database on the cluster (its own classes): its URL."""
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url.rsplit("/", 1)[0] + f"/{name}"


@contextlib.contextmanager
def cluster():
    """The cluster, for as long as the ``with`` block: a :class:`Cluster`."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.fail("PostgreSQL is not installed (no initdb/pg_ctl under /usr/lib/postgresql/*/bin or on PATH): "
                    "install Debian's postgresql (bash .ci/run does); the class store must pass on PostgreSQL too",
                    pytrace=False)
    root = Path(tempfile.mkdtemp(prefix="class-pg-"))
    data = root / "data"
    prefix: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        try:
            pw = pwd.getpwnam(PG_USER)
        except KeyError:
            pytest.fail(f"running as root and there is no {PG_USER!r} user to run PostgreSQL as "
                        "(Debian's postgresql package creates it)", pytrace=False)
        os.chown(root, pw.pw_uid, pw.pw_gid)
        prefix = ["runuser", "-u", PG_USER, "--"]
    port = _free_port()

    def run(*args: str) -> None:
        result = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            pytest.fail(f"{' '.join(args[:2])} failed: {result.stdout}{result.stderr}", pytrace=False)

    run(initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--no-locale")
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100"

    def start() -> None:
        run(pg_ctl, "-D", str(data), "-o", opts, "-l", str(root / "log"), "-w", "-t", "30", "start")

    def stop() -> None:
        run(pg_ctl, "-D", str(data), "-m", "fast", "-w", "-t", "30", "stop")

    start()
    try:
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres",
                             autocommit=True) as conn:
            conn.execute("CREATE DATABASE classtest")
        yield Cluster(f"postgresql+psycopg://postgres@127.0.0.1:{port}/classtest", stop, start, port)
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], capture_output=True,
                       timeout=60)
        shutil.rmtree(root, ignore_errors=True)
