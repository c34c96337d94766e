"""Spectral methods: the normalised spectral baseline, and the numerical core of
constrained 1-spectral clustering (COSC): penalised ratios, their tight continuous
relaxation, optimal thresholding and RatioDCA with a FISTA inner solver."""

from .cosc import COSC
from .onespectral import BipartitionResult, cosc_bipartition, one_spectral_bipartition, spectral_start
from .ratiodca import (
    RatioProblem,
    continuous_ratio,
    optimal_threshold,
    ratio_dca,
    set_ratio,
    solve_inner,
)
from .spectral import SpectralClustering, spectral_embedding

__all__ = [
    "COSC",
    "SpectralClustering",
    "spectral_embedding",
    "RatioProblem",
    "set_ratio",
    "continuous_ratio",
    "optimal_threshold",
    "solve_inner",
    "ratio_dca",
    "spectral_start",
    "one_spectral_bipartition",
    "cosc_bipartition",
    "BipartitionResult",
]
