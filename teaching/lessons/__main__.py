"""``python -m teaching.lessons check [--json]``: validate every lesson file; exit 1 naming the file and step of each problem.

With ``--json`` it prints, per lesson, its id, titles and, per step, the page, the question in both languages,
the options and the index of the computed answer (the number itself for a numeric question).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m teaching.lessons", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate every lesson file and compute every answer key")
    check.add_argument("--json", action="store_true", help="print the lessons, questions, options and answers as JSON")
    args = parser.parse_args(argv)

    from teaching.lessons import LessonError, check_lesson, lesson_files, load, summary_json

    problems: list[str] = []
    out = []
    for path in lesson_files():
        try:
            lesson = load(path)
        except LessonError as err:
            problems.append(str(err))
            continue
        found, keys = check_lesson(lesson)
        problems += found
        out.append(summary_json(lesson, keys))
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=1))
    for p in problems:
        print(p, file=sys.stderr)
    if not args.json:
        n = sum(len(lesson["steps"]) for lesson in out)
        print(f"{len(out)} lesson(s), {n} steps: " + ("ok" if not problems else f"{len(problems)} problem(s)"),
              file=sys.stderr if problems else sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
