"""``solve(E)`` picks its engine by the energy's kind, and what it picks is as good as
the documented choice promises (brute force on small energies)."""

import numpy as np
import pytest

from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError
from graphclust.inference import default_engine, solve
from graphclust.inference.exact import brute_force


def _energy(rng, n=9, K=2, repulsive=False, label_costs=None):
    U = rng.uniform(0, 2, size=(n, K))
    edges = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.4] or [(0, 1)])
    w = rng.uniform(0.1, 1.5, size=len(edges))
    if repulsive:
        w[: max(1, len(w) // 4)] *= -1
    return Energy(U, edges, w, label_costs=label_costs)


@pytest.mark.parametrize("seed", range(6))
def test_two_label_attractive_energies_get_the_exact_cut(seed):
    E = _energy(np.random.default_rng(seed))
    res = solve(E)
    assert res.info["engine"] == "mincut"
    assert res.energy == pytest.approx(brute_force(E).energy, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_multi_label_attractive_energies_get_expansion_within_its_bound(seed):
    E = _energy(np.random.default_rng(seed), n=8, K=3)
    res = solve(E, random_state=0)
    assert res.info["engine"] == "expansion"
    best = brute_force(E).energy
    assert best - 1e-9 <= res.energy <= 2.0 * best + 1e-9  # Potts: within a factor 2


def test_repulsive_terms_tables_and_label_costs_pick_their_engines():
    rng = np.random.default_rng(0)
    assert default_engine(_energy(rng, repulsive=True)) == "bp"
    assert default_engine(_energy(rng, K=3, label_costs=[0.5, 0.5, 0.5])) == "expansion"
    assert default_engine(_energy(rng, K=3, repulsive=True, label_costs=[0.5, 0.5, 0.5])) == "expansion"
    E = _energy(rng, repulsive=True)
    res = solve(E, random_state=0)
    assert res.info["engine"] == "bp" and np.isfinite(res.energy)


def test_the_noisy_horse_at_strong_coupling_is_solved_exactly_by_default():
    """The issue's strong-coupling case in small: two labels, smoothness 8 on a noisy
    grid, where BP used to end far above the minimum; the default engine is exact."""
    from graphclust.graphs import grid_arrays

    rng = np.random.default_rng(1)
    truth = np.zeros((24, 24), dtype=bool)
    truth[6:18, 4:20] = True
    img = truth + rng.normal(0, 0.6, truth.shape)
    U = np.stack([(img.ravel() - 0.0) ** 2, (img.ravel() - 1.0) ** 2], axis=1)
    edges = grid_arrays(np.zeros(truth.shape))[0]
    E = Energy(U, edges, 8.0 * np.ones(len(edges)))
    res = solve(E)
    exact = solve(E, "mincut")
    assert res.info["engine"] == "mincut" and res.energy == exact.energy
    assert res.energy <= solve(E, "bp").energy


@pytest.mark.parametrize("seed", range(8))
def test_label_cost_energies_get_expansion_not_above_icm(seed):
    """With label costs the default is α-expansion with the costs inside the cut; on
    small attractive energies it is never above ICM and never below the optimum."""
    from graphclust.inference import icm

    rng = np.random.default_rng(seed)
    E = _energy(rng, n=8, K=3, label_costs=rng.uniform(0.5, 3.0, 3))
    res = solve(E, random_state=0)
    assert res.info["engine"] == "expansion"
    assert brute_force(E).energy - 1e-9 <= res.energy <= icm(E, random_state=0).energy + 1e-9


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("K, repulsive, engine", [(2, False, "mincut"), (3, False, "trws"), (2, True, "trws"),
                                                   (3, True, "trws")])
def test_asking_for_a_bound_picks_an_engine_that_certifies(seed, K, repulsive, engine):
    """``solve(E, bound=True)``: the exact cut where it applies (its bound is its energy),
    TRW-S otherwise; the bound is below the brute-force minimum, the energy above it."""
    E = _energy(np.random.default_rng(seed), n=8, K=K, repulsive=repulsive)
    res = solve(E, bound=True)
    assert res.info["engine"] == engine == default_engine(E, bound=True)
    best = brute_force(E).energy
    assert res.lower_bound is not None
    assert res.lower_bound <= best + 1e-9 <= res.energy + 2e-9
    if engine == "mincut":
        assert res.lower_bound == pytest.approx(res.energy)


def test_a_named_engine_without_a_bound_is_refused_when_one_is_asked_for():
    E = _energy(np.random.default_rng(0), K=3)
    with pytest.raises(InvalidParameterError, match=r"method 'icm' gives no lower bound; with bound=True use 'auto' "
                                                    r"or one of .*exact.*lp.*mincut.*trws"):
        solve(E, "icm", bound=True)
    assert solve(E, "trws", bound=True).lower_bound is not None
