"""Node-potential providers: features (or kernels) plus labels → unary costs."""

from .base import NodePotentials
from .centroids import DISTORTIONS, Centroids
from .conjugate import CONJUGATE, DirichletMultinomial, NormalInverseGamma, NormalInverseWishart
from .dcp import DCPKernel
from .ddmmdpm import DDMMDPMPotentials
from .dpcentroids import DPCentroids
from .gaussian import DiagonalGaussian
from .mixture import GaussianMixtures

__all__ = ["NodePotentials", "Centroids", "DISTORTIONS", "NormalInverseWishart", "NormalInverseGamma",
           "DirichletMultinomial", "CONJUGATE", "DCPKernel", "DDMMDPMPotentials", "DPCentroids", "DiagonalGaussian",
           "GaussianMixtures"]
