"""Spectral methods: unconstrained baselines and constrained 1-spectral clustering."""

from .spectral import SpectralClustering, spectral_embedding

__all__ = ["SpectralClustering", "spectral_embedding"]
