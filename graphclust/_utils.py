"""Small helpers shared across modules: randomness, optional imports, atomic writes."""

import importlib
import numbers
import os
import sys
import tempfile
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp

from .errors import InvalidFeaturesError, InvalidParameterError, MissingDependencyError

__all__ = [
    "check_random_state",
    "optional_import",
    "atomic_write",
    "check_int",
    "check_float",
    "check_feature_matrix",
    "sq_distances",
]


def check_random_state(random_state):
    """Turn ``None``, an int, a ``SeedSequence`` or a ``Generator`` into a ``Generator``.

    A ``Generator`` is returned as is, so that one stream can be threaded through
    several calls; ``None`` gives fresh OS entropy.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise InvalidParameterError(f"random_state must be >= 0, got {random_state}")
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31))
    raise InvalidParameterError(
        f"random_state must be None, an int or a numpy Generator, got {type(random_state).__name__}"
    )


def optional_import(module, extra, purpose):
    """Import ``module`` or raise :class:`MissingDependencyError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{purpose} needs the optional dependency {module.split('.')[0]}: "
            f"pip install 'graphclust[{extra}]'"
        ) from exc


def check_int(value, name, *, low=None, high=None):
    """Validate an integer parameter and return it as ``int``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidParameterError(f"{name} must be an int, got {value!r}")
    if low is not None and value < low:
        raise InvalidParameterError(f"{name} must be >= {low}, got {value}")
    if high is not None and value > high:
        raise InvalidParameterError(f"{name} must be <= {high}, got {value}")
    return int(value)


def check_float(value, name, *, low=None, high=None, low_open=False, allow_inf=False):
    """Validate a real parameter and return it as ``float``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if np.isnan(value) or (np.isinf(value) and not allow_inf):
        raise InvalidParameterError(f"{name} must be finite, got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        op = ">" if low_open else ">="
        raise InvalidParameterError(f"{name} must be {op} {low}, got {value}")
    if high is not None and value > high:
        raise InvalidParameterError(f"{name} must be <= {high}, got {value}")
    return value


@contextmanager
def atomic_write(path, mode="wb"):
    """Open a temporary file beside ``path`` and rename it into place on success.

    If the block raises (or the process dies), ``path`` keeps its old content and the
    temporary file is removed.
    """
    from .errors import OutputFileError

    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise OutputFileError(f"cannot write {path}: the folder {directory} does not exist", path=path)
    if os.path.isdir(path):
        raise OutputFileError(f"cannot write {path}: it is a folder", path=path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix="-" + os.path.basename(path), dir=directory)
    except OSError as exc:  # e.g. no write permission in the folder
        raise OutputFileError(f"cannot write {path}: {exc.strerror or exc}", path=path) from None
    try:
        # mkstemp creates 0600 files; give the result the permissions a plain open()
        # would (the old file's mode when replacing one, else 0666 minus the umask)
        try:
            mode_bits = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode_bits = 0o666 & ~umask
        os.chmod(tmp, mode_bits)
        with os.fdopen(fd, mode) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def check_feature_matrix(X, *, allow_1d=False, squarable=True):
    """Return X as a finite float64 (n_samples, n_features) array, naming a bad row.
    A 1-D ``X`` is refused, as scikit-learn does (one feature or one sample?), unless
    ``allow_1d`` reads it as one feature (the graph builders' points on a line).
    ``squarable``: refuse entries beyond :data:`MAX_FEATURE_MAGNITUDE`, whose squares
    overflow (the graph builders rescale instead and pass False)."""
    if sp.issparse(X):
        raise InvalidFeaturesError("X is a sparse matrix; the graph builders need a dense array (X.toarray())")
    if is_graph(X):
        raise InvalidFeaturesError("X is a networkx graph; pass a feature array (n_samples, n_features)")
    if isinstance(X, (str, bytes)):
        raise InvalidFeaturesError(f"X is the string {X!r}; expected a numeric array (n_samples, n_features)")
    try:
        complex_values = np.iscomplexobj(X)
    except (TypeError, ValueError):  # ragged rows: reported below
        complex_values = False
    if complex_values:  # float64 would silently drop the imaginary parts
        raise InvalidFeaturesError("Complex data not supported: X has complex values; features must be real numbers")
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        _raise_bad_row(X)
    if arr.ndim == 1 and allow_1d:
        arr = arr[:, None]
    if arr.ndim == 1:
        raise InvalidFeaturesError(
            f"X must be 2-D (n_samples, n_features), got a 1-D array of shape {arr.shape}. Reshape your data: "
            "X.reshape(-1, 1) for one feature, X.reshape(1, -1) for one sample")
    if arr.ndim != 2:
        raise InvalidFeaturesError(f"X must be 2-D (n_samples, n_features), got an array of shape {arr.shape}")
    if arr.shape[0] == 0:
        raise InvalidFeaturesError(
            f"0 sample(s) (shape={arr.shape}) while a minimum of 1 is required: X has no rows to cluster")
    if arr.shape[1] == 0:
        raise InvalidFeaturesError(
            f"0 feature(s) (shape={arr.shape}) while a minimum of 1 is required: X has no columns")
    if not np.isfinite(arr.sum()) and not np.isfinite(arr).all():
        r, c = (int(v) for v in np.argwhere(~np.isfinite(arr))[0])
        what = "NaN" if np.isnan(arr[r, c]) else ("inf" if arr[r, c] > 0 else "-inf")
        raise InvalidFeaturesError(f"row {r} of X has {what} in column {c}; features must be finite", node=r)
    top = float(np.abs(arr).max())
    if squarable and top > MAX_FEATURE_MAGNITUDE:  # squared distances, sums of squares: inf, then NaN costs
        r, c = (int(v) for v in np.unravel_index(np.abs(arr).argmax(), arr.shape))
        raise InvalidFeaturesError(
            f"row {r} of X has {arr[r, c]:.3g} in column {c}: squared distances of features beyond "
            f"{MAX_FEATURE_MAGNITUDE:.0e} overflow float64; divide X by a constant (e.g. X / {top:.0e})",
            node=r)
    return arr


#: features larger than this in absolute value are refused (their squares overflow)
MAX_FEATURE_MAGNITUDE = 1e150


def extreme_scale(values, *, low=1e-100, high=1e100):
    """1, or the power of two nearest the largest ``|value|`` when that lies outside
    ``[low, high]``: dividing by it is exact, and brings weights near the ends of the
    float range (whose sums or products overflow) back to about 1."""
    values = np.asarray(values)
    top = float(np.abs(values).max(initial=0.0))
    if top == 0.0 or low <= top <= high:
        return 1.0
    return float(2.0 ** np.round(np.log2(top)))


def _raise_bad_row(X):
    """X could not be read as a float matrix: find the first ragged or non-numeric row."""
    width = None
    for r, row in enumerate(X):
        if isinstance(row, (str, bytes)):
            raise InvalidFeaturesError(f"row {r} of X is the string {row!r}; expected numbers", node=r)
        vec = np.atleast_1d(np.asarray(row, dtype=object))
        for x in vec.ravel():
            if isinstance(x, bool) or not isinstance(x, (numbers.Real, np.number)):
                raise InvalidFeaturesError(f"row {r} of X has a non-numeric entry {x!r}", node=r)
        if vec.ndim != 1:
            raise InvalidFeaturesError(f"row {r} of X has shape {vec.shape}; expected a flat vector", node=r)
        if width is None:
            width = vec.size
        elif vec.size != width:
            raise InvalidFeaturesError(
                f"row {r} of X has {vec.size} features but earlier rows have {width} (ragged X)", node=r
            )
    raise InvalidFeaturesError("X could not be read as a numeric matrix (n_samples, n_features)")


def group_sums(groups, rows, n_groups, weights=None):
    """``out[g] = sum of weights[i] * rows[i] over i with groups[i] == g``, shape
    ``(n_groups, n_features)``: one sparse product (``np.add.at`` is an order of
    magnitude slower for this)."""
    rows = np.asarray(rows, dtype=np.float64)
    groups = np.asarray(groups, dtype=np.int64)
    w = np.ones(len(groups)) if weights is None else np.asarray(weights, dtype=np.float64)
    A = sp.csr_array((w, (groups, np.arange(len(groups)))), shape=(n_groups, len(groups)))
    return np.asarray(A @ rows)


def sq_distances(A, B):
    """Squared Euclidean distances between the rows of ``A`` and of ``B`` (one matrix
    product; rounding below zero clipped)."""
    D = (A * A).sum(1)[:, None] - 2.0 * A @ B.T + (B * B).sum(1)[None, :]
    return np.maximum(D, 0.0)


@contextmanager
def quiet_native_stdout(enabled=True):
    """Send what native code writes to the process's standard output (file descriptor
    1) to the null device while the block runs: HiGHS prints its banner from C++ when a
    solver object is made, whatever its options, into the middle of a user's table.
    Python's own ``sys.stdout`` is flushed first and is untouched otherwise."""
    import sys

    if not enabled:
        yield
        return
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
    except (AttributeError, ValueError, OSError):  # no real descriptor (an embedded interpreter)
        yield
        return
    for stream in (sys.stdout, sys.__stdout__):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):
            pass
    saved = os.dup(fd)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def is_graph(obj):
    """Whether ``obj`` is a networkx graph, without importing networkx: an object can be
    one only once networkx is loaded (image segmentation never loads it)."""
    nx = sys.modules.get("networkx")
    return nx is not None and isinstance(obj, nx.Graph)


def kernel_cache_is_cold():
    """True when no compiled numba kernel is cached (in ``NUMBA_CACHE_DIR`` if set, else
    next to graphclust's modules). Called as the package is imported, before any module
    compiles its eager kernels."""
    import glob

    root = os.environ.get("NUMBA_CACHE_DIR") or os.path.dirname(os.path.abspath(__file__))
    return next(glob.iglob(os.path.join(root, "**", "*.nbi"), recursive=True), None) is None


#: whether the cache was cold at import, and whether that was said already
_COMPILATION = {"cold": False, "announced": False}


def announce_compilation_once():
    """Warn once per process (:class:`~graphclust.errors.CompilationNotice`) when the
    kernel cache was empty at import: the first fits then spend most of their time
    compiling, and a user should know that the wait happens once."""
    if not _COMPILATION["cold"] or _COMPILATION["announced"]:
        return
    _COMPILATION["announced"] = True
    import warnings

    from .errors import CompilationNotice

    warnings.warn(
        "graphclust compiles its numba kernels on first use (up to a minute over the first fits); they are "
        "cached for later runs", CompilationNotice, stacklevel=3)


#: with ``progress="auto"`` a bar appears once a fit has run this many seconds
AUTO_PROGRESS_DELAY = 2.0


def progress_bar(enabled, total, desc, *, unit="it", leave=True):
    """A tqdm bar, or None when ``enabled`` is false (tqdm is imported only when needed).
    ``enabled="auto"``: the bar shows only once the run has taken
    :data:`AUTO_PROGRESS_DELAY` seconds, so quick fits print nothing. ``total`` is the
    most steps the run may take; a run that stops sooner (converged, or a callback said
    stop) ends with its bar full at the steps it took, not at 5/100."""
    if enabled is False or enabled is None:
        return None
    from tqdm.auto import tqdm

    class Bar(tqdm):
        def _waiting(self):
            """A delayed bar that has not shown yet and whose delay has not passed."""
            return bool(self.delay) and self.last_print_t < self.start_t + self.delay and \
                self._time() - self.start_t < self.delay

        def refresh(self, *args, **kwargs):
            # tqdm's refresh (also called by set_postfix) draws at once, delay or not
            if self._waiting():
                return None
            return super().refresh(*args, **kwargs)

        def close(self):
            shown = self.last_print_t >= self.start_t + self.delay  # a delayed bar may never have shown
            if not self.disable and shown and self.total is not None and self.n < self.total:
                self.total = self.n
                self.refresh()
            super().close()

    delay = AUTO_PROGRESS_DELAY if isinstance(enabled, str) and enabled == "auto" else 0.0
    return Bar(total=total, desc=desc, unit=unit, leave=leave, delay=delay)
