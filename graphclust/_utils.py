"""Small helpers shared across modules: randomness, optional imports, atomic writes."""

import importlib
import numbers
import os
import tempfile
from contextlib import contextmanager

import numpy as np

from .errors import InvalidParameterError, MissingDependencyError

__all__ = ["check_random_state", "optional_import", "atomic_write", "check_int", "check_float"]


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
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix="-" + os.path.basename(path), dir=directory)
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
