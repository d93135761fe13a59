"""Simulated students for load tests: websocket clients that speak Streamlit's own protocol, on loopback only.

A browser tab talks to ``streamlit run`` over one websocket (``/_stcore/stream``): it sends a ``BackMsg`` asking
for a script run (with the URL's query string, so every URL-bound sidebar control can be set) and receives
``ForwardMsg``s (page elements) until ``script_finished``. :class:`Student` does exactly that, without a browser,
so thirty of them fit on a 2-core machine. A student can also press a button (a widget trigger, as a click
does) and keeps the Training lab's live panel updating (``auto_rerun`` messages ask the client to rerun a
fragment every second, as the browser does).

Used by ``bench/bench_load.py`` (30 students, 4 trainers, 1 asking for the maxima) and ``tests/bench/test_load.py``.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional
from urllib.parse import urlencode

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[1]
FINISHED = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
MAXIMA = {"cfg.vocab_size": 50257, "cfg.hidden_size": 768, "cfg.num_hidden_layers": 48,
          "cfg.intermediate_size": 3072, "cfg.num_attention_heads": 12, "cfg.num_key_value_heads": 12}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run app.py`` (or another ``script`` of ``root``) on a free loopback port, with its RSS sampled every
    0.25 s in a thread."""

    def __init__(self, env: Optional[dict] = None, root: Optional[Path] = None, script: str = "app.py"):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true", "--server.address",
             "127.0.0.1", "--server.port", str(self.port), "--browser.gatherUsageStats", "false"],
            cwd=root or ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1", **(env or {})),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.peak_rss = self.peak_tree = 0
        self._stop = threading.Event()
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        else:
            self.close()
            raise RuntimeError("streamlit did not become healthy")
        self.idle_rss = self.rss()
        threading.Thread(target=self._sample, daemon=True).start()

    def pids(self) -> list[int]:
        """The server process and every process it started (training runs in their own processes), recursively."""
        out, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as f:
                        todo += [int(c) for c in f.read().split()]
            except OSError:  # exited meanwhile
                pass
        return out

    def rss(self) -> int:
        """Resident memory of the server process in bytes (0 once it exited)."""
        return _memory(self.proc.pid, "/status", "VmRSS:")

    def tree_pss(self) -> int:
        """Proportional memory of the server and every process it started, in bytes: pages the fork server shares
        with the training runs it forked are counted once, split between them (a sum of RSS would count them
        in every process)."""
        return sum(_memory(pid, "/smaps_rollup", "Pss:") for pid in self.pids())

    def _sample(self) -> None:
        while not self._stop.wait(0.25):
            self.peak_rss = max(self.peak_rss, self.rss())
            self.peak_tree = max(self.peak_tree, self.tree_pss())

    def cpu_seconds(self, children: bool = True) -> float:
        """User + system CPU time the server has used: its own, and (``children``) its live child processes' and
        its ended ones'."""
        ticks = 0
        for pid in self.pids() if children else [self.proc.pid]:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks += sum(int(x) for x in fields[11:15 if children else 13])  # utime, stime (+ its ended children's)
        return ticks / os.sysconf("SC_CLK_TCK")

    def close(self) -> str:
        """Stop the server; returns its log."""
        self._stop.set()
        self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        return out.decode(errors="replace")


def _memory(pid: int, file: str, field_name: str) -> int:
    """A memory figure in bytes from ``/proc/<pid><file>`` (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}{file}") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field_name))
    except (OSError, StopIteration):
        return 0


@dataclass
class View:
    """What one script run showed: its elements' texts by kind, exceptions, buttons, and how long it took."""

    seconds: float = 0.0
    exceptions: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)
    markdown: list[str] = field(default_factory=list)
    progress: list[str] = field(default_factory=list)
    charts: int = 0
    buttons: dict[str, tuple[str, bool]] = field(default_factory=dict)  # label -> (widget id, disabled)
    numbers: dict[str, str] = field(default_factory=dict)  # number input label -> widget id
    radios: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # radio label -> (widget id, options)
    finished: bool = False


class Student:
    """One browser tab, as a websocket client (use as ``async with Student(port) as s:``)."""

    def __init__(self, port: int):
        self.url = f"ws://127.0.0.1:{port}/_stcore/stream"
        self.ws = None
        self.query = ""
        self.page = ""
        self.page_hash = ""  # the page's script hash, from the server's navigation message (as a browser keeps it)
        self.fragments: dict[str, float] = {}  # fragment id -> rerun interval (s), from auto_rerun messages

    async def __aenter__(self) -> "Student":
        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=2**26, open_timeout=120,
                                           ping_interval=None)  # a browser sends no pings either
        return self

    async def __aexit__(self, *exc) -> None:
        await self.ws.close()

    async def _send(self, query: str, page: str, widgets=None, fragment_id: str = "") -> None:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = query
        cs.page_name = page
        if self.page_hash:  # a rerun of the page shown (a click, a fragment): the browser names it by its hash
            cs.page_script_hash = self.page_hash
        if fragment_id:
            cs.fragment_id = fragment_id
            cs.is_auto_rerun = True
        if widgets is not None:
            cs.widget_states.widgets.extend(widgets)
        await self.ws.send(msg.SerializeToString())

    async def run(self, query: dict | str = "", page: str = "", widgets=None, fragment_id: str = "",
                  timeout: float = 300) -> View:
        """Ask for a script run (a page view, a click, or a fragment rerun) and read until it finished."""
        if not fragment_id:
            if page != self.page:
                self.page_hash = ""
            self.query = query if isinstance(query, str) else urlencode(query)
            self.page = page
        view, t0 = View(), time.perf_counter()
        await self._send(self.query, self.page, widgets, fragment_id)
        deadline = t0 + timeout
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), max(1.0, deadline - time.perf_counter()))
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = fm.WhichOneof("type")
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                el = fm.delta.new_element
                what = el.WhichOneof("type")
                if what == "exception":
                    view.exceptions.append(f"{el.exception.type}: {el.exception.message}")
                elif what == "alert":
                    view.alerts.append(el.alert.body)
                elif what == "markdown":
                    view.markdown.append(el.markdown.body)
                elif what == "progress":
                    view.progress.append(el.progress.text)
                elif what in ("plotly_chart",):
                    view.charts += 1
                elif what == "button":
                    view.buttons[el.button.label] = (el.button.id, el.button.disabled)
                elif what == "number_input":
                    view.numbers[el.number_input.label] = el.number_input.id
                elif what == "radio":
                    view.radios[el.radio.label] = (el.radio.id, list(el.radio.options))
            elif kind == "navigation":  # the page this run shows (st.navigation), as the browser records it
                self.page_hash = fm.navigation.page_script_hash
            elif kind == "auto_rerun":
                self.fragments[fm.auto_rerun.fragment_id] = fm.auto_rerun.interval
            elif kind == "script_finished":
                if fm.script_finished in FINISHED:
                    view.finished = True
                    view.seconds = time.perf_counter() - t0
                    return view
                if fm.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    view.exceptions.append("compile error")
                    view.seconds = time.perf_counter() - t0
                    return view
                # FINISHED_EARLY_FOR_RERUN: the script asked for a rerun (st.rerun); keep reading

    async def click(self, label: str, before: View, timeout: float = 300, keep=()) -> View:
        """Press the button ``label`` of the page ``before`` showed (``keep``: other widget states to send along,
        as a browser sends every widget's value with a click)."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        widget_id, _ = before.buttons[label]
        ws = WidgetState(id=widget_id, trigger_value=True)
        return await self.run(self.query, self.page, widgets=[*keep, ws], timeout=timeout)

    async def pick(self, label: str, index: int, before: View, timeout: float = 300) -> tuple[View, object]:
        """Pick option ``index`` of the radio ``label`` of the page ``before`` showed; returns the view and the
        widget state (to send along with later clicks)."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        widget_id, options = before.radios[label]
        ws = WidgetState(id=widget_id, string_value=options[index])  # a radio's value is its option's label
        return await self.run(self.query, self.page, widgets=[ws], timeout=timeout), ws

    async def type_number(self, label: str, value: int, before: View) -> View:
        """Type the integer ``value`` into the number input ``label`` of the page ``before`` showed."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        return await self.run(self.query, self.page, widgets=[WidgetState(id=before.numbers[label], int_value=value)])

    async def refresh_fragments(self) -> list[View]:
        """Rerun every live fragment once (what the browser does every ``interval`` seconds)."""
        return [await self.run(fragment_id=fid) for fid in list(self.fragments)]


WAITING = ("ahead of you", "you are next")  # the English queue notes (ui/strings/server.py)


def queued(view: View) -> bool:
    """The view shows the Training lab's place-in-line note."""
    return any(w in a for a in view.alerts for w in WAITING)


async def follow_run(s: Student, record: dict, keep_going) -> None:
    """Keep a Training lab tab's live panel updating once a second, as a browser does, while ``keep_going()``.

    Updates ``record``: ``queued`` (a place-in-line note was seen), ``step`` (the highest step shown),
    ``exceptions``, ``finished_run`` and ``result`` (the result message, once the run ended and the page reran
    without the live panel).
    """
    while keep_going():
        await asyncio.sleep(1.0)
        for f in await s.refresh_fragments():
            record["exceptions"] += f.exceptions
            waiting = queued(f)
            record["queued"] |= waiting
            record["step"] = max(record["step"], step_of(f) or 0)
            if not waiting and not f.progress:  # the run ended: the page reran without the live panel
                record["finished_run"] = True
                record["result"] = next((a for a in f.alerts if "steps" in a), None)
        if record["finished_run"]:
            return


def step_of(view: View) -> Optional[int]:
    """The step number of a Training lab progress text ("Step 12 / 300 ..." / "第 12 / 300 步")."""
    for text in view.progress:
        m = re.search(r"(\d+)\s*/\s*\d+", text)
        if m:
            return int(m.group(1))
    return None
