"""Every Python example in README.md and docs/*.md runs as written, and every result it
claims in a ``# -> value`` comment is what the code gives."""

import contextlib
import io
import re
from pathlib import Path

import pytest

import graphclust as gc

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


_CLAIM = re.compile(r"^(?P<indent>\s*)(?P<code>\S.*?)\s*#\s*->\s*(?P<expected>.+?)\s*$")


def with_claims_checked(code):
    """The block with every ``expr  # -> expected`` line turned into a check: the
    value's repr (or what a ``print(...)`` line prints) must match ``expected``, where
    ``...`` stands for anything and ``: why`` after it is an explanation."""
    out = []
    for line in code.splitlines():
        m = _CLAIM.match(line)
        if m is None:
            out.append(line)
            continue
        expected = m["expected"].split(": ", 1)[0]
        call = "_printed" if m["code"].startswith("print(") else "_value"
        out.append(f"{m['indent']}_claim({call}(lambda: ({m['code']})), {expected!r})")
    return "\n".join(out)


def _value(thunk):
    return repr(thunk())


def _printed(thunk):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        thunk()
    return buffer.getvalue().strip()


def _claim(got, expected):
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    assert re.fullmatch(pattern, got, flags=re.S), f"the page says {expected!r}, the code gives {got!r}"


def test_claims_are_checked():
    ns = {"_claim": _claim, "_value": _value, "_printed": _printed}
    exec(with_claims_checked("x = (1, 2.5)\nx  # -> (1, ...): a tuple\nprint(x[0])  # -> 1"), ns)
    with pytest.raises(AssertionError, match="the page says '3'"):
        exec(with_claims_checked("print(1 + 1)  # -> 3"), ns)


def test_readme_has_examples():
    assert len(python_blocks(ROOT / "README.md")) >= 3


@pytest.mark.parametrize("path", [p for p in DOCS if python_blocks(p)], ids=lambda p: p.name)
def test_doc_examples_run(path, tmp_path, monkeypatch):
    """Blocks of one page run in order in one namespace, as a reader would paste them."""
    monkeypatch.chdir(tmp_path)
    G, S, _, _ = gc.datasets.load_demo()
    gc.write_graphml("problem.graphml", G, S)  # the file the GraphML example reads
    namespace = {"_claim": _claim, "_value": _value, "_printed": _printed}
    # a page may register an engine (docs/architecture.md): keep it out of later tests
    before = dict(gc.inference.ENGINES)
    try:
        for code in python_blocks(path):
            exec(compile(with_claims_checked(code), str(path), "exec"), namespace)
    finally:
        gc.inference.ENGINES.clear()
        gc.inference.ENGINES.update(before)


def test_graphml_doc_example_parses():
    text = (ROOT / "docs" / "graphml.md").read_text()
    (xml,) = re.findall(r"```xml\n(.*?)```", text, flags=re.S)
    G, S = gc.parse_graphml(xml)
    assert G.nodes["a"]["features"].tolist() == [0.5, 1.25] and G["a"]["b"]["weight"] == 0.9
    assert S.edges() == [("a", "c", float("-inf"))] and S.seeds == {"a": "fg"}
