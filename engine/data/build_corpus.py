"""Rebuild the bundled corpus files from Debian packages (needs apt-get and bible-kjv).

Not imported by the engine; kept so the corpus can be regenerated and audited.

Usage (as root on a Debian bookworm machine)::

    cd /tmp && apt-get download fortunes-zh && dpkg-deb -x fortunes-zh_*.deb x
    apt-get install -y bible-kjv            # pulls in bible-kjv-text
    python engine/data/build_corpus.py /tmp/x/usr/share/games/fortunes/tang300

Writes tang_poems.txt and english.txt next to this file.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def build_tang(src: Path) -> str:
    """strfile format: entries separated by '%' lines; colour escapes around title/author."""
    text = ANSI.sub("", src.read_text(encoding="utf-8"))
    poems = []
    for entry in re.split(r"^%$", text, flags=re.M):
        lines = [ln.rstrip() for ln in entry.split("\n")]
        lines = [ln for ln in lines if ln.strip()]
        if lines:
            poems.append("\n".join(lines))
    return "\n\n".join(poems) + "\n"


def build_english() -> str:
    """The Book of Genesis (KJV) via the `bible` program: one verse per line, blank line between chapters."""
    raw = subprocess.run(
        ["bible", "-f", "Gen1:1-Gen50:26"], check=True, capture_output=True, text=True
    ).stdout
    out = ["The First Book of Moses, called Genesis"]
    chapter = None
    for line in raw.splitlines():
        m = re.match(r"^Ge(\d+):(\d+) (.*)$", line)
        if not m:
            raise ValueError(f"unexpected line: {line!r}")
        if m.group(1) != chapter:
            chapter = m.group(1)
            out += ["", f"Chapter {chapter}", ""]
        out.append(m.group(3).strip())
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    (HERE / "tang_poems.txt").write_text(build_tang(Path(sys.argv[1])), encoding="utf-8")
    (HERE / "english.txt").write_text(build_english(), encoding="utf-8")
