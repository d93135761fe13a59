"""The layers hold: the engine loads no pandas/streamlit/plotly, analysis no streamlit/plotly, the server's resource
management no ui/pages/pandas/plotly and no Streamlit page API, each package imports only the layers below it, and
no import cycle.

Layering (docs/architecture.md): engine (torch) -> analysis (DataFrames) -> ui (figures, Streamlit state) -> pages;
beside analysis, below ui: settings (what a view's settings are, and the one function that builds a view from them)
and server (admission line, budget, jobs and their processes, run records, byte cache, start-up); below ui, above
analysis and settings: lessons (the lesson files, their answer keys, the check); beside them: classroom (the class
store).
The layer tests import every module of a package in a fresh interpreter (pkgutil walks the package, so a new
module is covered without touching this file) and report the first module that pulled a forbidden library in.
The cycle test reads the source with ``ast`` (module-level and function-local imports, relative imports
resolved), so a cycle hidden in a function body is found too.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]

# Imports the package and every module under it, one by one; prints the modules and, per forbidden library, the
# project module whose code imported it (found by a finder that looks at the importing frames; it finds nothing).
# A library only looked for (torch's optimizer probes for optional ones with ``find_spec``) and never loaded is
# not counted.
_IMPORT_ALL = """
import importlib, json, pkgutil, sys
package, forbidden = sys.argv[1], sys.argv[2].split(",")
first = {}

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name in forbidden and name not in first:
            frame = sys._getframe(1)
            while frame is not None and not frame.f_globals.get("__name__", "").startswith(package):
                frame = frame.f_back
            first[name] = frame.f_globals["__name__"] if frame is not None else "?"
        return None

sys.meta_path.insert(0, Watch())
root = importlib.import_module(package)
names = sorted(m.name for m in pkgutil.walk_packages(root.__path__, package + "."))
for name in names:
    importlib.import_module(name)
first = {name: mod for name, mod in first.items() if name in sys.modules}  # looked for is not loaded (probes)
print(json.dumps({"modules": [package] + names, "first_importer": first}))
"""


def import_everything(package: str, forbidden: tuple[str, ...]) -> dict:
    """Import ``package`` and all its modules in a fresh interpreter; which forbidden libraries got loaded."""
    proc = subprocess.run([sys.executable, "-c", _IMPORT_ALL, package, ",".join(forbidden)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"importing every module of {package} failed:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_engine_module_loads_torch_only_never_pandas_streamlit_or_plotly():
    result = import_everything("engine", ("pandas", "streamlit", "plotly"))
    assert "engine.model" in result["modules"] and len(result["modules"]) > 10  # the walk did find the modules
    assert not result["first_importer"], (
        "the engine must stay PyTorch-only; loaded by (library: first module that pulled it in): "
        f"{result['first_importer']}")


def test_every_analysis_module_loads_no_streamlit_or_plotly():
    result = import_everything("analysis", ("streamlit", "plotly"))
    assert "analysis.trace" in result["modules"]
    assert not result["first_importer"], (
        "analysis turns model outputs into DataFrames and never draws or touches Streamlit; loaded by: "
        f"{result['first_importer']}")


def test_settings_lessons_and_answers_load_no_streamlit_plotly_or_sqlalchemy():
    for package in ("settings", "teaching.lessons", "teaching.answers"):
        result = import_everything(package, ("streamlit", "plotly", "sqlalchemy"))
        assert len(result["modules"]) > 1, result["modules"]
        assert not result["first_importer"], (
            f"{package} is below ui: no Streamlit, no figures, no store; loaded by: {result['first_importer']}")


def test_the_teaching_wing_loads_no_streamlit_or_plotly():
    result = import_everything("teaching", ("streamlit", "plotly"))
    assert {"teaching.lessons", "teaching.answers.core", "teaching.classroom.store"} <= set(result["modules"])
    assert not result["first_importer"], (
        f"teaching/ is below ui (its Streamlit face is ui/teaching/); loaded by: {result['first_importer']}")


def test_every_server_module_loads_no_ui_pages_pandas_plotly_or_streamlit():
    result = import_everything("server", ("ui", "app_pages", "pandas", "plotly", "streamlit"))
    assert "server.jobs" in result["modules"] and "server.admission" in result["modules"]
    assert not result["first_importer"], (
        "server/ is the server's resource management below ui: it returns values and codes, never text or "
        f"figures, and imports no Streamlit at module level; loaded by: {result['first_importer']}")


def test_server_touches_streamlit_only_through_its_runtime_inside_functions():
    """The one Streamlit the server may use: ``streamlit.runtime`` (session liveness, the script cache), imported
    inside the function that needs it, so that importing ``server`` never loads Streamlit and no page API
    (``st.*`` elements, session state) is ever called from here."""
    offenders = []
    for path in sorted((ROOT / "server").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        local = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f)}
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                if name.split(".")[0] == "streamlit" and (id(node) not in local
                                                           or not name.startswith("streamlit.runtime")):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert not offenders, offenders


# Which project packages each layer may import (itself included), function-local imports counted too.
MAY_IMPORT = {"engine": {"engine"}, "analysis": {"analysis", "engine"}, "settings": {"settings", "engine"},
              "server": {"server", "engine"}, "teaching": {"teaching", "analysis", "settings", "engine"},
              "ui": {"ui", "server", "analysis", "settings", "teaching", "engine"},
              "app_pages": {"ui", "server", "analysis", "settings", "teaching", "engine"}}
# inside the teaching wing: the class store stands alone (SQLAlchemy), the answers know no lesson file
MAY_IMPORT_WITHIN = {"teaching.classroom": {"teaching.classroom"}, "teaching.answers": {"teaching.answers"}}


def against_layering(graph: dict[str, set[str]]) -> list[str]:
    """``module -> dependency`` for every import a layer may not make (MAY_IMPORT, MAY_IMPORT_WITHIN)."""
    def within(mod: str, dep: str) -> bool:
        wing = next((w for w in MAY_IMPORT_WITHIN if mod == w or mod.startswith(w + ".")), None)
        return wing is None or not dep.startswith("teaching") or any(
            dep == ok or dep.startswith(ok + ".") for ok in MAY_IMPORT_WITHIN[wing])

    return sorted(f"{mod} -> {dep}" for mod, deps in graph.items() for dep in deps
                  if dep.split(".")[0] not in MAY_IMPORT[mod.split(".")[0]] or not within(mod, dep))


def test_a_deferred_import_back_up_is_caught(tmp_path):
    """An import hidden in a function body that runs back up (lessons -> ui, settings -> ui, the class store ->
    the lessons) fails the layering."""
    sources = {"teaching/__init__.py": "",
               "teaching/lessons/__init__.py": "def values():\n    from ui.state import FIXED_KEY\n    return FIXED_KEY\n",
               "teaching/classroom/__init__.py": "def grade():\n    from teaching.lessons import values\n",
               "settings/__init__.py": "def build():\n    import ui.caches\n",
               "ui/__init__.py": "", "ui/state.py": "FIXED_KEY = 'cfg.fixed'\n", "ui/caches.py": "import settings\n"}
    for name, text in sources.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert against_layering(import_graph(module_files(tmp_path))) == [
        "settings -> ui.caches", "teaching.classroom -> teaching.lessons", "teaching.lessons -> ui.state"]


def test_each_package_imports_only_the_layers_below_it():
    graph = import_graph(module_files())
    assert {m.split(".")[0] for m in graph} == set(PACKAGES)  # every package was read
    wrong = against_layering(graph)
    assert not wrong, "imports against the layering (docs/architecture.md):\n" + "\n".join(wrong)
    pages = [ROOT / "app.py", ROOT / "explorer.py", *sorted((ROOT / "app_pages").glob("*.py"))]
    page_imports = {path.name: {(n.module or "").split(".")[0] for n in ast.walk(ast.parse(path.read_text()))
                                if isinstance(n, ast.ImportFrom)}
                               | {a.name.split(".")[0] for n in ast.walk(ast.parse(path.read_text()))
                                  if isinstance(n, ast.Import) for a in n.names}
                    for path in pages}
    assert not [name for name, deps in page_imports.items() if "app_pages" in deps], page_imports


# ---- import cycles ----------------------------------------------------------------------------------------

# settings: what a view's settings are; teaching: the lessons, their answers and the class store; app_pages: wiring
PACKAGES = ("engine", "analysis", "settings", "server", "teaching", "ui", "app_pages")


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under the layered packages (``__init__`` = the package)."""
    files = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")) if (root / package).is_dir() else ():
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            files[".".join(parts)] = path
    return files


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of import nodes inside ``if TYPE_CHECKING:`` blocks (never executed, so never part of a cycle)."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports, anywhere in its body (module level or inside a function).

    ``import a.b.c`` points at the longest prefix that is a project module; ``from a import b`` at the module
    ``a.b`` when it exists, else at ``a``; relative imports are resolved against the importing module's package.
    """
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skip = _type_checking_only(tree)
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    prefixes = (".".join(parts[:k]) for k in range(len(parts), 0, -1))
                    deps.update(next(([p] for p in prefixes if p in files), []))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = package[: len(package) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for alias in node.names:
                    if f"{base}.{alias.name}" in files:
                        deps.add(f"{base}.{alias.name}")
                    elif base in files:
                        deps.add(base)
        deps.discard(mod)
        graph[mod] = deps
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first search closes, each as ``[a, b, ..., a]`` (one per back edge)."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(u: str) -> None:
        state[u] = 1
        path.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                cycles.append(path[path.index(v):] + [v])
            elif v not in state:
                visit(v)
        path.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u)
    return cycles


def test_import_graph_resolves_relative_and_function_local_imports_and_names_the_cycle(tmp_path):
    sources = {
        "engine/__init__.py": "from .a import f\n",
        "engine/a.py": "def f():\n    from .sub import g  # function-local, relative\n",
        "engine/sub/__init__.py": "from . import c\n",
        "engine/sub/c.py": ("from typing import TYPE_CHECKING\nimport engine.a.missing\nfrom ..a import f\n"
                            "if TYPE_CHECKING:\n    from engine.sub import d\n"),
        "analysis/__init__.py": "import numpy\n",
        "ui/__init__.py": "from engine.sub import c\n",
    }
    for name, text in sources.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(module_files(tmp_path))
    assert graph == {"engine": {"engine.a"}, "engine.a": {"engine.sub"}, "engine.sub": {"engine.sub.c"},
                     "engine.sub.c": {"engine.a"}, "analysis": set(), "ui": {"engine.sub.c"}}
    assert find_cycles(graph) == [["engine.a", "engine.sub", "engine.sub.c", "engine.a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_engine_analysis_server_ui():
    graph = import_graph(module_files())
    assert len(graph) > 30 and "analysis.trace" in graph["analysis.norms"]  # the real packages were read
    cycles = find_cycles(graph)
    assert not cycles, "import cycles (each closes where it starts):\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_every_streamlit_cache_lives_in_ui_caches():
    """A page is wiring and ui/ draws: every ``st.cache_data`` / ``st.cache_resource`` is in ``ui/caches/``
    (docs/architecture.md), where its key is one decision."""
    offenders = []
    for path in [ROOT / "app.py", ROOT / "explorer.py", *sorted((ROOT / "app_pages").glob("*.py")), *sorted((ROOT / "ui").rglob("*.py"))]:
        if (ROOT / "ui" / "caches") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("cache_data", "cache_resource"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders
