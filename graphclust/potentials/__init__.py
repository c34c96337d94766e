"""Node-potential providers: features (or kernels) plus labels → unary costs."""

from .base import NodePotentials
from .centroids import DISTORTIONS, Centroids

__all__ = ["NodePotentials", "Centroids", "DISTORTIONS"]
