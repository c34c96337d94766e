"""Execute every notebook in examples/ at a small size (GRAPHCLUST_NB_SMALL=1).

A notebook fails the test if any cell raises, or if it shows no picture: at least one
cell output must carry an ``image/png``.
"""

import json
import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")
pytest.importorskip("skimage")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))
TIMEOUT = 120  # seconds per cell


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """Environment for the kernels: small size, Agg backend, and a ``python3`` kernel
    spec that runs this interpreter (written to a private Jupyter path)."""
    from jupyter_client.kernelspec import KernelSpecManager

    kernels = tmp_path_factory.mktemp("jupyter") / "kernels" / "python3"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python",
    }))
    env = {
        "GRAPHCLUST_NB_SMALL": "1",
        "MPLBACKEND": "Agg",
        "JUPYTER_PATH": str(kernels.parent.parent),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    assert KernelSpecManager().get_kernel_spec("python3").argv[0] == sys.executable
    yield
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def test_there_are_notebooks():
    """The examples folder holds the five notebooks, committed without outputs."""
    assert len(NOTEBOOKS) >= 5, NOTEBOOKS
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{path.name} has outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_shows_pictures(path, kernel_env, tmp_path):
    """Every cell runs without an error and at least one output is a PNG picture."""
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=TIMEOUT,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError (with the traceback) when a cell fails
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]
    assert images, f"{path.name} shows no picture"
