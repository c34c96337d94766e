"""Every Python example in README.md and docs/*.md runs as written."""

import re
from pathlib import Path

import pytest

import graphclust as gc

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(python_blocks(ROOT / "README.md")) >= 3


@pytest.mark.parametrize("path", [p for p in DOCS if python_blocks(p)], ids=lambda p: p.name)
def test_doc_examples_run(path, tmp_path, monkeypatch):
    """Blocks of one page run in order in one namespace, as a reader would paste them."""
    monkeypatch.chdir(tmp_path)
    G, S, _, _ = gc.datasets.load_demo()
    gc.write_graphml("problem.graphml", G, S)  # the file the GraphML example reads
    namespace = {}
    # a page may register an engine (docs/architecture.md): keep it out of later tests
    before = dict(gc.inference.ENGINES)
    try:
        for code in python_blocks(path):
            exec(compile(code, str(path), "exec"), namespace)
    finally:
        gc.inference.ENGINES.clear()
        gc.inference.ENGINES.update(before)


def test_graphml_doc_example_parses():
    text = (ROOT / "docs" / "graphml.md").read_text()
    (xml,) = re.findall(r"```xml\n(.*?)```", text, flags=re.S)
    G, S = gc.parse_graphml(xml)
    assert G.nodes["a"]["features"] == [0.5, 1.25] and G["a"]["b"]["weight"] == 0.9
    assert S.edges() == [("a", "c", float("-inf"))] and S.seeds == {"a": "fg"}
