"""The documentation site builds with ``mkdocs build --strict`` and its API pages hold
the docstrings (mkdocstrings actually ran, not just an empty template)."""

import html
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")
pytest.importorskip("material")

import graphclust as gc  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def page_text(path):
    """Visible text of an HTML page: tags and all whitespace dropped (inline markup
    such as ``<code>`` then cannot split a sentence)."""
    text = html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))
    return "".join(text.split())


def plain(fragment):
    """Docstring markup (``code``, *emphasis*, Sphinx roles as the site renders them)
    and whitespace dropped, as in page_text."""
    fragment = re.sub(r":(?:func|class|meth|attr|data|mod|obj|exc|ref):`(~?)([^`]+)`",
                      lambda m: m[2].rsplit(".", 1)[-1] if m[1] else m[2], fragment)
    return "".join(re.sub(r"``|\*|`", "", fragment).split())


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        # the gallery renders the stored notebooks as they are (code, no outputs): the
        # executed gallery is built and checked by tests/test_notebooks.py
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "GRAPHCLUST_GALLERY_FROM": str(ROOT / "examples")},
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def test_every_markdown_page_is_built(site):
    pages = sorted(p.relative_to(ROOT / "docs") for p in (ROOT / "docs").rglob("*.md"))
    assert Path("index.md") in pages and Path("guide.md") in pages
    for page in pages:
        built = site / (page.parent / "index.html" if page.name == "index.md" else page.with_suffix("") / "index.html")
        assert built.is_file(), f"{page} was not built"


def test_api_page_renders_the_docstring_of_segment(site):
    built = site / "api" / "segmentation" / "index.html"
    raw = built.read_text(encoding="utf-8")
    assert 'id="graphclust.segmentation.segment"' in raw
    text = page_text(built)
    doc = inspect.getdoc(gc.segmentation.segment)
    summary = plain(doc.split("\n\n")[0])
    assert summary in text
    # the numpy sections were parsed: parameter names and their descriptions appear
    params = inspect.signature(gc.segmentation.segment).parameters
    for name in ["image", "scribbles", "n_segments", "method", "random_state"]:
        assert name in params and name in text
    # the first description line of every documented parameter is on the page
    described = re.findall(r"^(\w+) : .*\n {4}(.+)$", doc, flags=re.M)
    assert len(described) >= 5
    for name, first_line in described:
        assert plain(first_line) in text, (name, first_line)


def test_api_pages_cover_the_public_estimators(site):
    text = "".join((site / "api" / "estimators" / "index.html").read_text(encoding="utf-8").split())
    for name in ["SpectralClustering", "COSC", "HMRF", "RDPMeans", "DPMeans", "TVClust", "DCP", "DDMMDPM", "MMDPM"]:
        assert f'id="graphclust.{name}"' in text or re.search(rf'id="graphclust\.[a-z_.]+\.{name}"', text), name


def test_sphinx_roles_are_rendered_as_code(site):
    # docs/griffe_rst.py turns :func:`~a.b.c` into `c`; no raw role may reach a page
    for page in (site / "api").rglob("index.html"):
        raw = page.read_text(encoding="utf-8")
        assert not re.search(r":(func|class|meth|attr|data|mod):`", raw), page
    data = (site / "api" / "data" / "index.html").read_text(encoding="utf-8")
    assert "<code>contract</code>" in data


def test_gallery_has_a_page_per_notebook(site):
    """Every notebook in examples/ is a gallery page, in the navigation and on the
    gallery index (mkdocs --strict already refuses a generated page left out of nav)."""
    notebooks = sorted((ROOT / "examples").glob("[0-9][0-9]_*.ipynb"))
    assert len(notebooks) >= 8
    index = (site / "gallery" / "index.html").read_text(encoding="utf-8")
    nav = (site / "index.html").read_text(encoding="utf-8")
    for path in notebooks:
        page = site / "gallery" / path.stem / "index.html"
        assert page.is_file(), path.name
        assert f'href="{path.stem}/"' in index, f"the gallery index does not link {path.stem}"
        assert f"gallery/{path.stem}/" in nav, f"{path.stem} is not in the navigation"
