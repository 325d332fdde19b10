"""plboost's modules import one way: a walk over every import statement of the package (at the top of a module
or inside a function alike; those under ``if TYPE_CHECKING:`` are not run and do not count) finds no cycle."""

import ast
import re
import sys
from pathlib import Path

import plboost

PACKAGE = Path(plboost.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imported_modules(name: str, path: Path, known: dict) -> set[str]:
    """The plboost modules that ``name`` imports: ``from p import x`` counts as the submodule ``p.x`` when there is
    one, else as ``p``. A package's ``__init__`` runs before any of its submodules as Python imports them; like
    every tool of the kind, the walk leaves that implicit step out and counts what the statements name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()

    def visit(node):
        if _is_type_checking(node):
            return
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            submodules = {f"{module}.{alias.name}" for alias in node.names} & set(known)
            targets.update(submodules)
            if len(submodules) < len(node.names):  # names defined by the module itself
                targets.add(module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return {target for target in targets if target in known and target != name}


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported_modules(name, path, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_the_walk_sees_imports_inside_functions_and_relative_ones():
    graph = import_graph()
    assert "plboost.objectives" in graph["plboost.engines"]  # from ..objectives import ..., at the top
    assert "plboost.experiment.spec" in graph["plboost.experiment.running"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_plboost_has_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(component) for component in found)


def private_imports() -> list[str]:
    """Private names (``_x``, not a module) that one plboost module imports from another: each is a function or
    class that belongs where it is used, or should be public where it lives."""
    known = modules()
    found = []
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")
                module = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "plboost":
                module = node.module
            else:
                continue
            found += [f"{name}: from {module} import {alias.name}" for alias in node.names
                      if alias.name.startswith("_") and not alias.name.startswith("__")
                      and f"{module}.{alias.name}" not in known]
    return found


def test_no_module_imports_another_modules_private_names():
    assert private_imports() == []


def test_the_private_import_walk_finds_one(tmp_path, monkeypatch):
    package = tmp_path / "plboost"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_helpers.py").write_text("def _hidden(): pass\n")
    (package / "user.py").write_text("from . import _helpers\nfrom ._helpers import _hidden\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", package)
    assert private_imports() == ["plboost.user: from plboost._helpers import _hidden"]


#: the house's floors (docs/architecture.md): a module imports only from its own floor and the floors below;
#: the longest matching prefix gives a module's floor
FLOORS = {
    # 0: foundations, no plboost imports above them
    "plboost.errors": 0, "plboost._version": 0, "plboost._jit": 0, "plboost._numerics": 0, "plboost._random": 0,
    "plboost._queries": 0, "plboost._engine_registry": 0, "plboost._values": 0, "plboost._extras": 0,
    "plboost._constraints": 0, "plboost._writing": 0,
    # 1: kernels and what is computed from scores: objectives, metrics, significance tests
    "plboost.objectives": 1, "plboost.metrics": 1, "plboost.significance": 1, "plboost.policies": 1,
    "plboost.fairness": 1,
    # 2: data
    "plboost.data": 2, "plboost.clicks": 2,
    # 3: training, and what one training run needs around it
    "plboost.engines": 3, "plboost.tuning": 3, "plboost.records": 3, "plboost.outputs": 3, "plboost.cv": 3,
    # 4: experiments (comparisons of many runs)
    "plboost.experiment": 4, "plboost.winning": 4,
    # 5: the faces: the command, scikit-learn, the package
    "plboost.cli": 5, "plboost.click_command": 5, "plboost.__main__": 5, "plboost.sklearn": 5, "plboost": 5,
}


def floor_of(module: str) -> int:
    prefixes = [p for p in FLOORS if module == p or module.startswith(p + ".")]
    assert prefixes, f"{module} is on no floor: add it to FLOORS and to docs/architecture.md"
    return FLOORS[max(prefixes, key=len)]


def test_every_import_goes_to_the_same_floor_or_below():
    upward = [f"{source} (floor {floor_of(source)}) imports {target} (floor {floor_of(target)})"
              for source, targets in import_graph().items() for target in sorted(targets)
              if floor_of(target) > floor_of(source)]
    assert upward == []
    assert floor_of("plboost.objectives.plrank") == 1 and floor_of("plboost") == 5


#: the longest a function may be, in lines after its docstring, outside the compiled kernels (issue 36)
LONGEST_FUNCTION = 80


def function_lengths(path: Path) -> list[tuple[int, str]]:
    """(lines after the docstring, name) of every function in ``path`` but the compiled kernels (decorated with
    ``kernel`` or ``helper`` from plboost._jit, whose loops are written out for Numba)."""
    lengths = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if any(ast.unparse(d).split("(")[0] in ("kernel", "helper") for d in node.decorator_list):
            continue
        first = node.body[0]
        has_docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str) and len(node.body) > 1
        start = node.body[1].lineno if has_docstring else first.lineno
        lengths.append((node.end_lineno - start + 1, f"{module_name(path)}.{node.name} (line {node.lineno})"))
    return lengths


def test_no_function_outside_the_kernels_is_longer_than_80_lines():
    long = [f"{name}: {n} lines" for path in modules().values() for n, name in function_lengths(path)
            if n > LONGEST_FUNCTION]
    assert long == []


def test_the_length_walk_counts_after_the_docstring_and_skips_kernels(tmp_path, monkeypatch):
    path = tmp_path / "example.py"
    path.write_text('def f():\n    """Doc."""\n    a = 1\n    return a\n\n\n@kernel\ndef g():\n    return 1\n')
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "plboost")
    assert function_lengths(path) == [(2, "example.f (line 1)")]


_HISTORY = re.compile(r"\bissues? \d+|\b20\d\d-\d\d-\d\d\b", re.IGNORECASE)


def history_in_sources(package: Path) -> list[str]:
    """``path:line`` of every mention of an issue number or a date in ``package``'s sources."""
    return [f"{path.relative_to(package)}:{number}" for path in sorted(package.rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
            if _HISTORY.search(line)]


def test_the_sources_keep_no_history():
    """Docstrings and comments hold the math, the citation and the contract; issue numbers and the dates of one
    machine's measurements go to docs/benchmarks.md and docs/quality.md."""
    assert history_in_sources(PACKAGE) == []


def test_the_history_walk_finds_an_issue_and_a_date(tmp_path):
    (tmp_path / "a.py").write_text('"""Fast (issue 39)."""\n')
    (tmp_path / "b.py").write_text("x = 1  # measured 2026-11-27\ny = 2  # the tissue 3 is not one\n")
    assert history_in_sources(tmp_path) == ["a.py:1", "b.py:1"]
