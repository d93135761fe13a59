"""A server killed with SIGKILL in the middle of a run takes the run's process (and multiprocessing's fork server
and resource tracker, which live as long as a child holds their pipes) with it, and the student who reconnects
to the restarted server is told that the run was lost, with its settings to restore.

The "server" is a child process that starts a real run through server.jobs (fork server, child process, run
record) and is then killed; the test polls for the processes to be gone within a generous deadline."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from server import runs
from tests.page_helpers import open_page

ROOT = Path(__file__).resolve().parents[2]

SERVER = r"""
import json, sys, time
import multiprocessing.forkserver as fs, multiprocessing.resource_tracker as rt
import torch
from engine import CausalLM, ModelConfig
from engine.train import TrainConfig
from server import jobs

tiny = ModelConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                   max_position_embeddings=32)
cfg = TrainConfig(steps=100_000, batch_size=2, seq_len=8, warmup_steps=0, eval_every=1000)  # minutes: never ends
job = jobs.start_training(CausalLM(tiny), torch.arange(2000) % 40, cfg, "zh", "k", record=True,  # the page's
                          settings={"steps": 4000, "lr": 0.003, "batch": 2, "seq_len": 8, "warmup": 0})  # controls
while len(job.history) < 3:
    if job.done:
        sys.exit(f"the run ended: {job.error}")
    time.sleep(0.05)
print(json.dumps({"run": job.id, "worker": job.pid, "fork_server": fs._forkserver._forkserver_pid,
                  "tracker": rt._resource_tracker._pid}), flush=True)
time.sleep(600)
"""


def _first_line(proc: subprocess.Popen, timeout: float) -> str:
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert line and line[0], f"the server child printed nothing in {timeout:.0f} s: {proc.stderr.read()[-2000:]}"
    return line[0]


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """Start the server child, wait for its run's third step, SIGKILL it; the pids, the run id, the record dir."""
    folder = tmp_path_factory.mktemp("runs")
    env = {**os.environ, runs.ENV_DIR: str(folder), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", SERVER], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        pids = json.loads(_first_line(proc, 240))
        assert all(runs.process_alive(pids[k]) for k in ("worker", "fork_server", "tracker")), pids
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(60)
        yield {**pids, "server": proc.pid, "dir": folder}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_run_process_fork_server_and_resource_tracker_end_with_a_killed_server(killed):
    deadline = time.monotonic() + 60  # generous: the child checks every second
    left = ["worker", "fork_server", "tracker"]
    while left and time.monotonic() < deadline:
        left = [k for k in left if runs.process_alive(killed[k])]
        time.sleep(0.2)
    survivors = {k: killed[k] for k in left}
    for pid in survivors.values():  # never leave them running for the rest of the suite
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not survivors, f"still running 60 s after the server was killed: {survivors}"


def test_the_record_names_the_run_as_lost_and_the_page_says_so(killed, monkeypatch):
    monkeypatch.setenv(runs.ENV_DIR, str(killed["dir"]))
    record = runs.read(killed["run"])
    assert record["status"] == "running" and record["pid"] == killed["server"]
    assert runs.fate(record) == "lost"
    at = open_page("train", query={"train.run": killed["run"]})
    warnings = [w.value for w in at.warning]
    assert any("was lost" in w and "restarted" in w and "around step" in w and "of 100,000" in w for w in warnings), warnings
    assert not any("No run yet" in c.value for c in at.caption)
    at.button(key="train.train_restore").click().run()
    assert at.session_state["train.steps"] == 4000 and at.session_state["train.seq_len"] == 8
    assert not at.exception
