"""Public names imported on first use (PEP 562), as scikit-image and SciPy do.

A package lists its public imports once, under ``if TYPE_CHECKING:`` in its
``__init__.py``, where static tools (documentation, IDEs, type checkers) read them;
:func:`attach` reads the same lines and imports each name when it is first used. A
script that only segments images then loads neither scikit-learn nor networkx (about
100 MiB of memory), and ``import graphclust`` takes a fraction of the time.
"""

import ast
import importlib


def _listed_imports(init_file):
    """``({name: module}, {submodule})`` of the relative imports under ``if TYPE_CHECKING:``."""
    with open(init_file, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    where, submodules = {}, set()
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level == 1:
                    for alias in stmt.names:
                        if stmt.module is None:
                            submodules.add(alias.name)
                        else:
                            where[alias.asname or alias.name] = stmt.module
    return where, submodules


def attach(package, init_file):
    """``(__getattr__, __dir__)`` for the package ``package`` (its ``__name__``) whose
    ``__init__.py`` is ``init_file``: a name it lists is imported from its module when
    first read, and any other submodule by its name (as after an eager import)."""
    where, submodules = _listed_imports(init_file)

    def __getattr__(name):
        if name in where:
            value = getattr(importlib.import_module(f".{where[name]}", package), name)
        else:
            try:
                value = importlib.import_module(f".{name}", package)
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":  # the submodule exists but an import inside it failed
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        vars(importlib.import_module(package))[name] = value  # looked up once
        return value

    def __dir__():
        return sorted(set(vars(importlib.import_module(package))) | set(where) | submodules)

    return __getattr__, __dir__
