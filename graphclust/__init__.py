"""graphclust: graph-centric clustering with side information.

Data and side information are both weighted graphs: a networkx graph of similarities
and a signed graph of must-links (weight > 0) and cannot-links (weight < 0). Both are
converted once into a :class:`Problem` of arrays; every algorithm works on arrays and
maps its answer back to node keys.
"""

from typing import TYPE_CHECKING

from . import _lazy, _utils

_utils._COMPILATION["cold"] = _utils.kernel_cache_is_cold()  # before any module compiles a kernel

if TYPE_CHECKING:  # the public names, imported on first use (graphclust._lazy)
    from . import active, datasets, errors, inference, metrics, potentials, segmentation
    from .auto import AutoCluster, cluster
    from .base import ClusteringResult, check_is_fitted
    from .conflict_repair import SuspectReport, repair, suspects
    from .dcp import DCP, DCPKernel
    from .ddmmdpm import DDMMDPM, MMDPM
    from .energy import Energy
    from .graphs import (
        epsilon_graph,
        epsilon_matrix,
        grid_arrays,
        grid_graph,
        grid_matrix,
        kernel_graph,
        kernel_matrix,
        knn_graph,
        knn_matrix,
        sparsify,
    )
    from .hmrf import HMRF
    from .inference import InferenceResult, solve
    from .io import parse_graphml, read_graphml, read_problem, read_side_info, write_graphml, write_side_info_csv
    from .merge import Lift, contract
    from .metrics import ari, nmi, pairwise_f_measure, violations
    from .potentials import DPCentroids
    from .problem import Problem, as_problem
    from .rdpmeans import DPMeans, RDPMeans
    from .segmentation import Segmentation, Segmenter, segment
    from .sideinfo import CheckReport, Conflict, RowConstraints, SideInfo
    from .spectral import COSC, SpectralClustering
    from .tvclust import TVClust

__getattr__, __dir__ = _lazy.attach(__name__, __file__)

__version__ = "0.1.0.dev0"

__all__ = [
    # data structures
    "Problem",
    "as_problem",
    "SideInfo",
    "RowConstraints",
    "CheckReport",
    "Conflict",
    "contract",
    "suspects",
    "repair",
    "SuspectReport",
    "Lift",
    # graph builders
    "knn_graph",
    "knn_matrix",
    "epsilon_graph",
    "epsilon_matrix",
    "kernel_graph",
    "kernel_matrix",
    "grid_graph",
    "grid_arrays",
    "grid_matrix",
    "sparsify",
    # input / output
    "read_graphml",
    "read_problem",
    "parse_graphml",
    "write_graphml",
    "read_side_info",
    "write_side_info_csv",
    # energies and inference
    "Energy",
    "solve",
    "InferenceResult",
    # estimators
    "cluster",
    "AutoCluster",
    "SpectralClustering",
    "COSC",
    "HMRF",
    "RDPMeans",
    "DPMeans",
    "DPCentroids",
    "TVClust",
    # images
    "segment",
    "Segmentation",
    "Segmenter",
    "segmentation",
    "DDMMDPM",
    "MMDPM",
    "DCP",
    "DCPKernel",
    "ClusteringResult",
    "check_is_fitted",
    # metrics
    "nmi",
    "ari",
    "pairwise_f_measure",
    "violations",
    # modules
    "active",
    "datasets",
    "errors",
    "inference",
    "metrics",
    "potentials",
]
