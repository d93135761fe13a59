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
