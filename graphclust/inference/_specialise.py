"""Kernels specialised on a provider: a template compiled with the provider's hooks
inlined, cached on disk by numba's public ``cache=True``.

Both engines that drive providers (:mod:`~graphclust.inference.gibbs` and
:mod:`~graphclust.inference.icm_births`) compile one kernel per registered provider.
A template is a plain Python function whose code calls the hooks by global names; it
is re-bound to a namespace where those names are the provider's functions, made
``inline="always"`` so the calls cost nothing. numba keys its disk cache by the
function's qualified name and file and, for a closure, by the closure's contents; the
hooks live in other files, which numba does not watch. So each kernel gets a name of
its own (the state class in it) and closes over a stamp of the files compiled into it:
an edited provider compiles afresh instead of loading stale code.
"""

import hashlib
import os
from types import FunctionType

from numba import njit

__all__ = ["source_stamp", "state_tag", "hook_space", "bind"]


def source_stamp(files):
    """An integer that changes when any of ``files`` changes (path, mtime, size)."""
    stamp = []
    for f in sorted(set(files)):
        st = os.stat(f) if os.path.exists(f) else None
        stamp.append((f, st and st.st_mtime_ns, st and st.st_size))
    return int.from_bytes(hashlib.sha256(repr(stamp).encode()).digest()[:7], "little")


def state_tag(state_class):
    """A Python-identifier form of the state class's full name."""
    name = f"{state_class.__module__}_{state_class.__qualname__}"
    return name.replace(".", "_").replace("<", "").replace(">", "")


def hook_space(module_globals, hooks):
    """The template's namespace with the hooks (``{global name: jitted function}``)
    bound as inlined functions."""
    space = dict(module_globals)
    space.update({name: njit(inline="always")(fn.py_func) for name, fn in hooks.items()})
    return space


def bind(fn, space, name, tag, closure=None):
    """``fn``'s code bound to ``space``, named ``{name}__{tag}`` (its own cache index)."""
    out = FunctionType(fn.__code__, space, name, fn.__defaults__, closure)
    out.__qualname__ = f"{name}__{tag}"
    return out
