"""Class mode under a class: how fast an answer reaches the lecturer's count, and what an idle class costs the server.

Usage: ``python bench/bench_classroom.py [--students 150] [--browsers 12] [--batch 4] [--idle-s 30] [--store-idle-s 20]
[--answer-window-s 10] [--seed 0] [--skip store browsers] [--no-write]``

The issue's target: one 2-core server with 150 joined students, an answer reaches the lecturer's count with
p95 <= 2 s, and the idle class (students following, nobody clicking) costs the server at most a fraction of one
core. Two parts, each measured, nothing asserted:

**1. The store, simulated** (no browser, no Streamlit): ``classroom.ClassStore`` on SQLite in a temporary folder
and, when Debian's PostgreSQL (initdb / pg_ctl) is installed, on a throwaway PostgreSQL cluster on loopback
(started as ``tests/teaching/classroom/conftest.py`` does). ``--students`` threads join one class at once; then

* *idle*, ``--store-idle-s`` seconds, twice: a "lecturer" thread reads ``state()`` + ``counts()`` every 1.0 s (the
  lecturer's live bar, ``LECTURER_EVERY_S``) and ``--students`` "follower" threads each read the class's state
  every 1.5 s (the students' fragment, ``FOLLOW_EVERY_S``), at random phases; (a) every follower calls
  ``store.state()`` itself (the worst case: every student on a process of its own), (b) through a per-process
  cache of ``STATE_TTL_S`` = 0.5 s, as ``ui.teaching.class_mode.class_state`` does. Reported: the CPU seconds of the bench
  process (``time.process_time``, every thread) per wall second, plus PostgreSQL's own processes' CPU there;
* *answers*: the same lecturer and uncached followers, and ``--students`` threads each calling ``answer()`` once
  at a random moment of ``--answer-window-s`` seconds. Reported: ``answer()``'s own latency (p50 / p95) and, per
  answer, the time from ``answer()`` returning to the end of the first lecturer poll whose count includes it
  (the k-th answer to return is counted once a poll reports >= k answers): p50 / p95 / max.

**2. A real server and real browsers**: one ``streamlit run app.py`` on loopback (``bench/loadsim.py``'s
``Server``: ``OMP_NUM_THREADS=1``, a temporary ``EXPLORER_DATA_DIR``) and one Debian chromium (Playwright,
headless). A lecturer context (1400x1000) opens ``/attention?lesson=numpy_decoder&step=1`` (a choice question on
the NumPy-decoder preset, a small random model) and presses "Start a class"; ``--browsers`` student contexts
(390x844, a phone) open the join link ``/?class=CODE`` in batches of ``--batch``. Every time is taken inside the
pages (``Date.now()``, one clock for every page of the machine), so Playwright's own round trips do not count:

* (a) join: from ``page.goto`` to the answer buttons being visible (a watcher polls every 50 ms);
* (b) idle server CPU: the server process's CPU time (``/proc/<pid>/stat``) over ``--idle-s`` seconds, as a
  fraction of one core: with no browser at all (half as long), with the lecturer alone (the reference: no student
  connected) and with the lecturer and every student following, nobody clicking; per connected student =
  (with students - lecturer alone) / students, and the lecturer alone + 150 x that as an *estimate* (labelled:
  measured with ``--browsers`` browsers, not 150). Also counted: the websocket messages the students' pages sent
  in that window (each one a fragment rerun asked of the server), hence the server's CPU per fragment rerun;
* (c) answer -> lecturer's count: the lecturer's page reads ``.st-key-class-count`` every 100 ms and records when
  "A of N answered" changes. First :data:`REF_CLICKS` students answer one at a time, each waiting until the count
  shows it (the reference: a click with nobody else clicking), then every other student's page clicks an answer
  at a random moment of ``--answer-window-s`` seconds (a DOM click, timed in the page). The k-th click is counted
  once A >= k: p50 / p95 / max, and the p50 as a ratio to the reference's;
* (d) reveal -> every student sees it (an alert in ``.st-key-class-question``: right, wrong or not answered);
* (e) next -> every student is on step 2 (the URL has ``step=2`` and the question box says "step 2 of").

(d) and (e) are timed from the lecturer's click (in the lecturer's page) to each student's watcher (100 ms).
For every phase of part 2 the table also gives the server's CPU beyond the idle class's, per event (a join, a
click, a student's reveal or step: the work one action costs the server, whatever else the machine runs), the
browsers' CPU, the load average, and the 95th percentile of how late a thread of the bench woke from a 50 ms sleep
(how oversubscribed the machine was: the wall-clock latencies above depend on it, the CPU figures much less).
The store's and the server's figures are CPU time; the latencies are wall time on whatever else the machine runs.
Writes ``bench/results/bench_classroom.md``. Every wait has a timeout; nothing leaves the loopback.
"""

from __future__ import annotations

import argparse
import glob
import os
import pwd
import random
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

try:
    import common  # noqa: F401  (run as a script: puts the project root on sys.path)
except ModuleNotFoundError:  # imported by tests/bench/, where the root is already on sys.path
    pass

from bench.loadsim import ROOT  # noqa: E402

LESSON_URL = "/attention?lesson=numpy_decoder&step=1"
STEP = {"kind": "lesson", "lesson": "numpy_decoder", "step": 1, "page": "attention", "question": "numpy_decoder:1"}
REF_CLICKS = 3  # students who answer one at a time before the rest answer at random moments (the reference)
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"]
IDLE_JS = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def class_mode_constants() -> dict[str, float]:
    """``FOLLOW_EVERY_S``, ``LECTURER_EVERY_S``, ``STATE_TTL_S`` as ui/teaching/class_mode.py sets them (read from its source,
    so the bench needs no Streamlit import and follows a change of the intervals)."""
    src = (ROOT / "ui" / "teaching" / "class_mode.py").read_text()
    out = {}
    for name, default in (("FOLLOW_EVERY_S", 1.5), ("LECTURER_EVERY_S", 1.0), ("STATE_TTL_S", 0.5)):
        m = re.search(rf"^{name}\s*=\s*([0-9.]+)", src, re.M)
        out[name] = float(m.group(1)) if m else default
    return out


# ---- pure helpers ------------------------------------------------------------------------------------------------
def pct(xs: list[float], q: float) -> float:
    """The q-th percentile (0-100) of ``xs``, linear between the closest ranks (numpy's default); nan if empty."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    pos = (len(s) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def count_latencies(done_at: list[float], seen: list[tuple[float, int]]) -> list[float]:
    """Per event, the time until a count first includes it.

    ``done_at``: when each event happened (an answer returned, a click); ``seen``: ``(time, count)`` readings of
    the count, in time order. The k-th event in time order is counted by the first reading at or after it whose
    count is >= k (the count cannot tell which event it counted, only how many). Events never counted are left
    out (the caller reports how many were counted). Latencies below 0 (a reading that saw a commit a moment before
    the call returned) are 0."""
    out = []
    readings = sorted(seen)
    for k, t in enumerate(sorted(done_at), start=1):
        hit = next((rt for rt, n in readings if n >= k and rt >= t), None)
        if hit is None:  # a reading that saw it before the call returned: the first one with the count >= k
            hit = next((rt for rt, n in readings if n >= k), None)
        if hit is not None:
            out.append(max(0.0, hit - t))
    return out


def stats(xs: list[float], scale: float = 1.0, digits: int = 2) -> str:
    """``p50 / p95 / max`` of ``xs`` x ``scale``."""
    if not xs:
        return "–"
    return " / ".join(f"{v * scale:.{digits}f}" for v in (pct(xs, 50), pct(xs, 95), max(xs)))


def cpu_of_tree(pid: int) -> float:
    """User + system CPU seconds of a process, its live descendants and its reaped children (from /proc)."""
    total, todo, ticks = 0, [pid], os.sysconf("SC_CLK_TCK")
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return total / ticks


class LagProbe:
    """A thread that sleeps 50 ms at a time and records how late it wakes: on an idle machine about 0.1 ms, on an
    oversubscribed one (other jobs, the browsers) tens of ms. Says how busy the machine was during a phase."""

    def __init__(self, period: float = 0.05):
        self.period, self.samples, self._stop = period, [], threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self._stop.is_set():
            t0 = time.perf_counter()
            time.sleep(self.period)
            t1 = time.perf_counter()
            self.samples.append((t1, t1 - t0 - self.period))

    def p95_ms(self, t0: float, t1: float) -> float:
        return pct([lag for t, lag in self.samples if t0 <= t <= t1], 95) * 1000

    def stop(self) -> None:
        self._stop.set()


# ---- 1. the store, simulated -------------------------------------------------------------------------------------
def _pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    return found[-1] if found else shutil.which(name)


class Postgres:
    """A throwaway PostgreSQL cluster on loopback (as tests/teaching/classroom/conftest.py starts it), or ``url`` None."""

    def __init__(self):
        self.url, self.why, self.pid = None, "", None
        initdb, self.pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
        if not initdb or not self.pg_ctl:
            self.why = "not installed (no initdb / pg_ctl)"
            return
        self.root = Path(tempfile.mkdtemp(prefix="bench-class-pg-"))
        self.data = self.root / "data"
        self.prefix: list[str] = []
        if os.geteuid() == 0:  # initdb refuses root
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                self.why = "running as root without a 'postgres' user"
                return
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            self._run(initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8",
                      "--no-locale")
            opts = f"-p {port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100"
            self._run(self.pg_ctl, "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"), "-w", "-t", "30",
                      "start")
            import psycopg

            with psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres",
                                 autocommit=True) as conn:
                conn.execute("CREATE DATABASE benchclass")
            self.pid = int((self.data / "postmaster.pid").read_text().split()[0])
            self.url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/benchclass"
        except Exception as err:  # noqa: BLE001 -- reported in the table instead
            self.why = f"could not start: {type(err).__name__}: {str(err)[:200]}"
            self.close()

    def _run(self, *args: str) -> None:
        r = subprocess.run([*self.prefix, *args], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name}: {r.stdout}{r.stderr}")

    def cpu(self) -> float:
        return cpu_of_tree(self.pid) if self.pid else 0.0

    def close(self) -> None:
        if getattr(self, "data", None) and self.data.exists():
            subprocess.run([*self.prefix, self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"],
                           capture_output=True, timeout=60)
        if getattr(self, "root", None):
            shutil.rmtree(self.root, ignore_errors=True)


class CachedState:
    """``ui.teaching.class_mode.class_state`` without Streamlit: one ``state()`` read per ``ttl`` shared by every thread."""

    def __init__(self, store, ttl: float):
        self.store, self.ttl, self.lock, self.hit, self.misses = store, ttl, threading.Lock(), None, 0

    def __call__(self, code: str) -> dict:
        now = time.monotonic()
        with self.lock:
            hit = self.hit
        if hit and now - hit[0] < self.ttl:
            return hit[1]
        state = self.store.state(code)
        with self.lock:
            self.hit = (now, state)
            self.misses += 1
        return state


def _every(stop: threading.Event, period: float, phase: float, fn) -> None:
    """Call ``fn()`` every ``period`` s, the first time after ``phase`` s, until ``stop`` (no catching up)."""
    due = time.perf_counter() + phase
    while not stop.wait(max(0.0, due - time.perf_counter())):
        fn()
        due = max(due + period, time.perf_counter())


def store_sim(url: str, n: int, idle_s: float, window_s: float, rng: random.Random, pg: Postgres | None = None,
              consts: dict | None = None) -> dict:
    from teaching.classroom import ClassStore, new_student_id

    consts = consts or class_mode_constants()
    store = ClassStore(url)
    errors: list[str] = []
    lag = LagProbe()
    try:
        code, secret = store.create_class()
        store.set_step(code, secret, STEP)
        ids = [new_student_id() for _ in range(n)]
        join_s: list[float] = []

        def join(sid: str) -> None:
            t0 = time.perf_counter()
            try:
                store.join(code, sid)
                join_s.append(time.perf_counter() - t0)
            except Exception as err:  # noqa: BLE001
                errors.append(f"join: {type(err).__name__}: {err}")

        threads = [threading.Thread(target=join, args=(sid,)) for sid in ids]
        [t.start() for t in threads]
        [t.join(120) for t in threads]

        polls: list[tuple[float, int]] = []  # (end of the lecturer's poll, answered)

        def lecturer() -> None:
            try:
                state = store.state(code)
                polls.append((time.perf_counter(), store.counts(code, state["question"])["answered"]))
            except Exception as err:  # noqa: BLE001
                errors.append(f"lecturer: {type(err).__name__}: {err}")

        reads = [0]
        reads_lock = threading.Lock()

        def follower(read) -> None:
            try:
                read(code)
                with reads_lock:
                    reads[0] += 1
            except Exception as err:  # noqa: BLE001
                errors.append(f"follower: {type(err).__name__}: {err}")

        def run_phase(seconds: float, read, answer_plan: list[tuple[str, float]] | None = None) -> dict:
            stop = threading.Event()
            bg = [threading.Thread(target=_every, args=(stop, consts["LECTURER_EVERY_S"], 0.0, lecturer), daemon=True)]
            bg += [threading.Thread(target=_every, args=(stop, consts["FOLLOW_EVERY_S"],
                                                         rng.uniform(0, consts["FOLLOW_EVERY_S"]),
                                                         lambda: follower(read)), daemon=True) for _ in range(n)]
            polls.clear()
            reads[0] = 0
            [t.start() for t in bg]
            time.sleep(consts["FOLLOW_EVERY_S"])  # every follower started its rhythm
            reads[0] = 0
            answered: list[float] = []
            answer_s: list[float] = []
            c0, w0, p0 = time.process_time(), time.perf_counter(), pg.cpu() if pg else 0.0
            load0 = os.getloadavg()[0]

            def answer(sid: str, at: float) -> None:
                time.sleep(at)
                t0 = time.perf_counter()
                try:
                    store.answer(code, sid, STEP["question"], rng.randrange(4))
                except Exception as err:  # noqa: BLE001
                    errors.append(f"answer: {type(err).__name__}: {err}")
                    return
                t1 = time.perf_counter()
                answer_s.append(t1 - t0)
                answered.append(t1)

            workers = [threading.Thread(target=answer, args=a, daemon=True) for a in answer_plan or []]
            [t.start() for t in workers]
            deadline = time.perf_counter() + seconds
            [t.join(max(0.1, deadline + 60 - time.perf_counter())) for t in workers]
            if answer_plan:  # two more lecturer polls after the last answer: it is counted if it ever will be
                time.sleep(2.2 * consts["LECTURER_EVERY_S"])
            else:
                time.sleep(max(0.0, deadline - time.perf_counter()))
            wall = time.perf_counter() - w0
            cpu, pg_cpu, n_reads = time.process_time() - c0, (pg.cpu() if pg else 0.0) - p0, reads[0]
            stop.set()
            [t.join(10) for t in bg]
            return {"wall": wall, "cpu": cpu / wall, "pg_cpu": pg_cpu / wall, "reads": n_reads / wall,
                    "answer_s": answer_s, "answered": answered, "polls": list(polls),
                    "load": (load0, os.getloadavg()[0]), "lag_ms": lag.p95_ms(w0, w0 + wall)}

        idle_direct = run_phase(idle_s, store.state)
        cache = CachedState(store, consts["STATE_TTL_S"])
        idle_cached = run_phase(idle_s, cache)
        idle_cached["misses"] = cache.misses / (idle_cached["wall"] + consts["FOLLOW_EVERY_S"])  # whole phase
        plan = [(sid, rng.uniform(0, window_s)) for sid in ids]
        answers = run_phase(window_s, store.state, plan)
        lat = count_latencies(answers["answered"], answers["polls"])
        final = store.counts(code, STEP["question"])
        return {"join_s": join_s, "idle_direct": idle_direct, "idle_cached": idle_cached, "answers": answers,
                "latency": lat, "counted": len(lat), "final": final, "errors": errors}
    finally:
        lag.stop()
        store.close()


# ---- 2. a real server and real browsers ---------------------------------------------------------------------------
STUDENT_INIT = """
(() => {
  window.__t = window.__t || {};
  window.__sent = 0;
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (d) { window.__sent += 1; return send.call(this, d); };
  const iv = setInterval(() => {
    if (document.querySelector('.st-key-class-answer-0 button')) { window.__t.visible = Date.now(); clearInterval(iv); }
  }, 50);
})();
"""
LECTURER_WATCH = """
() => {
  window.__counts = [];
  let last = -1;
  setInterval(() => {
    const el = document.querySelector('.st-key-class-count');
    const m = el && el.innerText.match(/(\\d+) of (\\d+) answered/);
    if (m && +m[1] !== last) { last = +m[1]; window.__counts.push([Date.now(), last, +m[2]]); }
  }, 100);
}
"""
STUDENT_WATCH = """
() => {
  window.__t.revealed = null; window.__t.step2 = null;
  setInterval(() => {
    const q = document.querySelector('.st-key-class-question');
    if (!window.__t.revealed && q && q.querySelector('[data-testid="stAlert"], [data-testid="stAlertContainer"]'))
      window.__t.revealed = Date.now();
    if (!window.__t.step2 && location.search.includes('step=2') && q && q.innerText.includes('step 2 of'))
      window.__t.step2 = Date.now();
  }, 100);
}
"""
CLICK_LATER = """
([sel, delay]) => { setTimeout(() => {
  const b = document.querySelector(sel);
  window.__t.clicked = Date.now();
  if (b) b.click(); else window.__t.missing = sel;
}, delay); }
"""
CLICK_NOW = """
(sel) => { const b = document.querySelector(sel); const t = Date.now(); if (b) b.click(); return b ? t : null; }
"""


def browsers_cpu(exclude: set[int]) -> float:
    """CPU seconds of this process's descendants (Playwright's driver, chromium) outside ``exclude`` (the server)."""
    import psutil

    total = 0.0
    for p in psutil.Process().children(recursive=True):
        if p.pid in exclude:
            continue
        try:
            c = p.cpu_times()
            total += c.user + c.system
        except psutil.Error:
            pass
    return total


def browser_class(n: int, batch: int, idle_s: float, window_s: float, rng: random.Random) -> dict:
    from playwright.sync_api import sync_playwright

    from bench.loadsim import Server

    data = tempfile.mkdtemp(prefix="bench-class-data-")
    server = Server(env={"OMP_NUM_THREADS": "1", "EXPLORER_DATA_DIR": data})
    base = f"http://127.0.0.1:{server.port}"
    out: dict = {"n": n, "notes": []}

    lag = LagProbe()

    def phase():
        """Start measuring a phase; the returned function ends it: the server's CPU (cores, and CPU seconds), the
        browsers' CPU, the load average and the scheduling lag of a sleeping thread (how busy the machine was)."""
        skip = set(server.pids())
        s0, b0, w0, load0 = server.cpu_seconds(), browsers_cpu(skip), time.perf_counter(), os.getloadavg()[0]

        def end() -> dict:
            wall = time.perf_counter() - w0
            cpu = server.cpu_seconds() - s0
            return {"wall": wall, "server_s": cpu, "server": cpu / wall, "browsers": (browsers_cpu(skip) - b0) / wall,
                    "load": (load0, os.getloadavg()[0]), "lag_ms": lag.p95_ms(w0, w0 + wall)}
        return end

    def idle(seconds: float, pages: list) -> dict:
        """The server's CPU (fraction of a core), the browsers', and the messages ``pages`` sent, over ``seconds``."""
        skip = set(server.pids())
        sent0 = [p.evaluate("window.__sent || 0") for p in pages]
        s0, b0, w0 = server.cpu_seconds(), browsers_cpu(skip), time.perf_counter()
        load0 = os.getloadavg()[0]
        time.sleep(seconds)
        wall = time.perf_counter() - w0
        s1, b1 = server.cpu_seconds(), browsers_cpu(skip)
        sent = sum(p.evaluate("window.__sent || 0") for p in pages) - sum(sent0)
        return {"server": (s1 - s0) / wall, "browsers": (b1 - b0) / wall, "sent_per_s": sent / wall, "wall": wall,
                "load": (load0, os.getloadavg()[0]), "lag_ms": lag.p95_ms(w0, w0 + wall)}

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            out["no_browser"] = idle(idle_s / 2, [])
            # -- the lecturer --
            lctx = browser.new_context(locale="en-US", viewport={"width": 1400, "height": 1000})
            lp = lctx.new_page()
            t0 = time.perf_counter()
            lp.goto(base + LESSON_URL, wait_until="domcontentloaded")
            lp.wait_for_selector("[data-testid='stMain'] h1", timeout=180_000)
            lp.wait_for_function(IDLE_JS, timeout=180_000)
            lp.locator("[data-testid='stSidebar'] [data-testid='stExpander'] summary",
                       has_text="Class mode").first.click()
            lp.locator(".st-key-class-start button").first.click()
            lp.wait_for_function("() => /Class\\s+[A-Z0-9]{6}/.test((document.querySelector('.st-key-class-count')"
                                 " || {}).innerText || '')", timeout=120_000)
            code = re.search(r"Class\s+([A-Z0-9]{6})", lp.inner_text(".st-key-class-count")).group(1)
            lp.wait_for_selector(".st-key-class-reveal button", timeout=120_000)
            lp.wait_for_function(IDLE_JS, timeout=120_000)
            out["lecturer_ready_s"] = time.perf_counter() - t0
            lp.evaluate(LECTURER_WATCH)
            time.sleep(2.0)
            out["lecturer_only"] = idle(idle_s, [])
            # -- the students join, a batch at a time --
            pages, join_ms = [], []
            meter = phase()
            for start in range(0, n, batch):
                group = []
                for _ in range(min(batch, n - start)):
                    ctx = browser.new_context(locale="en-US", viewport={"width": 390, "height": 844},
                                              is_mobile=True, has_touch=True)
                    ctx.add_init_script(STUDENT_INIT)
                    pg = ctx.new_page()
                    group.append((pg, time.time() * 1000))
                    pg.goto(f"{base}/?class={code}", wait_until="commit")
                for pg, t_goto in group:
                    try:
                        pg.wait_for_function("() => window.__t && window.__t.visible", timeout=180_000, polling=200)
                        join_ms.append(pg.evaluate("window.__t.visible") - t_goto)
                    except Exception as err:  # noqa: BLE001
                        out["notes"].append(f"a student's question never showed: {type(err).__name__}")
                    pages.append(pg)
                print(f"  joined {len(pages)} / {n}", flush=True)
            out["join_ms"] = join_ms
            out["join_phase"] = meter()
            out["visibility"] = sorted({pg.evaluate("document.visibilityState") for pg in pages})
            time.sleep(3.0)
            out["joined_text"] = lp.inner_text(".st-key-class-count").replace("\n", " ")
            out["students"] = idle(idle_s, pages)
            # -- (c) answers: first a few students one at a time (the reference), then the rest at random moments --
            n_ref = min(REF_CLICKS, max(0, len(pages) - 1))
            seen0 = lp.evaluate("window.__counts.length")
            ref_clicks = []
            meter = phase()
            for pg in pages[:n_ref]:  # one click, then wait until the lecturer's count shows it (or 20 s)
                k = len(ref_clicks) + 1
                ref_clicks.append(pg.evaluate(CLICK_NOW, f".st-key-class-answer-{rng.randrange(4)} button"))
                try:
                    lp.wait_for_function(f"() => window.__counts.at(-1)[1] >= {k}", timeout=20_000, polling=100)
                except Exception:  # noqa: BLE001 -- reported as uncounted
                    pass
                time.sleep(1.0)
            out["ref_phase"] = meter()
            burst = pages[n_ref:]
            meter = phase()
            for pg in burst:
                pg.evaluate(CLICK_LATER, [f".st-key-class-answer-{rng.randrange(4)} button",
                                          int(rng.uniform(0, window_s) * 1000)])
            try:
                lp.wait_for_function(f"() => window.__counts.at(-1)[1] >= {len(pages)}",
                                     timeout=int((window_s + 90) * 1000), polling=250)
            except Exception as err:  # noqa: BLE001
                out["notes"].append(f"the lecturer's count never reached {len(pages)}: {type(err).__name__}")
            out["burst_phase"] = meter()
            clicks = [pg.evaluate("window.__t.clicked || null") for pg in burst]
            out["missing"] = sum(1 for pg in burst if pg.evaluate("window.__t.missing || null"))
            counts = [(t, a) for t, a, _ in lp.evaluate("window.__counts")[seen0 - 1 if seen0 else 0:]]
            out["ref_clicks"] = [c for c in ref_clicks if c]
            out["ref_ms"] = count_latencies(out["ref_clicks"], counts)
            out["clicks"] = [c for c in clicks if c]
            base_count = len(out["ref_ms"])
            out["count_ms"] = count_latencies(out["clicks"], [(t, a - base_count) for t, a in counts])
            out["counts_final"] = counts[-1][1] if counts else None
            # -- (d) reveal --
            for pg in pages:
                pg.evaluate(STUDENT_WATCH)
            time.sleep(2.0)
            meter = phase()
            t_reveal = lp.evaluate(CLICK_NOW, ".st-key-class-reveal button")
            out["reveal_ms"], late = _wait_all(pages, "revealed", t_reveal, 90)
            out["reveal_phase"] = meter()
            out["notes"] += [f"not revealed after 90 s, its question box: {_box(pg)!r}" for pg in late]
            time.sleep(2.0)
            lp.wait_for_selector(".st-key-class-next button:not([disabled])", timeout=60_000)
            lp.wait_for_function(IDLE_JS, timeout=60_000)
            # -- (e) next --
            meter = phase()
            t_next = lp.evaluate(CLICK_NOW, ".st-key-class-next button")
            out["next_ms"], late = _wait_all(pages, "step2", t_next, 90)
            out["next_phase"] = meter()
            late_steps = sorted({re.search(r"step=(\d+)", pg.url).group(1) if "step=" in pg.url else "?"
                                 for pg in late})
            if late:
                out["notes"].append(f"{len(late)} students not on step 2 within 90 s of the click; their URLs' step: "
                                    f"{', '.join(late_steps)}; one's question box: {_box(late[0])!r}")
            time.sleep(2.0)
            lecturer_step = re.search(r"step=(\d+)", lp.url)
            out["lecturer_step"] = lecturer_step.group(1) if lecturer_step else "?"
            if out["lecturer_step"] != "2":
                out["notes"].append(f"after one Next click the lecturer's URL says step={out['lecturer_step']}")
            for pg in pages:
                pg.context.close()
            lctx.close()
            browser.close()
    finally:
        lag.stop()
        log = server.close()
        shutil.rmtree(data, ignore_errors=True)
    out["log_errors"] = [line for line in log.splitlines() if "Traceback" in line or "Error" in line][:5]
    return out


def _box(pg) -> str:
    try:
        return pg.inner_text(".st-key-class-question", timeout=2000).replace("\n", " ")[:160]
    except Exception as err:  # noqa: BLE001
        return f"(none: {type(err).__name__})"


def _wait_all(pages: list, key: str, t0: float | None, timeout_s: float) -> tuple[list[float], list]:
    """Milliseconds from ``t0`` (the lecturer's click, in-page clock) until each page's watcher set ``key``, and the
    pages that never did."""
    if t0 is None:
        return [], list(pages)
    deadline = time.perf_counter() + timeout_s
    seen: dict[int, float] = {}
    while len(seen) < len(pages) and time.perf_counter() < deadline:
        for i, pg in enumerate(pages):
            if i not in seen:
                at = pg.evaluate(f"window.__t.{key}")
                if at:
                    seen[i] = at - t0
        time.sleep(0.25)
    return list(seen.values()), [pg for i, pg in enumerate(pages) if i not in seen]


# ---- the report ---------------------------------------------------------------------------------------------------
def store_rows(name: str, r: dict, n: int) -> list[str]:
    a, d, c = r["answers"], r["idle_direct"], r["idle_cached"]
    pg = name == "PostgreSQL"
    cpu = (lambda x: f"{x['cpu']:.2f} (+ PostgreSQL {x['pg_cpu']:.2f})") if pg else (lambda x: f"{x['cpu']:.2f}")
    return [
        f"| {name} | {n} joining at once: join() s | {stats(r['join_s'])} | {len(r['join_s'])} of {n} joined |",
        f"| {name} | answer() call s | {pct(a['answer_s'], 50):.3f} / {pct(a['answer_s'], 95):.3f} / "
        f"{max(a['answer_s'], default=float('nan')):.3f} | {len(a['answer_s'])} answers in "
        f"{a['wall']:.0f} s, followers uncached |",
        f"| {name} | **answer() returned → the lecturer's next poll counts it, s** | **{stats(r['latency'])}** | "
        f"{r['counted']} of {len(a['answered'])} counted; final count {r['final']['answered']} of "
        f"{r['final']['joined']}; load average {a['load'][0]:.0f} → {a['load'][1]:.0f}, sleep lag p95 "
        f"{a['lag_ms']:.0f} ms |",
        f"| {name} | idle, every follower reads the store: CPU s per wall s | {cpu(d)} | {d['reads']:.0f} state() "
        f"reads/s + the lecturer's poll, {d['wall']:.0f} s |",
        f"| {name} | idle, followers through the 0.5 s state cache (as the app): CPU s per wall s | {cpu(c)} | "
        f"{c['reads']:.0f} follower reads/s served by {c['misses']:.1f} state() reads/s, {c['wall']:.0f} s |",
    ]


def _extra(phase: dict, idle_rate: float, events: int) -> float:
    """Server CPU seconds per event in a phase beyond what the idle class costs over the same wall time."""
    return (phase["server_s"] - idle_rate * phase["wall"]) / events if events else float("nan")


def _machine(phase: dict) -> str:
    return (f"server {phase['server']:.2f} cores, browsers {phase['browsers']:.2f}; load average "
            f"{phase['load'][0]:.0f} → {phase['load'][1]:.0f}; sleep lag p95 {phase['lag_ms']:.0f} ms")


def browser_rows(args, br: dict) -> list[str]:
    n = br["n"]
    s, lo, nb = br["students"], br["lecturer_only"], br["no_browser"]
    per = (s["server"] - lo["server"]) / n if n else float("nan")
    per_msg = (s["server"] - lo["server"]) / s["sent_per_s"] * 1000 if s["sent_per_s"] else float("nan")
    burst, ref = br["burst_phase"], br["ref_phase"]
    click_cpu = _extra(burst, s["server"], len(br["clicks"]))
    ref_cpu = _extra(ref, s["server"], len(br["ref_clicks"]))
    reveal_cpu = _extra(br["reveal_phase"], s["server"], len(br["reveal_ms"]))
    next_cpu = _extra(br["next_phase"], s["server"], len(br["next_ms"]))
    join_cpu = _extra(br["join_phase"], lo["server"], len(br["join_ms"]))
    p50 = pct(br["count_ms"], 50) / pct(br["ref_ms"], 50) if br["ref_ms"] and br["count_ms"] else float("nan")
    lines = [f"## 2. A real server and {n} real browsers (1 lecturer + {n} students in one chromium)", "",
             "One `streamlit run app.py` (`OMP_NUM_THREADS=1`); the browsers run on the same 2 cores. Joined: "
             f"\"{br.get('joined_text', '')}\". Pages' visibility: {', '.join(br.get('visibility', []))}. "
             "\"Sleep lag\": how late a sleeping thread of the bench woke (on a quiet machine ~0 ms): a measure of "
             "how oversubscribed the machine was in that phase. \"Extra CPU\": the server's CPU in the phase minus "
             "what the idle class costs over the same time, per event.", "",
             "| measured | value | notes |", "|---|---|---|",
             f"| (a) join link opened → question's answer buttons visible, s | {stats(br['join_ms'], 1e-3)} | "
             f"{len(br['join_ms'])} of {n} students, in batches of {args.batch}; extra server CPU "
             f"{join_cpu:.2f} s per join; the lecturer's page was ready {br['lecturer_ready_s']:.1f} s after it "
             f"opened; {_machine(br['join_phase'])} |",
             f"| (b) idle server CPU, no browser at all, fraction of one core | {nb['server']:.3f} | "
             f"{nb['wall']:.0f} s |",
             f"| (b) idle server CPU, the lecturer alone (reference), fraction of one core | {lo['server']:.3f} | "
             f"{lo['wall']:.0f} s; {_machine(lo)} |",
             f"| (b) **idle server CPU, the lecturer + {n} students following, fraction of one core** | "
             f"**{s['server']:.3f}** | {s['wall']:.0f} s; the students' pages sent {s['sent_per_s']:.1f} "
             f"messages/s ({s['sent_per_s'] / n if n else 0:.2f} per student per s); {_machine(s)} |",
             f"| (b) per connected student: (with students − lecturer alone) / {n}, fraction of one core | "
             f"{per:.4f} | {per_msg:.1f} ms of server CPU per message a student's page sent (a fragment rerun) |",
             f"| (b) *estimate, not measured*: the lecturer alone + 150 × per student | "
             f"*{lo['server'] + 150 * per:.2f}* | linear extrapolation from {n} browsers |",
             f"| (c) reference: a student clicks an answer, alone → the lecturer's count includes it, s | "
             f"{stats(br['ref_ms'], 1e-3)} | {len(br['ref_ms'])} of {len(br['ref_clicks'])} clicks counted, one at a "
             f"time; extra server CPU {ref_cpu:.2f} s per click; {_machine(ref)} |",
             f"| (c) **{len(br['clicks'])} students click at random moments of {args.answer_window_s:g} s → the "
             f"lecturer's count includes each, s** | **{stats(br['count_ms'], 1e-3)}** | {len(br['count_ms'])} of "
             f"{len(br['clicks'])} counted (final count {br.get('counts_final')}); p50 {p50:.1f}× the reference; "
             f"extra server CPU {click_cpu:.2f} s per click; count read every 100 ms; {_machine(burst)} |",
             f"| (c) *estimate, not measured*: server CPU for 150 answer clicks | *{150 * click_cpu:.0f} s* | "
             f"150 × the extra CPU per click above, on one process (one interpreter lock) |",
             f"| (d) lecturer clicks Reveal → each student sees the answer, s | {stats(br['reveal_ms'], 1e-3)} | "
             f"{len(br['reveal_ms'])} of {n} students; extra server CPU {reveal_cpu:.2f} s per student; "
             f"{_machine(br['reveal_phase'])} |",
             f"| (e) lecturer clicks Next step → each student is on step 2, s | {stats(br['next_ms'], 1e-3)} | "
             f"{len(br['next_ms'])} of {n} students; extra server CPU {next_cpu:.2f} s per student; "
             f"{_machine(br['next_phase'])} |", ""]
    notes = br["notes"] + ([f"{br['missing']} clicks found no button"] if br.get("missing") else [])
    if br["log_errors"]:
        notes.append("server log: " + " / ".join(br["log_errors"]))
    if notes:
        lines += ["Notes: " + "; ".join(notes), ""]
    return lines


def report(args, store: dict, br: dict | None, seconds: float, consts: dict) -> str:
    from common import machine_line

    lines = ["# Class mode: answer → lecturer's count, and the idle class's cost (bench/bench_classroom.py)", "",
             machine_line(), "",
             f"`python bench/bench_classroom.py --students {args.students} --browsers {args.browsers} --batch "
             f"{args.batch} --idle-s {args.idle_s:g} --store-idle-s {args.store_idle_s:g} --answer-window-s "
             f"{args.answer_window_s:g} --seed {args.seed}`; took {seconds / 60:.1f} min. Intervals from "
             f"ui/teaching/class_mode.py: students' fragment every {consts['FOLLOW_EVERY_S']:g} s, the lecturer's bar every "
             f"{consts['LECTURER_EVERY_S']:g} s, the state cache {consts['STATE_TTL_S']:g} s. Times: p50 / p95 / max.",
             ""]
    if store:
        lines += [f"## 1. The store, simulated: {args.students} students, one class (no browser, no Streamlit)", "",
                  "| store | measured | value | notes |", "|---|---|---|---|"]
        for name, r in store.items():
            if isinstance(r, str):
                lines.append(f"| {name} | – | not run | {r} |")
            else:
                lines += store_rows(name, r, args.students)
                if r["errors"]:
                    first = "; ".join(sorted(set(r["errors"]))[:3])
                    lines.append(f"| {name} | errors | {len(r['errors'])} | {first} |")
        lines.append("")
    if br:
        lines += browser_rows(args, br)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=150, help="simulated students on the store")
    parser.add_argument("--browsers", type=int, default=12, help="real student browser contexts")
    parser.add_argument("--batch", type=int, default=4, help="student contexts opened at once")
    parser.add_argument("--idle-s", type=float, default=30.0, help="each idle window on the real server")
    parser.add_argument("--store-idle-s", type=float, default=20.0, help="each idle window on the simulated store")
    parser.add_argument("--answer-window-s", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip", nargs="*", default=[], choices=["store", "postgres", "browsers"])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    from common import report as write_report

    rng = random.Random(args.seed)
    consts = class_mode_constants()
    t0 = time.perf_counter()
    store: dict = {}
    if "store" not in args.skip:
        folder = Path(tempfile.mkdtemp(prefix="bench-class-sqlite-"))
        try:
            store["SQLite"] = store_sim(f"sqlite:///{folder / 'classes.sqlite3'}", args.students, args.store_idle_s,
                                        args.answer_window_s, rng, consts=consts)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        print("SQLite done", flush=True)
        if "postgres" not in args.skip:
            pg = Postgres()
            try:
                store["PostgreSQL"] = (store_sim(pg.url, args.students, args.store_idle_s, args.answer_window_s, rng,
                                                 pg, consts) if pg.url else pg.why)
            finally:
                pg.close()
            print("PostgreSQL done", flush=True)
    br = None
    if "browsers" not in args.skip:
        br = browser_class(args.browsers, args.batch, args.idle_s, args.answer_window_s, rng)
    text = report(args, store, br, time.perf_counter() - t0, consts)
    write_report("bench_classroom", text, write=not args.no_write)


if __name__ == "__main__":
    main()
