"""How many phones one 2-core server holds: the light phone page (``/join``, ui/teaching/phone/) under load.

A real ``streamlit run app.py`` on loopback (``EXPLORER_CLASS_DB`` = a fresh SQLite file), simulated phones that
speak the phone page's own protocol over HTTP/1.1 (join with ``X-Forwarded-For`` so each phone is its own address
for the join limit, then the ``/state`` long poll with ``If-None-Match`` and ``wait=25``, answers by ``POST``), and
``--browsers`` real phone pages (Chromium, 390x844, ``/join/<CODE>``) among them. The lecturer drives the class
through the class store on the same database (``ClassStore(url)``: ``set_step``, ``reveal``, ``counts``), as the
lecturer's session does. The simulated phones are one asyncio loop with plain non-blocking sockets (no new
dependency); the bench machine is the server machine, so their CPU is reported too.

Per class size (``--phones``; a class holds at most ``MAX_STUDENTS`` = 300 phones, so larger sizes are several
classes of 300 on the one server, driven at the same moments):

* the idle app (no phone): server CPU, RSS (after one warm-up phone has seen every step used, as the lecturer's
  session would have computed the steps' answer keys);
* joins: POST join, p50/p95;
* idle following: every phone holds a long poll: server CPU (fraction of one core) and RSS over the idle app;
* Next (``set_step``) -> the step on every phone (the poll's 200 with the new ``step_seq``), ``--nexts`` times;
* answers: every phone answers once at a random moment of ``--answer-window-s``: POST -> 200, and the answer ->
  visible in ``store.counts`` (read every 0.1 s by a lecturer thread on its own connection); the lecturer's bar
  (a fragment every ``LECTURER_EVERY_S``) is modelled by sampling those readings once a second at a random phase;
  server CPU per answer = (server CPU over the burst - the idle-following rate x its duration) / answers;
* Reveal -> the reveal on every phone.

``--nginx``: the same through deploy/nginx.conf with two replicas and a throwaway PostgreSQL (phones keep only the
app's student cookie, not nginx's routing cookies, so each request lands on either replica).

Run: ``python bench/bench_phones.py --phones 300 600 1000 --browsers 5``; writes bench/results/bench_phones.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import common  # noqa: F401  (run as a script: puts the project root on sys.path)
except ModuleNotFoundError:  # imported by tests/bench/, where the root is already on sys.path
    pass

from bench.bench_classroom import LagProbe, Postgres, class_mode_constants, count_latencies, pct  # noqa: E402
from bench.loadsim import ROOT, Server, free_port  # noqa: E402

LESSON = "numpy_decoder"
STEPS = [1, 2, 3, 4, 1, 2, 3, 4]  # choice questions on the Attention page; Next walks through them
PHONE_VIEWPORT = {"width": 390, "height": 844}
CLASS_CAP = 300  # teaching/classroom/store.py MAX_STUDENTS
JOIN_CONCURRENCY = 40
POLL_PAUSE_S = 0.25  # phone.js POLL_MS: the pause after a poll's answer before the next poll
WAIT_S = 25  # phone.js WAIT_S


def step_of(n: int) -> dict:
    return {"kind": "lesson", "lesson": LESSON, "step": n, "page": "attention", "question": f"{LESSON}:{n}"}


# ---- a minimal HTTP/1.1 client on asyncio streams -----------------------------------------------------------------
class Conn:
    """One keep-alive HTTP/1.1 connection (reopened when the server closed it)."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def request(self, method: str, path: str, headers: dict, body: bytes = b"",
                      timeout: float = 60) -> tuple[int, dict, bytes]:
        for attempt in (0, 1):
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            head = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}", *(f"{k}: {v}" for k, v in headers.items())]
            if body or method == "POST":
                head.append(f"Content-Length: {len(body)}")
            try:
                self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
                return await asyncio.wait_for(self._response(), timeout)
            except (ConnectionError, asyncio.IncompleteReadError, OSError):
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def _response(self) -> tuple[int, dict, bytes]:
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers: dict[str, str] = {}
        cookies = []
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                k = k.strip().lower()
                if k == "set-cookie":
                    cookies.append(v.strip())
                headers[k] = v.strip()
        headers["set-cookie-all"] = cookies  # type: ignore[assignment]
        if status in (204, 304) or 100 <= status < 200:
            body = b""
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                body += chunk[:-2]
        elif "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        else:
            body = await self.reader.read()
            self.close()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


@dataclass
class Phone:
    """A simulated phone: what phone.js does, over two connections (the long poll's, and one for answers)."""

    i: int
    host: str
    port: int
    code: str
    cookie: str = ""
    etag: str | None = None
    seen: dict = field(default_factory=dict)  # (step_seq, revealed) -> time.monotonic() of the first view showing it
    question: str | None = None
    options: int = 1  # the open question's number of options
    errors: list = field(default_factory=list)
    polls: int = 0

    def __post_init__(self):
        self.addr = f"10.{(self.i >> 16) & 255}.{(self.i >> 8) & 255}.{self.i & 255}"
        self.poll_conn = Conn(self.host, self.port)
        self.post_conn = Conn(self.host, self.port)

    def _headers(self, extra: dict | None = None) -> dict:
        h = {"X-Forwarded-For": self.addr, "Accept": "application/json"}
        if self.cookie:
            h["Cookie"] = f"explorer_student={self.cookie}"
        return {**h, **(extra or {})}

    async def join(self) -> float:
        t0 = time.monotonic()
        st, headers, body = await self.post_conn.request(
            "POST", f"/join/api/{self.code}/join?lang=en", self._headers({"Content-Type": "application/json"}), b"{}")
        if st != 200:
            raise RuntimeError(f"join {st}: {body[:200]!r}")
        for c in headers["set-cookie-all"]:
            m = re.match(r"explorer_student=([^;]+)", c)
            if m:
                self.cookie = m.group(1)
        return time.monotonic() - t0

    async def follow(self, stop: asyncio.Event) -> None:
        backoff = POLL_PAUSE_S
        while not stop.is_set():
            q = "" if self.etag is None else f"&wait={WAIT_S}"
            extra = {} if self.etag is None else {"If-None-Match": self.etag}
            try:
                st, headers, body = await self.poll_conn.request("GET", f"/join/api/{self.code}/state?lang=en{q}",
                                                                 self._headers(extra), timeout=WAIT_S + 35)
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError) as err:
                self.errors.append(f"poll {type(err).__name__}")
                self.poll_conn.close()
                await asyncio.sleep(min(backoff := min(max(backoff, 1.0) * 2, 5.0), 5.0))
                continue
            now = time.monotonic()
            self.polls += 1
            if st == 200:
                view = json.loads(body)
                self.etag = headers.get("etag")
                self.seen.setdefault((view["step_seq"], bool(view["revealed"])), now)
                self.question = (view.get("question") or {}).get("id")
                self.options = len((view.get("question") or {}).get("options") or [None])
                backoff = POLL_PAUSE_S
            elif st == 304:
                backoff = POLL_PAUSE_S
            else:
                self.errors.append(f"poll {st}")
                backoff = min(max(backoff, 1.0) * 2, 5.0)
            await asyncio.sleep(backoff)

    async def answer(self, question: str, value: int) -> tuple[float, float, int]:
        """POST the answer (retrying a 503 after 2 s, as phone.js); returns (sent at, returned at, status)."""
        t0 = time.monotonic()
        body = json.dumps({"question": question, "value": value}).encode()
        for _ in range(5):
            try:
                st, _, raw = await self.post_conn.request("POST", f"/join/api/{self.code}/answer?lang=en",
                                                          self._headers({"Content-Type": "application/json"}), body)
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as err:
                self.errors.append(f"answer {type(err).__name__}")
                st = 0
            if st not in (0, 503, 429):
                break
            await asyncio.sleep(2.0)
        if st != 200:
            self.errors.append(f"answer {st}")
        return t0, time.monotonic(), st


async def _get_once(host: str, port: int, path: str, headers: dict) -> int:
    conn = Conn(host, port)
    try:
        return (await conn.request("GET", path, headers))[0]
    finally:
        conn.close()


# ---- CPU and memory of processes (from /proc) -------------------------------------------------------------------------
def cpu_of(pids: list[int]) -> float:
    """User + system CPU seconds of these processes (threads included, children not)."""
    total, tick = 0, os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / tick


def rss_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0


def children_of(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids = [int(c) for c in f.read().split()]
                    out += kids
                    todo += kids
        except OSError:
            pass
    return out


class Meter:
    """CPU seconds of the server side (given pids), of the bench process, of the browsers, and the wall time."""

    def __init__(self, server_pids, browser_root: int | None = None, exclude=()):
        self.server_pids, self.browser_root, self.exclude = list(server_pids), browser_root, set(exclude)

    def _browsers(self) -> float:
        if self.browser_root is None:
            return 0.0
        return cpu_of([p for p in children_of(self.browser_root) if p not in self.exclude])

    def start(self) -> "Meter":
        self.t0, self.s0, self.c0, self.b0 = time.monotonic(), cpu_of(self.server_pids), time.process_time(), self._browsers()
        self.load0 = os.getloadavg()[0]
        return self

    def stop(self) -> dict:
        wall = time.monotonic() - self.t0
        return {"wall": wall, "server": cpu_of(self.server_pids) - self.s0, "client": time.process_time() - self.c0,
                "browsers": max(0.0, self._browsers() - self.b0), "load": (self.load0, os.getloadavg()[0])}


# ---- the server(s) ----------------------------------------------------------------------------------------------------
class Single:
    """One ``streamlit run app.py`` with its class database in a fresh SQLite file."""

    name = "one process, SQLite"

    def __init__(self, tmp: Path):
        self.url = f"sqlite:///{tmp / 'class.db'}"
        self.server = Server(env={"EXPLORER_CLASS_DB": self.url, "OMP_NUM_THREADS": "1"})
        self.port = self.server.port
        self.pids = [self.server.proc.pid]
        self.log: list[str] = []  # the server's output, drained (a full pipe would stall the server)
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        for line in self.server.proc.stdout:
            self.log = (self.log + [line.decode(errors="replace").rstrip()])[-200:]

    def rss(self) -> int:
        return sum(rss_of(p) for p in self.pids)

    def close(self) -> None:
        self.server.close()
        errors = [line for line in self.log if "Error" in line or "Traceback" in line]
        print(f"--- server log: {len(self.log)} lines kept, {len(errors)} with an error", *errors[-10:], sep="\n",
              flush=True)


PROFILED = r"""
import cProfile, pstats, signal, sys, threading, time
OUT = sys.argv.pop(1)
profs = []
def _start(*_):
    p = cProfile.Profile(time.thread_time); profs.append(p); p.enable()  # CPU time of this thread; replaces the hook
threading.setprofile(_start)
_start()
def _dump(*_):
    stats = None
    for p in list(profs):
        try:
            p.snapshot_stats()
        except Exception:
            continue
        if p.stats:
            stats = pstats.Stats(p) if stats is None else stats.add(p)
    stats.dump_stats(OUT)
signal.signal(signal.SIGUSR1, _dump)
sys.argv = ["streamlit", *sys.argv[1:]]
from streamlit.web.cli import main
main()
"""


class Profiled(Single):
    """:class:`Single`, with every thread of the server under cProfile, timed by each thread's CPU time
    (``--profile``: where its CPU goes, not its waits); the profile is written on SIGUSR1 to ``self.prof``."""

    name = "one process, SQLite, under cProfile"

    def __init__(self, tmp: Path):
        import urllib.request

        self.url = f"sqlite:///{tmp / 'class.db'}"
        self.prof = tmp / "server.prof"
        self.port = free_port()
        env = dict(os.environ, HF_HUB_OFFLINE="1", EXPLORER_CLASS_DB=self.url, OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", PROFILED, str(self.prof), "run", "app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(self.port), "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.time() + 180
        while True:
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                if time.time() > deadline:
                    self.close()
                    raise RuntimeError("the profiled server did not become healthy")
                time.sleep(0.5)
        self.pids = [self.proc.pid]

    def dump(self, top: int = 40) -> str:
        """The server's profile so far: the top functions by own time and by cumulative time."""
        import io
        import pstats
        import signal

        self.proc.send_signal(signal.SIGUSR1)
        for _ in range(100):
            if self.prof.exists() and self.prof.stat().st_size > 0:
                break
            time.sleep(0.2)
        time.sleep(1.0)
        out = io.StringIO()
        stats = pstats.Stats(str(self.prof), stream=out)
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)
        return out.getvalue()

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


class Proxied:
    """deploy/nginx.conf in front of two replicas sharing a throwaway PostgreSQL (as tests/browser/test_nginx.py)."""

    name = "nginx + 2 replicas, PostgreSQL"

    def __init__(self, tmp: Path):
        self.pg = Postgres()
        if self.pg.url is None:
            raise RuntimeError(f"PostgreSQL: {self.pg.why}")
        self.url = self.pg.url
        conf = (ROOT / "deploy" / "nginx.conf").read_text()
        ports = [free_port(), free_port()]
        for default, port in zip((8501, 8502), ports):
            conf = re.sub(rf":{default}\b", f":{port}", conf)
        self.port = free_port()
        conf = re.sub(r"listen \d+;", f"listen 127.0.0.1:{self.port};", conf)
        conf = conf.replace("access_log", "access_log off; #", 1) if "access_log" in conf else conf
        prefix = tmp / "nginx"
        (prefix / "logs").mkdir(parents=True)
        (prefix / "nginx.conf").write_text(conf)
        self.replicas, self.logs = [], []
        for p in ports:
            self.logs.append(open(tmp / f"replica-{p}.log", "wb"))
            env = dict(os.environ, HF_HUB_OFFLINE="1", EXPLORER_CLASS_DB=self.url, OMP_NUM_THREADS="1")
            self.replicas.append(subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
                 "127.0.0.1", "--server.port", str(p), "--browser.gatherUsageStats", "false"],
                cwd=ROOT, env=env, stdout=self.logs[-1], stderr=subprocess.STDOUT))
        self.nginx = subprocess.Popen([NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        import urllib.request

        for p in [*ports, self.port]:
            deadline = time.time() + 120
            while True:
                try:
                    if urllib.request.urlopen(f"http://127.0.0.1:{p}/_stcore/health", timeout=2).read() == b"ok":
                        break
                except OSError:
                    if time.time() > deadline:
                        self.close()
                        raise RuntimeError(f"port {p} did not become healthy")
                    time.sleep(0.5)
        time.sleep(0.5)
        self.pids = [r.pid for r in self.replicas] + [self.nginx.pid] + children_of(self.nginx.pid)

    def server_pids(self) -> list[int]:
        """Replicas, nginx and its workers, PostgreSQL and its backends (backends come and go: read at each use)."""
        return self.pids + ([self.pg.pid] + children_of(self.pg.pid) if self.pg.pid else [])

    def rss(self) -> int:
        return sum(rss_of(r.pid) for r in self.replicas)

    def close(self) -> None:
        for proc in [self.nginx, *self.replicas]:
            proc.terminate()
        for proc in [self.nginx, *self.replicas]:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.pg.close()
        for log in self.logs:  # the replicas' logs: the last lines of each (errors under load) go to the bench's log
            log.close()
            tail = Path(log.name).read_text(errors="replace").splitlines()[-15:]
            print(f"--- {Path(log.name).name}:", *tail, sep="\n", flush=True)


# ---- real phone browsers --------------------------------------------------------------------------------------------
OBSERVE_JS = """() => {
  window.__seen = {};
  const note = () => { const t = document.querySelector('#progress').textContent;
                       const r = document.querySelector('#reveal').textContent.length > 0;
                       const k = t + '|' + r; if (!(k in window.__seen)) window.__seen[k] = Date.now() / 1000; };
  new MutationObserver(note).observe(document.querySelector('#class'), {subtree: true, childList: true, characterData: true});
  note();
}"""


class Browsers:
    """``n`` phone pages in one Chromium (one context each, 390x844), on the asyncio loop (playwright's async API)."""

    def __init__(self, n: int):
        self.n, self.pages, self.pw, self.browser = n, [], None, None

    async def open(self, url: str, code: str) -> list[float]:
        from playwright.async_api import async_playwright

        from tests.browser_support import ARGS, CHROMIUM

        self.pw = await async_playwright().start()
        self.browser = await self.pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        took = []
        for _ in range(self.n):
            ctx = await self.browser.new_context(viewport=PHONE_VIEWPORT, is_mobile=True, has_touch=True)
            page = await ctx.new_page()
            page.set_default_timeout(120_000)
            t0 = time.monotonic()
            await page.goto(f"{url}/join/{code}?lang=en", wait_until="domcontentloaded")
            await page.wait_for_selector("#options button")
            took.append(time.monotonic() - t0)
            await page.evaluate(OBSERVE_JS)
            self.pages.append(page)
        return took

    async def seen(self) -> list[dict]:
        return [await p.evaluate("() => window.__seen") for p in self.pages]

    async def click(self, page, value: int) -> float:
        """Click option ``value``; returns time.monotonic() when phone.js says it was sent."""
        await page.locator("#options button").nth(value).click(timeout=20_000)
        await page.wait_for_function("document.querySelector('#status').innerText.includes('Sent')", timeout=20_000)
        return time.monotonic()

    async def close(self) -> None:
        if self.browser is not None:
            await self.browser.close()
        if self.pw is not None:
            await self.pw.stop()


# ---- one class size ------------------------------------------------------------------------------------------------
def _cores(phase: dict, key: str = "server") -> float:
    return phase[key] / phase["wall"] if phase["wall"] > 0 else float("nan")


async def run_size(setup, n: int, args, rng: random.Random, lag: LagProbe) -> dict:
    """Everything measured for ``n`` phones (``args.browsers`` of them real) on ``setup`` (a started server)."""
    from teaching.classroom import ClassStore

    out: dict = {"phones": n, "browsers": min(args.browsers, n)}
    lecturer = ClassStore(setup.url, retry_s=30)
    counter = ClassStore(setup.url, retry_s=30)  # the lecturer's bar's reads, on their own connection
    server_pids = setup.server_pids if hasattr(setup, "server_pids") else (lambda: setup.pids)
    host, port = "127.0.0.1", setup.port

    # -- warm-up: one phone sees every step used (the steps' answer keys, as the lecturer's session would compute them)
    code, secret = lecturer.create_class()
    warm = Phone(0xFFFFFF, host, port, code)
    await warm.join()
    seq = None
    t_warm = time.monotonic()
    for s in sorted(set(STEPS)):
        seq = lecturer.set_step(code, secret, step_of(s), expect_seq=seq)
        for _ in range(8 if hasattr(setup, "replicas") else 1):  # each replica computes its own keys (either one)
            for _ in range(60):
                st = await _get_once(host, port, f"/join/api/{code}/state?lang=en", warm._headers())
                if st == 200:
                    break
                await asyncio.sleep(1)
    lecturer.reveal(code, secret, step_of(STEPS[-1])["question"])
    for _ in range(8 if hasattr(setup, "replicas") else 1):
        await _get_once(host, port, f"/join/api/{code}/state?lang=en", warm._headers())
    out["warm_s"] = time.monotonic() - t_warm
    lecturer.end(code, secret)
    await asyncio.sleep(2)

    # -- the idle app
    out["rss_idle"] = setup.rss()
    m = Meter(server_pids()).start()
    await asyncio.sleep(args.idle_s)
    out["idle_app"] = m.stop()

    # -- classes, joins
    classes = []
    for k in range((n + CLASS_CAP - 1) // CLASS_CAP):
        c, s = lecturer.create_class()
        classes.append({"code": c, "secret": s, "seq": lecturer.set_step(c, s, step_of(STEPS[0])), "step": 0})
    n_sim = n - out["browsers"]
    sizes = [n // len(classes) + (k < n % len(classes)) for k in range(len(classes))]  # even classes, each <= cap
    sizes[0] -= out["browsers"]  # the browsers join the first class
    codes = [c["code"] for c, size in zip(classes, sizes) for _ in range(size)]
    phones = [Phone(i, host, port, codes[i]) for i in range(n_sim)]
    sem = asyncio.Semaphore(JOIN_CONCURRENCY)

    async def join(p: Phone) -> float:
        async with sem:
            return await p.join()

    m = Meter(server_pids()).start()
    joins = await asyncio.gather(*(join(p) for p in phones), return_exceptions=True)
    out["joins"] = m.stop()
    out["join_s"] = [j for j in joins if isinstance(j, float)]
    out["join_errors"] = [repr(j)[:120] for j in joins if not isinstance(j, float)][:3]
    stop = asyncio.Event()
    followers = [asyncio.ensure_future(p.follow(stop)) for p in phones]
    browsers = Browsers(out["browsers"]) if out["browsers"] else None
    browser_root = None
    if browsers:
        out["browser_open_s"] = await browsers.open(f"http://{host}:{port}", classes[0]["code"])
        browser_root = os.getpid()
    exclude = set(server_pids()) | set(children_of(setup.pids[0]))
    meter = lambda: Meter(server_pids(), browser_root, exclude)  # noqa: E731

    # -- idle following: every phone holds a long poll (wait for all to have their first view)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not all(p.etag for p in phones):
        await asyncio.sleep(0.5)
    await asyncio.sleep(3)
    polls0 = sum(p.polls for p in phones)
    m = meter().start()
    t_lag = time.perf_counter()
    await asyncio.sleep(args.idle_s)
    out["idle_follow"] = m.stop()
    out["idle_follow"]["lag"] = lag.p95_ms(t_lag, time.perf_counter())
    out["idle_polls_per_s"] = (sum(p.polls for p in phones) - polls0) / out["idle_follow"]["wall"]
    out["rss_follow"] = setup.rss()

    # -- Next, --nexts times
    out["next_s"], out["next_browser_s"], out["next_missing"], out["next_phase"] = [], [], 0, []
    for r in range(args.nexts):
        await asyncio.sleep(2.0)
        m = meter().start()
        t_wall, t0 = time.time(), time.monotonic()
        for c in classes:
            c["step"] += 1
            c["seq"] = lecturer.set_step(c["code"], c["secret"], step_of(STEPS[c["step"]]), expect_seq=c["seq"])
        target = {c["code"]: c["seq"] for c in classes}
        deadline = t0 + 30
        while time.monotonic() < deadline and not all((target[p.code], False) in p.seen for p in phones):
            await asyncio.sleep(0.05)
        got = [p.seen[(target[p.code], False)] - t0 for p in phones if (target[p.code], False) in p.seen]
        out["next_s"] += got
        out["next_missing"] += len(phones) - len(got)
        if browsers:
            want = f"step {STEPS[classes[0]['step']]} of"
            for _ in range(300):
                seen = await browsers.seen()
                hits = [min((t for k, t in s.items() if want in k), default=None) for s in seen]
                if all(h is not None for h in hits):
                    break
                await asyncio.sleep(0.1)
            out["next_browser_s"] += [h - t_wall for h in hits if h is not None]
        out["next_phase"].append(m.stop())

    # -- answers: every phone answers once at a random moment of the window
    await asyncio.sleep(2.0)
    question = {c["code"]: step_of(STEPS[c["step"]])["question"] for c in classes}
    readings: dict[str, list] = {c["code"]: [] for c in classes}
    halt = threading.Event()

    def poll_counts() -> None:
        while not halt.is_set():
            for c in classes:
                try:
                    readings[c["code"]].append((time.monotonic(), counter.counts(c["code"], question[c["code"]])["answered"]))
                except Exception:  # noqa: BLE001
                    pass
            halt.wait(0.1)

    reader = threading.Thread(target=poll_counts, daemon=True)
    reader.start()
    await asyncio.sleep(1.0)

    async def one(p: Phone) -> tuple:
        await asyncio.sleep(rng.uniform(0, args.answer_window_s))
        return (p.code, *await p.answer(question[p.code], rng.randrange(p.options)))

    async def one_browser(page) -> tuple:
        await asyncio.sleep(rng.uniform(0, args.answer_window_s))
        t0 = time.monotonic()
        n_options = await page.locator("#options button").count()
        return classes[0]["code"], t0, await browsers.click(page, rng.randrange(max(1, n_options))), 200

    m = meter().start()
    t_lag = time.perf_counter()
    tasks = [one(p) for p in phones] + ([one_browser(pg) for pg in browsers.pages] if browsers else [])
    done = await asyncio.gather(*tasks, return_exceptions=True)
    out["answer_phase"] = m.stop()
    out["answer_phase"]["lag"] = lag.p95_ms(t_lag, time.perf_counter())
    await asyncio.sleep(2.0)
    halt.set()
    reader.join()
    ok = [d for d in done if isinstance(d, tuple) and d[3] == 200]
    out["answers"] = len(ok)
    out["answer_errors"] = [repr(d)[:120] for d in done if not (isinstance(d, tuple) and d[3] == 200)][:3]
    out["answer_call_s"] = [d[2] - d[1] for d in ok]
    lat, bar, sent = [], [], []
    for c in classes:
        mine = [d[2] for d in ok if d[0] == c["code"]]
        rs = readings[c["code"]]
        lat += count_latencies(mine, rs)
        sent += count_latencies([d[1] for d in ok if d[0] == c["code"]], rs)  # from the tap (the POST sent)
        # the lecturer's bar: a reading once a LECTURER_EVERY_S at a random phase (the fragment's timer), plus the
        # fragment's own run; modelled from the 0.1 s readings
        every = class_mode_constants()["LECTURER_EVERY_S"]
        phase = rng.uniform(0, every)
        ticks, t_next = [], rs[0][0] + phase if rs else 0
        for t, v in rs:
            if t >= t_next:
                ticks.append((t, v))
                t_next += every * (1 + int((t - t_next) // every))
        bar += count_latencies(mine, ticks)
    out["count_s"], out["bar_s"], out["sent_count_s"] = lat, bar, sent
    out["counted"] = len(lat)
    out["final_count"] = sum(rs[-1][1] for rs in readings.values() if rs)

    # -- reveal
    await asyncio.sleep(1.0)
    m = meter().start()
    t_wall, t0 = time.time(), time.monotonic()
    for c in classes:
        lecturer.reveal(c["code"], c["secret"], question[c["code"]])
    deadline = t0 + 30
    target = {c["code"]: c["seq"] for c in classes}
    while time.monotonic() < deadline and not all((target[p.code], True) in p.seen for p in phones):
        await asyncio.sleep(0.05)
    out["reveal_s"] = [p.seen[(target[p.code], True)] - t0 for p in phones if (target[p.code], True) in p.seen]
    out["reveal_missing"] = len(phones) - len(out["reveal_s"])
    out["reveal_phase"] = m.stop()
    if browsers:
        for _ in range(300):
            seen = await browsers.seen()
            hits = [min((t for k, t in s.items() if k.endswith("|true")), default=None) for s in seen]
            if all(h is not None for h in hits):
                break
            await asyncio.sleep(0.1)
        out["reveal_browser_s"] = [h - t_wall for h in hits if h is not None]
    out["rss_end"] = setup.rss()
    out["phone_errors"] = sorted({e for p in phones for e in p.errors})[:5]
    out["phone_error_n"] = sum(len(p.errors) for p in phones)

    stop.set()
    for p in phones:
        p.poll_conn.close()
        p.post_conn.close()
    for f in followers:
        f.cancel()
    await asyncio.gather(*followers, return_exceptions=True)
    if browsers:
        await browsers.close()
    lecturer.close()
    counter.close()
    return out


# ---- the report -------------------------------------------------------------------------------------------------------
def st3(xs: list[float], digits: int = 2) -> str:
    if not xs:
        return "–"
    return " / ".join(f"{v:.{digits}f}" for v in (pct(xs, 50), pct(xs, 95), max(xs)))


def mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def rows_of(r: dict) -> list[str]:
    n = r["phones"]
    idle_rate = _cores(r["idle_app"])
    follow = _cores(r["idle_follow"])
    ap = r["answer_phase"]
    per_answer = (ap["server"] - _cores(r["idle_follow"]) * ap["wall"]) / max(1, r["answers"])
    mb = (r["rss_follow"] - r["rss_idle"]) / 2**20
    mb_end = (r["rss_end"] - r["rss_idle"]) / 2**20
    nx = r["next_phase"]
    next_cpu = sum(p["server"] for p in nx) / max(1, len(nx))
    classes = (n + CLASS_CAP - 1) // CLASS_CAP
    where = f"{n} ({classes} classes)" if classes > 1 else str(n)
    p95 = lambda xs: pct(xs, 95)  # noqa: E731
    return [
        f"| {where} | Next → step on every phone, s (target p95 ≤ 1.5) | {st3(r['next_s'])} "
        f"{mark(p95(r['next_s']) <= 1.5 and not r['next_missing'])} | {len(r['next_s'])} views from {r.get('nexts', '?')} "
        f"Nexts, {r['next_missing']} missing; {r['browsers']} browsers {st3(r['next_browser_s'])}; server CPU {next_cpu:.2f} s per Next |",
        f"| {where} | answer sent → in `counts`, s (target p95 ≤ 1) | {st3(r['sent_count_s'])} "
        f"{mark(p95(r['sent_count_s']) <= 1.0)} | {r['counted']} of {r['answers']} answers counted (final count "
        f"{r['final_count']}); POST answer → 200 {st3(r['answer_call_s'], 3)} s; 200 returned → in `counts` "
        f"{st3(r['count_s'])}; the lecturer's 1 s bar (modelled, from 200 returned) {st3(r['bar_s'])} |",
        f"| {where} | server CPU per answer, ms (target ≤ 5) | {per_answer * 1000:.1f} {mark(per_answer <= 0.005)} | "
        f"{r['answers']} answers in {ap['wall']:.1f} s: server {ap['server']:.2f} s − idle-following "
        f"{_cores(r['idle_follow']):.3f} cores × {ap['wall']:.1f} s; bench client {_cores(ap, 'client'):.2f} cores, "
        f"browsers {_cores(ap, 'browsers'):.2f}; sleep lag p95 {ap['lag']:.0f} ms |",
        f"| {where} | idle following (long polls held), server cores (target ≤ 0.2) | {follow:.3f} "
        f"{mark(follow <= 0.2)} | idle app {idle_rate:.3f}; {r['idle_polls_per_s']:.1f} polls answered/s; "
        f"bench client {_cores(r['idle_follow'], 'client'):.3f} cores, browsers {_cores(r['idle_follow'], 'browsers'):.2f}; "
        f"load {r['idle_follow']['load'][0]:.1f} → {r['idle_follow']['load'][1]:.1f} |",
        f"| {where} | server RSS over the idle app, MB (target ≤ 150) | {mb:.0f} {mark(mb <= 150)} | idle app "
        f"{r['rss_idle'] / 2**20:.0f} MB; after answers and reveal {mb_end:+.0f} MB |",
        f"| {where} | Reveal → reveal on every phone, s | {st3(r['reveal_s'])} | {r['reveal_missing']} missing; "
        f"browsers {st3(r.get('reveal_browser_s', []))}; server CPU {r['reveal_phase']['server']:.2f} s |",
        f"| {where} | join, s | {st3(r['join_s'])} | {len(r['join_s'])} of {n - r['browsers']} simulated phones; "
        f"{r['joins']['server'] / max(1, len(r['join_s'])) * 1000:.1f} ms server CPU per join; errors "
        f"{r['join_errors'] or 'none'}; browsers' page → options {st3(r.get('browser_open_s', []))} s; "
        f"phone errors {r['phone_error_n']} {r['phone_errors'] or ''} |",
    ]


def report(args, results: dict, seconds: float) -> str:
    import platform

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    consts = class_mode_constants()
    head = [
        "# The light phone page under load: how many phones one 2-core server holds (bench/bench_phones.py)", "",
        f"{time.strftime('%Y-%m-%d')}, {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}", "",
        f"`python bench/bench_phones.py {' '.join(sys.argv[1:])}`; took {seconds / 60:.1f} min. "
        "The bench machine is the server machine: the server, the simulated phones (one asyncio loop, plain "
        "sockets), the lecturer's store calls and the browsers share the same 2 cores, shared with other jobs "
        "(load average and sleep lag in the notes). Simulated phones speak the phone page's protocol over HTTP/1.1 "
        "(join, the `/state` long poll with `If-None-Match` and `wait=25`, then a 0.25 s pause as phone.js, "
        "`POST /answer`); each sends its own `X-Forwarded-For` from loopback, so the join limit (20/min per "
        f"address) sees distinct phones. {args.browsers} of the phones are real browsers (Chromium 390×844 on `/join/<CODE>`). "
        "The lecturer drives the class through `ClassStore` on the server's database. A class holds at most "
        f"{CLASS_CAP} students (store's MAX_STUDENTS): above that, the phones are spread over classes of ≤ {CLASS_CAP} "
        "on the one server, every class moved at the same moment. Times from the client, `time.monotonic()` "
        "(browsers: `Date.now()` in a MutationObserver on the page). p50 / p95 / max. Intervals: the lecturer's bar "
        f"every {consts['LECTURER_EVERY_S']} s, the state cache {consts['STATE_TTL_S']} s, the phones' watcher 0.25 s.",
        "",
    ]
    body = []
    for name, rs in results.items():
        body += [f"## {name}", "", "| phones | measured | value | notes |", "|---|---|---|---|"]
        for r in rs:
            if "error" in r:
                body.append(f"| {r['phones']} | – | not measured | {r['error']} |")
            else:
                r["nexts"] = args.nexts
                body += rows_of(r)
        body.append("")
    return "\n".join(head + body) + "\n"


async def main_async(args) -> dict:
    rng = random.Random(args.seed)
    lag = LagProbe()
    results: dict[str, list] = {}
    kinds = [("single", Single)] + ([("nginx", Proxied)] if args.nginx else [])
    if args.only_nginx:
        kinds = [("nginx", Proxied)]
    if args.profile:
        kinds = [("profile", Profiled)]
    for key, kind in kinds:
        sizes = args.nginx_phones if key == "nginx" and args.nginx_phones else args.phones
        for n in sizes:
            tmp = Path(tempfile.mkdtemp(prefix="bench-phones-"))
            print(f"[{time.strftime('%H:%M:%S')}] {kind.name}: {n} phones", flush=True)
            try:
                setup = kind(tmp)
            except Exception as err:  # noqa: BLE001
                results.setdefault(kind.name, []).append({"phones": n, "error": f"{type(err).__name__}: {err}"[:300]})
                continue
            try:
                r = await run_size(setup, n, args, rng, lag)
                if isinstance(setup, Profiled):
                    (args.out.parent / f"bench_phones_profile_{n}.txt").write_text(setup.dump())
            except Exception as err:  # noqa: BLE001
                import traceback

                traceback.print_exc()
                r = {"phones": n, "error": f"{type(err).__name__}: {err}"[:300]}
            finally:
                setup.close()
                shutil.rmtree(tmp, ignore_errors=True)
            results.setdefault(kind.name, []).append(r)
            print(json.dumps({k: (v if not isinstance(v, list) or len(v) < 8 else f"{len(v)} values, p50 {pct(v, 50):.3f} "
                                  f"p95 {pct(v, 95):.3f}") for k, v in r.items()}, default=str), flush=True)
    lag.stop()
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phones", type=int, nargs="+", default=[300, 600, 1000])
    ap.add_argument("--browsers", type=int, default=5)
    ap.add_argument("--nexts", type=int, default=3)
    ap.add_argument("--idle-s", type=float, default=20)
    ap.add_argument("--answer-window-s", type=float, default=10)
    ap.add_argument("--nginx", action="store_true", help="also through deploy/nginx.conf, 2 replicas, PostgreSQL")
    ap.add_argument("--only-nginx", action="store_true")
    ap.add_argument("--nginx-phones", type=int, nargs="+")
    ap.add_argument("--profile", action="store_true",
                    help="one process under cProfile (every thread); the profile goes next to --out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "bench_phones.md")
    args = ap.parse_args()
    t0 = time.time()
    results = asyncio.run(main_async(args))
    text = report(args, results, time.time() - t0)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
