"""Exceptions raised by graphclust.

Every exception the toolkit raises on purpose derives from :class:`GraphclustError`.
Those caused by a bad value also derive from :class:`ValueError`, so generic
``except ValueError`` handlers keep working. Exceptions carry their evidence as
attributes (the node, the edge, the witness path, the file line) so that callers can
act on them without parsing the message.
"""

__all__ = [
    "GraphclustError",
    "InvalidParameterError",
    "InvalidGraphError",
    "InvalidFeaturesError",
    "UnknownNodeError",
    "InvalidConstraintError",
    "InfeasibleConstraintsError",
    "TooFewClustersError",
    "GraphMLError",
    "NotFittedError",
    "MissingDependencyError",
    "ProblemTooLargeError",
    "ImageReadError",
    "CompilationNotice",
]


class GraphclustError(Exception):
    """Base class of every error raised on purpose by graphclust."""


class InvalidParameterError(GraphclustError, ValueError):
    """A hyper-parameter or function argument has a value that is not allowed."""


class InvalidGraphError(GraphclustError, ValueError):
    """The data graph cannot be used: empty, directed, or an edge weight is not a
    finite non-negative number.

    Attributes
    ----------
    edge : tuple or None
        The offending edge ``(u, v)``, when one edge is at fault.
    """

    def __init__(self, message, *, edge=None):
        super().__init__(message)
        self.edge = edge


class InvalidFeaturesError(GraphclustError, ValueError):
    """Node features are missing, ragged, non-numeric or not finite.

    Attributes
    ----------
    node : hashable or None
        The first node whose features are at fault.
    """

    def __init__(self, message, *, node=None):
        super().__init__(message)
        self.node = node


class UnknownNodeError(GraphclustError, ValueError):
    """A constraint, seed or label refers to a node that is not in the data graph.

    Attributes
    ----------
    node : hashable
        The node that was not found.
    constraint : tuple or None
        The constraint ``(u, v)`` that mentioned it, if any.
    """

    def __init__(self, message, *, node=None, constraint=None):
        super().__init__(message)
        self.node = node
        self.constraint = constraint


class InvalidConstraintError(GraphclustError, ValueError):
    """A constraint is malformed: a self loop, a zero or NaN weight, or a pair given
    as both must-link and cannot-link.

    Attributes
    ----------
    constraint : tuple or None
        The offending pair ``(u, v)``.
    """

    def __init__(self, message, *, constraint=None):
        super().__init__(message)
        self.constraint = constraint


class InfeasibleConstraintsError(GraphclustError, ValueError):
    """Hard constraints contradict each other: a chain of must-links joins two
    cannot-linked nodes.

    Attributes
    ----------
    constraint : tuple
        The first violated cannot-link ``(u, v)``.
    path : list
        A must-link path from ``u`` to ``v`` (the witness).
    conflicts : list
        Every conflict found, as :class:`graphclust.sideinfo.Conflict` objects.
    """

    def __init__(self, message, *, constraint=None, path=None, conflicts=()):
        super().__init__(message)
        self.constraint = constraint
        self.path = list(path) if path is not None else None
        self.conflicts = list(conflicts)


class TooFewClustersError(GraphclustError, ValueError):
    """The requested number of clusters cannot be reached: more clusters than nodes,
    or fewer than the cannot-link graph needs.

    Attributes
    ----------
    n_clusters : int
        What was requested.
    min_clusters : int or None
        A lower bound on what the cannot-links need (a clique of cannot-linked
        must-link components), when that was the reason.
    clique : list or None
        The nodes that witness ``min_clusters``: pairwise cannot-linked.
    """

    def __init__(self, message, *, n_clusters=None, min_clusters=None, clique=None):
        super().__init__(message)
        self.n_clusters = n_clusters
        self.min_clusters = min_clusters
        self.clique = clique


class GraphMLError(GraphclustError, ValueError):
    """A GraphML (or CSV side-information) file is malformed, unsafe or inconsistent.

    Attributes
    ----------
    path : str or None
        The file, when reading from a file.
    line : int or None
        The line of the offending element, when known.
    element : str or None
        A short description of the offending element (``"<edge source='a' ...>"``).
    """

    def __init__(self, message, *, path=None, line=None, element=None):
        super().__init__(message)
        self.path = path
        self.line = line
        self.element = element


class MissingDependencyError(GraphclustError, ImportError):
    """An optional dependency is needed for this call; the message names the extra."""


class ProblemTooLargeError(GraphclustError, ValueError):
    """The problem exceeds the size an engine accepts (for example the LP relaxation);
    the message suggests an engine that scales."""


class OutputFileError(GraphclustError, OSError):
    """An output file cannot be written where asked (its folder is missing, or not
    writable); the message names the file as the user gave it, and nothing is lost:
    an existing file there keeps its content.

    Attributes
    ----------
    path : str
    """

    def __init__(self, message, *, path=None):
        super().__init__(message)
        self.path = path


class ImageReadError(GraphclustError, ValueError):
    """An image or scribble file is missing or cannot be decoded.

    Attributes
    ----------
    path : str or None
    """

    def __init__(self, message, *, path=None):
        super().__init__(message)
        self.path = path


class CompilationNotice(UserWarning):
    """Shown once per process when graphclust's numba kernels are not cached yet: the
    first fits compile them (up to a minute in all), later runs load them from disk."""


def __getattr__(name):
    # NotFittedError also derives from scikit-learn's NotFittedError, so that its tools
    # recognise it; the class is made on first use so that modules which never raise it
    # (image segmentation) do not import scikit-learn (about 90 MiB of memory).
    if name != "NotFittedError":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

    class NotFittedError(GraphclustError, _SklearnNotFittedError):
        """A fitted attribute was read before ``fit`` was called (also scikit-learn's
        ``NotFittedError``, so its tools recognise it)."""

    NotFittedError.__module__, NotFittedError.__qualname__ = __name__, "NotFittedError"  # pickles by name
    globals()["NotFittedError"] = NotFittedError
    return NotFittedError
