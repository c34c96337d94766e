"""The package's layout shows its architecture: no import cycles between modules."""

import ast
from pathlib import Path

import graphclust

ROOT = Path(graphclust.__file__).parent


def _modules():
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ("graphclust",) + path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph():
    """Module -> the graphclust modules it imports (at module level or inside functions)."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                found = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
                targets.update(found or ([target] if target in modules else []))
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name in modules)
        targets.discard(name)
        graph[name] = targets
    return graph


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    # a module importing its own package (``from . import x``) only reads what the
    # package has set up so far; every other edge counts, package __init__ files too
    graph = {m: {t for t in ts if not (m + ".").startswith(t + ".")} for m, ts in import_graph().items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


#: modules holding estimators: thin compositions that share nothing private
ESTIMATOR_MODULES = {"graphclust.hmrf", "graphclust.rdpmeans", "graphclust.tvclust", "graphclust.dcp",
                     "graphclust.ddmmdpm", "graphclust.spectral.cosc", "graphclust.spectral.spectral",
                     "graphclust.bayesian"}


def private_imports():
    """``(importer, module, name)`` for every private name imported from another module."""
    modules = _modules()
    found = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                found += [(name, target, a.name) for a in node.names if a.name.startswith("_")
                          and f"{target}.{a.name}" not in modules]
    return found


def test_no_estimator_module_imports_a_private_name_from_another_estimator_module():
    bad = [(m, t, n) for m, t, n in private_imports() if t in ESTIMATOR_MODULES and m != t]
    assert bad == []


def test_the_private_import_finder_sees_private_imports():
    assert ("graphclust.rdpmeans", "graphclust.potentials.dpcentroids", "_log_floor") in private_imports()
