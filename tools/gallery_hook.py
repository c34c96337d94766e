"""The gallery: every notebook in ``examples/``, executed and rendered as a site page.

``mkdocs.yml`` names this file under ``hooks:``. When mkdocs collects the site's files
(``on_files``), every ``examples/NN_name.ipynb`` is executed with nbclient in a fresh
kernel and becomes

* ``gallery/NN_name.md``: markdown cells as they are (display math ``$$...$$`` drawn
  by matplotlib's mathtext as an SVG, so the page needs no JavaScript or network), code
  cells as Python blocks, printed output as text blocks, figures as PNG files;
* ``gallery/NN_name/fig-N.png``: the figures, and ``gallery/NN_name/thumbnail.png``,
  the figure the gallery index shows (the first figure of the cell tagged
  ``gallery-thumbnail``, else the notebook's first figure);
* ``gallery/NN_name.ipynb``: the stored notebook, to download.

The notebooks in ``examples/`` stay without outputs. Two environment variables steer
the build:

``GRAPHCLUST_NB_SMALL=1``
    passed to the kernels: each notebook runs on small data (what CI uses); full size
    otherwise.
``GRAPHCLUST_GALLERY_FROM=folder``
    render the notebooks of that folder as they are, without executing anything: a
    folder of notebooks executed beforehand (the test suite passes the ones
    ``tests/test_notebooks.py`` executed), or ``examples`` itself for a quick build
    while writing prose (pages then show code without outputs). ``mkdocs serve``
    rebuilds on every change, so use it there:
    ``GRAPHCLUST_GALLERY_FROM=examples mkdocs serve``.

A cell that raises fails the build, with the cell's traceback.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GALLERY = "gallery"  # folder of the generated pages, inside the site
THUMBNAIL_TAG = "gallery-thumbnail"
CELL_TIMEOUT = 900  # seconds per cell (full size runs longest)

_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)


def notebooks(folder=EXAMPLES):
    """The gallery's notebooks, in order: ``NN_*.ipynb`` in ``folder``."""
    return sorted(Path(folder).glob("[0-9][0-9]_*.ipynb"))


@contextlib.contextmanager
def kernel_environment(small):
    """Environment for executing notebooks: ``GRAPHCLUST_NB_SMALL`` set, matplotlib
    without a display, this checkout first on the kernel's ``PYTHONPATH`` (the gallery
    shows the code the site documents, whatever else is installed), and a ``python3``
    kernel spec (in a private Jupyter path) that runs this interpreter, whatever kernels
    the machine has."""
    with tempfile.TemporaryDirectory(prefix="gallery-jupyter-") as tmp:
        spec = Path(tmp) / "kernels" / "python3"
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            # figures at twice the resolution (shown at their size), no kernel log chatter
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                     "--InlineBackend.figure_formats=retina", "--IPKernelApp.log_level=ERROR"],
            "display_name": "Python 3", "language": "python",
        }))
        # the kernel runs in a temporary folder: relative entries would point there
        paths = [str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        env = {
            "PYTHONPATH": os.pathsep.join(dict.fromkeys([str(ROOT), *paths])),
            "GRAPHCLUST_NB_SMALL": "1" if small else "0",
            "MPLBACKEND": "Agg",
            "JUPYTER_PATH": tmp,
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            yield
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def execute(path, timeout=CELL_TIMEOUT):
    """Execute one notebook (call inside :func:`kernel_environment`) and return it with
    its outputs. The kernel's working directory is a fresh temporary folder, so files
    a notebook writes go nowhere. Raises nbclient's ``CellExecutionError`` (naming the
    cell and its traceback) when a cell fails."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="gallery-run-") as cwd:
        client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=timeout,
                                         resources={"metadata": {"path": cwd}})
        client.execute()
    return nb


def _math_svg(tex):
    """Display math as an SVG drawn by matplotlib's mathtext."""
    from matplotlib import mathtext
    from matplotlib.font_manager import FontProperties

    buf = io.BytesIO()
    mathtext.math_to_image(f"${' '.join(tex.split())}$", buf, prop=FontProperties(size=14), format="svg", dpi=100)
    return buf.getvalue()


def _fence(text, lang="text"):
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}\n"


def _printed(text):
    """Printed text as the reader sees it: carriage-return updates (progress bars)
    keep their last state, ANSI colour codes are dropped."""
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def _outputs(cell, stem):
    """A code cell's visible outputs in order, as ``("text", str)`` or ``("png", (bytes,
    width in CSS pixels or None))``;
    consecutive printed text comes as one piece. An error output raises."""
    printed = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            printed.append(out.get("text", ""))
            continue
        if printed:
            yield "text", _printed("".join(printed))
            printed = []
        if kind == "error":
            raise RuntimeError(f"{stem}: a cell raised {out.get('ename')}: {out.get('evalue')}")
        data = out.get("data", {})
        if "image/png" in data:
            width = out.get("metadata", {}).get("image/png", {}).get("width")
            yield "png", (base64.b64decode(data["image/png"]), width)
        elif "text/plain" in data:
            yield "text", data["text/plain"]
    if printed:
        yield "text", _printed("".join(printed))


def to_markdown(nb, stem):
    """A notebook as a markdown page plus the files it refers to.

    Returns ``(markdown, files, thumbnail)``: ``files`` maps names relative to the
    page's folder (``stem/fig-1.png``, ...) to bytes; ``thumbnail`` is the name of the
    figure chosen for the gallery index, or None when the notebook shows none.
    """
    parts, files, figures, tagged = [], {}, [], None

    def draw_math(match):
        name = f"{stem}/math-{sum(n.startswith(f'{stem}/math-') for n in files) + 1}.svg"
        files[name] = _math_svg(match[1])
        return f'\n![{" ".join(match[1].split())}]({name}){{ .gallery-math }}\n'

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            parts.append(_MATH.sub(draw_math, cell.source) + "\n")
        elif cell.cell_type == "code":
            if cell.source.strip():
                parts.append(_fence(cell.source, "python"))
            for kind, value in _outputs(cell, stem):
                if kind == "text":
                    if value.strip():
                        parts.append(_fence(value))
                    continue
                png, width = value
                name = f"{stem}/fig-{len(figures) + 1}.png"
                files[name] = png
                figures.append(name)
                if tagged is None and THUMBNAIL_TAG in cell.get("metadata", {}).get("tags", []):
                    tagged = name
                size = f' width="{int(width)}"' if width else ""
                # a click opens the figure at full resolution
                parts.append(f"[![figure {len(figures)}]({name}){{ .gallery-figure{size} }}]({name})\n")
    # no table of contents on the right: the figures get the page's width
    page = "---\nhide:\n  - toc\n---\n\n" + "\n".join(parts)
    return page, files, tagged or (figures[0] if figures else None)


def _placeholder_png():
    """A grey tile standing in for a thumbnail when a notebook was not executed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(3, 2), dpi=50)
    fig.text(0.5, 0.5, "not executed", ha="center", va="center", color="0.4")
    fig.patch.set_facecolor("0.9")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def gallery_files(folder=None, small=None, log=print):
    """Every generated file of the gallery: ``{site path: bytes or str}``.

    ``folder``: render the notebooks found there as they are; None executes the ones in
    ``examples/`` (``small`` defaults to ``GRAPHCLUST_NB_SMALL``).
    """
    import nbformat

    if small is None:
        small = os.environ.get("GRAPHCLUST_NB_SMALL", "0") == "1"
    out, placeholder = {}, None
    for path in notebooks():
        stem = path.stem
        if folder is None:
            start = time.perf_counter()
            with kernel_environment(small):
                nb = execute(path)
            log(f"gallery: executed {path.name} ({'small' if small else 'full size'}) "
                f"in {time.perf_counter() - start:.1f} s")
        else:
            given = Path(folder) / path.name
            if not given.is_file():
                raise FileNotFoundError(f"GRAPHCLUST_GALLERY_FROM={folder}: no {path.name} there")
            nb = nbformat.read(given, as_version=4)
        markdown, files, thumbnail = to_markdown(nb, stem)
        download = f"[Download the notebook]({stem}.ipynb) (stored without outputs; run it with Jupyter)."
        out[f"{GALLERY}/{stem}.md"] = f"{markdown}\n---\n\n{download}\n"
        out.update({f"{GALLERY}/{name}": data for name, data in files.items()})
        if thumbnail is not None:
            out[f"{GALLERY}/{stem}/thumbnail.png"] = files[thumbnail]
        else:
            placeholder = placeholder or _placeholder_png()
            out[f"{GALLERY}/{stem}/thumbnail.png"] = placeholder
        out[f"{GALLERY}/{stem}.ipynb"] = path.read_bytes()
    return out


# -- mkdocs hook ---------------------------------------------------------------------

def on_files(files, config):
    """Add the gallery's pages, figures and notebooks to the site's files."""
    import logging

    from mkdocs.structure.files import File

    folder = os.environ.get("GRAPHCLUST_GALLERY_FROM") or None
    if folder is not None and not Path(folder).is_absolute():
        folder = ROOT / folder
    log = logging.getLogger("mkdocs.hooks.gallery").info
    for src_uri, content in gallery_files(folder, log=log).items():
        if files.get_file_from_path(src_uri) is not None:
            raise FileExistsError(f"docs/{src_uri} exists; the gallery generates it")
        files.append(File.generated(config, src_uri, content=content))
    return files
