"""Every Python example in README.md runs as written."""

import re
from pathlib import Path

import pytest

import graphclust as gc

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_block_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    G, S, _, _ = gc.datasets.load_demo()
    gc.write_graphml("problem.graphml", G, S)  # the file the GraphML example reads
    exec(compile(code, str(README), "exec"), {})


def test_graphml_doc_example_parses():
    text = (README.parent / "docs" / "graphml.md").read_text()
    (xml,) = re.findall(r"```xml\n(.*?)```", text, flags=re.S)
    G, S = gc.parse_graphml(xml)
    assert G.nodes["a"]["features"] == [0.5, 1.25] and G["a"]["b"]["weight"] == 0.9
    assert S.edges() == [("a", "c", float("-inf"))] and S.seeds == {"a": "fg"}
