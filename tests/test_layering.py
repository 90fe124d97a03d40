"""The layering of tidu, tenferro and tensor4all stays a layering: no import cycles between
their modules (function-local imports included), and no function-local imports
except of optional dependencies. tensor4all's subpackages have one order, written here
(:data:`TENSOR4ALL_LAYERS`) and in docs/architecture.md (checked to agree): each imports only
those below it. The order is drawn in docs/architecture.md."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OPTIONAL = {
    "cupy",
    "cupyx",
    "pyarrow",
    "matplotlib",
    "torch",
    "jax",
    "jaxlib",
    "hypothesis",
    "threadpoolctl",
    "cotengra",
    "distributed",
    "dask",
}


def _modules(package: str) -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, bool, int]]:
    """``(imported module, is function-local, line)`` for every import of a module
    of the same package (submodules named in ``from x import name`` count as
    imports of the submodule)."""
    tree = ast.parse(path.read_text())
    is_package = path.name == "__init__.py"
    package_of_module = name if is_package else name.rpartition(".")[0]
    local_nodes = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    local_nodes.add(id(inner))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_of_module.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = []
            for a in node.names:
                sub = f"{mod}.{a.name}"
                targets.append(sub if sub in modules else mod)
        else:
            continue
        for t in targets:
            while t and t not in modules and "." in t:
                t = t.rpartition(".")[0]
            if t in modules and t != name:
                out.append((t, id(node) in local_nodes, node.lineno))
    return out


def _function_local_imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import):
                    found += [(a.name, inner.lineno) for a in inner.names]
                elif isinstance(inner, ast.ImportFrom):
                    found.append(("." * inner.level + (inner.module or ""), inner.lineno))
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def _graph(package: str) -> dict[str, set[str]]:
    modules = _modules(package)
    return {name: {t for t, _, _ in _imports(name, path, modules)} for name, path in modules.items()}


def _local_imports(package: str) -> list[str]:
    bad = []
    for name, path in _modules(package).items():
        for mod, line in _function_local_imports(path):
            if mod.lstrip(".").split(".")[0] not in OPTIONAL or mod.startswith("."):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {mod}")
    return bad


@pytest.mark.parametrize("package", ["tidu", "tenferro", "tensor4all"])
def test_no_import_cycles(package):
    # a package's __init__ imports its modules; a module importing its own package
    # root would be an edge back to all of them
    assert _cycles(_graph(package)) == []


@pytest.mark.parametrize("package", ["tidu", "tenferro", "tensor4all"])
def test_function_local_imports_only_for_optional_dependencies(package):
    assert _local_imports(package) == []


def test_the_checker_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", ["tidu", "tenferro", "tensor4all"])
def test_no_imports_of_another_packages_private_modules(package):
    """A package uses another only through its public modules (``tenferro.checks``, not
    ``tenferro._shape``): private modules may change without notice."""
    others = {"tidu", "tenferro", "tensor4all"} - {package}
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            for n in names:
                parts = n.split(".")
                if parts[0] in others and any(p.startswith("_") for p in parts[1:]):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {n}")
    assert not offenders, offenders


#: tensor4all's subpackages (and top-level modules), bottom to top: each imports only those
#: before it in this list. ``docs/architecture.md`` lists the same order.
TENSOR4ALL_LAYERS = [
    "tools",  # errors, argument checks, threads, devices, output files
    "structured",  # structured and symmetric tensors, their dispatcher and kernels
    "symmetry",  # public face: groups and legs
    "sites",  # local spaces, conserved charges, Jordan-Wigner strings
    "linalg",  # public face (structured linalg) + truncation, canonical forms, eigensolvers, Krylov
    "operators",  # OpSum, its compilation to MPO tensors, term charges, gates
    "lattices",  # public: lattice geometries
    "networks",  # MPS, MPO, site chains, arithmetic, files, expectation values
    "models",  # public: model Hamiltonians
    "references",  # public: exact results to test against
    "measurements",  # public: densities, correlations, entanglement by sector
    "algorithms",  # the sweep engine, environments, backends; dmrg, tdvp, tebd, apply
    "spectra",  # dynamical correlations and spectral functions (time evolution, Chebyshev)
    "thermal",  # finite temperature: purification, thermodynamics as derivatives of ln Z, METTS
    "infinite",  # infinite systems: iMPS, infinite MPOs, VUMPS, iTEBD, transfer-matrix measurements
    "tci",  # tensor cross interpolation
    "quantics",  # quantics grids and tensor trains
    "trees",  # tree tensor networks: TreeTN, tree operators, tree sweeps, tree TCI, tree quantics
    "scans",  # parameter scans on Dask (the package; tensor4all.scan is the function)
    "cli",  # the command-line program
    "__main__",
    "__init__",
]


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_tensor4all_subpackages_import_only_what_lies_below():
    rank = {u: i for i, u in enumerate(TENSOR4ALL_LAYERS)}
    top = {p.stem for p in (ROOT / "tensor4all").iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    assert top == set(TENSOR4ALL_LAYERS), f"add or remove a layer: {sorted(top ^ set(TENSOR4ALL_LAYERS))}"
    wrong = []
    for module, targets in _graph("tensor4all").items():
        for target in targets:
            a, b = _unit(module), _unit(target)
            if a != b and rank[b] > rank[a]:
                wrong.append(f"{module} imports {target} ({a} lies below {b})")
    assert not wrong, wrong


def test_tensor4all_has_few_top_level_modules():
    """Public faces, ``__init__`` and ``__main__``; everything else lives in a subpackage."""
    modules = sorted(p.name for p in (ROOT / "tensor4all").glob("*.py"))
    assert len(modules) <= 15, modules


def test_architecture_doc_lists_the_same_order():
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## tensor4all", 1)[1].split("\n### ", 1)[0]  # its first table
    listed = [
        line.split("|")[1].strip().strip("`").split("/")[0].removesuffix(".py")
        for line in section.splitlines()
        if line.startswith("| `")
    ]
    assert listed == TENSOR4ALL_LAYERS, listed


def _doc_table(package: str) -> list[list[str]]:
    """The module table of ``package`` in docs/architecture.md, bottom to top: per row the
    modules it names (``_core.py``, ``_tensor``, ``einsum/``: the name without suffix or slash)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split(f"## {package}", 1)[1]
    rows: list[list[str]] = []
    for line in section.splitlines():
        if line.startswith("| `"):
            cell = line.split("|")[1]
            rows.append([n.split(" ")[0].removesuffix(".py").rstrip("/") for n in re.findall(r"`([^`]+)`", cell)])
        elif rows and not line.startswith("|"):
            break
    return rows


@pytest.mark.parametrize("package", ["tidu", "tenferro"])
def test_modules_import_only_what_the_doc_lists_above_them(package):
    """docs/architecture.md draws tidu's and tenferro's modules bottom to top: each names every
    module (a subpackage as one) and no module imports, at the top of its file, one listed
    below it (a row's modules may import each other)."""
    rank = {name: i for i, names in enumerate(_doc_table(package)) for name in names}
    modules = _modules(package)
    units = {m.split(".")[1] for m in modules if "." in m} - {"__main__"}
    assert units == set(rank), (
        f"list these in docs/architecture.md: {sorted(units - set(rank))}; gone: {sorted(set(rank) - units)}"
    )
    wrong = set()
    for module, path in modules.items():
        a = module.split(".")[1] if "." in module else "__init__"
        for target, local, line in _imports(module, path, modules):
            b = target.split(".")[1] if "." in target else "__init__"
            if not local and a in rank and b in rank and rank[b] > rank[a]:
                wrong.add(f"{path.relative_to(ROOT)}:{line} imports {target}, listed below {a}")
    assert not wrong, sorted(wrong)


@pytest.mark.parametrize("package", ["tidu", "tenferro", "tensor4all"])
def test_no_module_over_600_lines(package):
    """A module past ~500 lines is reviewed, and split by concern before 600 (STYLE.md)."""
    long = {
        str(p.relative_to(ROOT)): n
        for p in sorted((ROOT / package).rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > 600
    }
    assert not long, f"split these modules by concern: {long}"
