"""Node-potential providers: features (or kernels) plus labels → unary costs."""

from typing import TYPE_CHECKING

from .. import _lazy

__all__ = ["NodePotentials", "Centroids", "DISTORTIONS", "NormalInverseWishart", "NormalInverseGamma",
           "DirichletMultinomial", "CONJUGATE", "DCPKernel", "DDMMDPMPotentials", "DPCentroids", "DiagonalGaussian",
           "GaussianMixtures"]

if TYPE_CHECKING:  # imported on first use: the colour models of image segmentation need none of the others
    from .base import NodePotentials
    from .centroids import DISTORTIONS, Centroids
    from .conjugate import CONJUGATE, DirichletMultinomial, NormalInverseGamma, NormalInverseWishart
    from .dcp import DCPKernel
    from .ddmmdpm import DDMMDPMPotentials
    from .dpcentroids import DPCentroids
    from .gaussian import DiagonalGaussian
    from .mixture import GaussianMixtures

__getattr__, __dir__ = _lazy.attach(__name__, __file__)
