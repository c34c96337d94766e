"""LICENSE and CITATION.cff say what pyproject.toml says."""

import tomllib
from pathlib import Path

import yaml

import graphclust as gc

ROOT = Path(__file__).resolve().parent.parent


def test_license_is_the_declared_bsd_3_clause():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]
    assert declared == "BSD-3-Clause"
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")


def test_citation_file_names_the_version_license_and_seed_papers():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "BSD-3-Clause"
    assert cff["version"] == gc.__version__
    titles = " | ".join(ref["title"] for ref in cff["references"])
    for method_paper in ("Clustering With Side Information", "Determinantal Clustering Process",
                         "Hidden Markov Random Fields", "Maximum Margin Dirichlet Process Mixture",
                         "Constrained 1-Spectral Clustering"):
        assert method_paper in titles
    for ref in cff["references"]:
        assert ref["type"] in ("article", "conference-paper") and ref["authors"]
