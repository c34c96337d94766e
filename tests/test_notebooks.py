"""Execute every notebook in examples/ at a small size (GRAPHCLUST_NB_SMALL=1), then
build the documentation site's gallery from those executed notebooks.

A notebook fails the test if any cell raises, or if it shows no picture: at least one
cell output must carry an ``image/png``. The gallery test builds the whole site with
``mkdocs build --strict`` from the notebooks executed here (each runs once) and checks
that every gallery page shows its figures.
"""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")
pytest.importorskip("skimage")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TIMEOUT = 300  # seconds per cell: on a cold numba cache a cell fitting every method compiles them all


def _load_gallery():
    spec = importlib.util.spec_from_file_location("gallery_hook", ROOT / "tools" / "gallery_hook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gallery = _load_gallery()
NOTEBOOKS = gallery.notebooks(EXAMPLES)
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Executes a notebook once (small size, private kernel spec running this
    interpreter) and keeps it, with its outputs, in a folder the gallery build reads."""
    folder = tmp_path_factory.mktemp("executed")
    done = {}

    def run(path):
        if path not in done:
            with gallery.kernel_environment(small=True):
                nb = gallery.execute(path, timeout=TIMEOUT)  # raises CellExecutionError with the traceback
            nbformat.write(nb, folder / path.name)
            done[path] = nb
        return done[path]

    run.folder = folder
    return run


def test_there_are_notebooks():
    """The examples folder holds the notebooks, committed without outputs, and the
    gallery takes every one of them."""
    assert len(NOTEBOOKS) >= 8, NOTEBOOKS
    assert NOTEBOOKS == sorted(EXAMPLES.glob("*.ipynb")), "every notebook is named NN_name.ipynb"
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{path.name} has outputs"
        assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), \
            f"{path.name} opens with a '# Title' markdown cell (the page title)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_shows_pictures(path, executed):
    """Every cell runs without an error and at least one output is a PNG picture."""
    nb = executed(path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]
    assert images, f"{path.name} shows no picture"


def test_gallery_pages_show_the_executed_figures(executed, tmp_path):
    """``mkdocs build --strict`` renders the executed notebooks as gallery pages: each
    page holds its code and every figure the notebook drew, as PNG files next to it,
    and the index shows one thumbnail per notebook."""
    counts = {}
    for path in NOTEBOOKS:
        nb = executed(path)
        counts[path.stem] = sum("image/png" in o.get("data", {})
                                for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "GRAPHCLUST_GALLERY_FROM": str(executed.folder)},
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    index = (site / "gallery" / "index.html").read_text(encoding="utf-8")
    for stem, n_figures in counts.items():
        page = site / "gallery" / stem / "index.html"
        assert page.is_file(), f"no gallery page for {stem}"
        html = page.read_text(encoding="utf-8")
        shown = re.findall(r'<img[^>]*src="(fig-\d+\.png)"', html)
        assert len(shown) == n_figures >= 1, (stem, shown, n_figures)
        for name in shown:
            assert (page.parent / name).read_bytes().startswith(PNG), (stem, name)
        assert 'class="language-python' in html or "highlight" in html, f"{stem}: no code on the page"
        assert "Traceback" not in html, stem
        thumb = site / "gallery" / stem / "thumbnail.png"
        assert thumb.read_bytes() in {(page.parent / name).read_bytes() for name in shown}, \
            f"{stem}: the thumbnail is none of the page's figures"
        assert f"{stem}/thumbnail.png" in index and f'href="{stem}/"' in index, f"index misses {stem}"
        assert (site / "gallery" / f"{stem}.ipynb").is_file()
