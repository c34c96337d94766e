"""Tests for graphclust.metrics: scikit-learn, networkx and brute force as oracles."""

from itertools import combinations
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from sklearn import metrics as skm
from sklearn.metrics.cluster import contingency_matrix, pair_confusion_matrix

import graphclust as gc
from graphclust.errors import InvalidConstraintError, InvalidGraphError, InvalidParameterError, UnknownNodeError
from graphclust.metrics import (
    PairwiseScores,
    Violations,
    ari,
    constraint_violations,
    contingency,
    cut,
    nmi,
    normalized_cut,
    pairwise_f_measure,
    pairwise_scores,
    ratio_cut,
    violations,
)

AVERAGES = ["geometric", "arithmetic", "min", "max"]


@st.composite
def labelling_pairs(draw, max_size=40):
    """Two labellings of the same points, with few or many clusters."""
    n = draw(st.integers(1, max_size))
    k1 = draw(st.integers(1, n))
    k2 = draw(st.integers(1, n))
    a = draw(st.lists(st.integers(0, k1 - 1), min_size=n, max_size=n))
    b = draw(st.lists(st.integers(0, k2 - 1), min_size=n, max_size=n))
    return np.array(a), np.array(b)


def brute_pairwise(t, p):
    """Pairwise precision/recall by enumerating every pair of points."""
    tp = pred = true = 0
    for i, j in combinations(range(len(t)), 2):
        same_t, same_p = t[i] == t[j], p[i] == p[j]
        tp += same_t and same_p
        pred += same_p
        true += same_t
    P = tp / pred if pred else 1.0
    R = tp / true if true else 1.0
    return P, R, (2 * P * R / (P + R) if P + R else 0.0)


# ---------------------------------------------------------------------- contingency
class TestContingency:
    @settings(max_examples=60, deadline=None)
    @given(labelling_pairs())
    def test_matches_sklearn(self, pair):
        """The sparse table equals scikit-learn's contingency matrix."""
        t, p = pair
        np.testing.assert_array_equal(contingency(t, p).toarray(), contingency_matrix(t, p))

    def test_sparse_int64(self):
        """The table is a sparse int64 array in sorted label order."""
        C = contingency(["b", "a", "b"], [2, 2, 1])
        assert sp.issparse(C) and C.dtype == np.int64
        np.testing.assert_array_equal(C.toarray(), [[0, 1], [1, 1]])


# ---------------------------------------------------------------------- NMI / ARI
class TestAgainstSklearn:
    @settings(max_examples=120, deadline=None)
    @given(labelling_pairs(), st.sampled_from(AVERAGES))
    def test_nmi(self, pair, average):
        """NMI agrees with scikit-learn for every normalisation."""
        t, p = pair
        expected = skm.normalized_mutual_info_score(t, p, average_method=average)
        assert nmi(t, p, average=average) == pytest.approx(expected, rel=1e-9, abs=1e-12)

    @settings(max_examples=120, deadline=None)
    @given(labelling_pairs())
    def test_ari(self, pair):
        """ARI agrees with scikit-learn's adjusted_rand_score."""
        t, p = pair
        assert ari(t, p) == pytest.approx(skm.adjusted_rand_score(t, p), rel=1e-9, abs=1e-12)

    def test_default_is_geometric(self):
        """The default normalisation is the geometric mean used by the TVClust paper."""
        t, p = [0, 0, 1, 1, 2, 2, 2], [0, 0, 0, 0, 1, 1, 1]
        assert nmi(t, p) == nmi(t, p, average="geometric")
        assert nmi(t, p) != pytest.approx(nmi(t, p, average="arithmetic"))
        h = lambda x: -sum(c / 7 * math.log(c / 7) for c in np.bincount(x) if c)  # noqa: E731
        mi = skm.mutual_info_score(t, p)
        assert nmi(t, p) == pytest.approx(mi / math.sqrt(h(t) * h(p)))

    def test_large_ari_no_overflow(self):
        """Pair counts of large labellings are exact (no int64 overflow in the products)."""
        rng = np.random.default_rng(0)
        t = rng.integers(0, 3, 200_000)
        p = np.where(rng.random(200_000) < 0.9, t, rng.integers(0, 3, 200_000))
        assert ari(t, p) == pytest.approx(skm.adjusted_rand_score(t, p), rel=1e-9)


class TestEdgeCases:
    @pytest.mark.parametrize("average", AVERAGES)
    def test_both_single_cluster(self, average):
        """Both labellings trivial: the partitions agree, NMI is 1."""
        assert nmi([3, 3, 3], ["a", "a", "a"], average=average) == 1.0
        assert ari([3, 3, 3], ["a", "a", "a"]) == 1.0

    @pytest.mark.parametrize("average", AVERAGES)
    def test_one_single_cluster(self, average):
        """Only one labelling trivial: no shared information, NMI is 0."""
        assert nmi([0, 0, 1, 1], [5, 5, 5, 5], average=average) == 0.0
        assert nmi([5, 5, 5, 5], [0, 0, 1, 1], average=average) == 0.0

    def test_identical_partitions_exactly_one(self):
        """Identical partitions under renaming score exactly 1 (no rounding residue)."""
        rng = np.random.default_rng(1)
        t = rng.integers(0, 7, 500)
        renamed = np.array(list("abcdefg"))[(t + 3) % 7]
        for average in AVERAGES:
            assert nmi(t, renamed, average=average) == 1.0
        assert ari(t, renamed) == 1.0
        assert pairwise_scores(t, renamed) == (1.0, 1.0, 1.0)

    def test_one_point(self):
        """One point: every index reports a perfect match."""
        assert nmi([0], [1]) == 1.0
        assert ari([0], [1]) == 1.0
        assert pairwise_scores([0], [1]) == (1.0, 1.0, 1.0)

    def test_all_singletons(self):
        """Singletons against singletons are identical; against pairs recall is 0."""
        assert pairwise_scores([0, 1, 2], [5, 6, 7]) == (1.0, 1.0, 1.0)
        assert ari([0, 1, 2], [5, 6, 7]) == 1.0
        assert pairwise_scores([0, 0, 1], [5, 6, 7]) == (1.0, 0.0, 0.0)
        assert pairwise_scores([5, 6, 7], [0, 0, 1]) == (0.0, 1.0, 0.0)


# ---------------------------------------------------------------------- pairwise scores
class TestPairwise:
    def test_hand_example(self):
        """Truth {0,1,2},{3,4,5} vs {0,1},{2,3},{4,5}: TP=2, 3 predicted, 6 true pairs."""
        P, R, F = pairwise_scores([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2])
        assert (P, R) == (2 / 3, 1 / 3)
        assert F == pytest.approx(4 / 9)
        assert pairwise_f_measure([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]) == F

    def test_hand_example_merge(self):
        """Everything in one cluster: recall 1, precision = true pairs / all pairs."""
        # truth {0,1},{2,3,4}: 1 + 3 = 4 true pairs out of C(5,2) = 10
        assert pairwise_scores([0, 0, 1, 1, 1], [9] * 5) == (0.4, 1.0, pytest.approx(2 * 0.4 / 1.4))

    def test_returns_named_tuple(self):
        s = pairwise_scores([0, 0, 1], [0, 0, 1])
        assert isinstance(s, PairwiseScores) and s.precision == s.recall == s.f == 1.0

    @settings(max_examples=80, deadline=None)
    @given(labelling_pairs(max_size=25))
    def test_brute_force(self, pair):
        """Contingency-table counts equal enumeration of every pair."""
        t, p = pair
        P, R, F = pairwise_scores(t, p)
        bP, bR, bF = brute_pairwise(t, p)
        assert (P, R) == (pytest.approx(bP), pytest.approx(bR))
        assert F == pytest.approx(bF)

    @settings(max_examples=60, deadline=None)
    @given(labelling_pairs())
    def test_sklearn_pair_confusion(self, pair):
        """Precision and recall agree with scikit-learn's pair confusion matrix."""
        t, p = pair
        (tn, fp), (fn, tp) = pair_confusion_matrix(t, p)
        P, R, _ = pairwise_scores(t, p)
        assert P == pytest.approx(tp / (tp + fp) if tp + fp else 1.0)
        assert R == pytest.approx(tp / (tp + fn) if tp + fn else 1.0)

    @settings(max_examples=60, deadline=None)
    @given(labelling_pairs())
    def test_symmetry(self, pair):
        """Swapping the arguments swaps precision and recall and keeps F, NMI and ARI."""
        t, p = pair
        P, R, F = pairwise_scores(t, p)
        P2, R2, F2 = pairwise_scores(p, t)
        assert (P2, R2) == (R, P)
        assert F2 == pytest.approx(F)
        assert ari(p, t) == pytest.approx(ari(t, p))
        assert nmi(p, t) == pytest.approx(nmi(t, p))

    @settings(max_examples=60, deadline=None)
    @given(labelling_pairs(), st.randoms(use_true_random=False))
    def test_permutation_invariance(self, pair, rnd):
        """Renaming clusters or reordering points jointly changes no score."""
        t, p = pair
        names = list(range(100))
        rnd.shuffle(names)
        renamed = np.array([f"c{names[x]}" for x in p])
        order = list(range(len(t)))
        rnd.shuffle(order)
        for f in (ari, nmi, pairwise_f_measure):
            assert f(t, renamed) == pytest.approx(f(t, p))
            assert f(t[order], p[order]) == pytest.approx(f(t, p))


# ---------------------------------------------------------------------- subsets and labels
class TestSubsetAndLabels:
    T = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    P = np.array([0, 0, 1, 1, 1, 2, 2, 0])

    @pytest.mark.parametrize("f", [ari, nmi, pairwise_scores, pairwise_f_measure, contingency])
    def test_subset_equals_slicing(self, f):
        """A mask and integer positions both score exactly the selected points."""
        mask = np.array([1, 0, 1, 1, 0, 1, 1, 0], bool)
        idx = np.flatnonzero(mask)
        expected = f(self.T[idx], self.P[idx])
        for subset in (mask, idx, idx.tolist()):
            got = f(self.T, self.P, subset=subset)
            if sp.issparse(got):
                np.testing.assert_array_equal(got.toarray(), expected.toarray())
            else:
                assert got == expected

    def test_subset_changes_the_score(self):
        """Scoring the subset differs from scoring everything (the subset is applied)."""
        assert pairwise_f_measure(self.T, self.P, subset=[0, 1, 3, 4]) == 1.0
        assert pairwise_f_measure(self.T, self.P) < 1.0

    def test_string_and_tuple_labels(self):
        """Strings and tuples are labels like any other; 1 and '1' are different labels."""
        assert ari(["x", "x", "y"], [(0, 1), (0, 1), (2, 3)]) == 1.0
        assert pairwise_scores([1, "1", 1, "1"], [0, 1, 0, 1]) == (1.0, 1.0, 1.0)
        assert nmi([None, None, 2, 2], ["a", "a", "b", "b"]) == 1.0

    def test_iterators_accepted(self):
        assert ari(iter([0, 0, 1]), (x for x in "aab")) == 1.0

    def test_length_mismatch(self):
        with pytest.raises(InvalidParameterError, match="labels_true has 3 labels but labels_pred has 2"):
            nmi([0, 1, 1], [0, 1])
        with pytest.raises(InvalidParameterError, match="has 2 labels but labels_pred has 4"):
            pairwise_scores([0, 1], [0, 1, 2, 3])

    def test_empty(self):
        with pytest.raises(InvalidParameterError, match="labellings are empty"):
            ari([], [])
        with pytest.raises(InvalidParameterError, match="subset selects no points"):
            ari([0, 1], [0, 1], subset=np.zeros(2, bool))

    def test_bad_subset(self):
        with pytest.raises(InvalidParameterError, match=r"mask has shape \(3,\) but there are 4 labels"):
            nmi([0, 0, 1, 1], [0, 1, 1, 1], subset=[True, False, True])
        with pytest.raises(InvalidParameterError, match="subset position 7 is out of range for 4 labels"):
            nmi([0, 0, 1, 1], [0, 1, 1, 1], subset=[0, 7])
        with pytest.raises(InvalidParameterError, match="boolean mask or a 1-D array of integer"):
            nmi([0, 0, 1, 1], [0, 1, 1, 1], subset=[0.5, 1.0])

    def test_bad_average(self):
        with pytest.raises(InvalidParameterError, match="average must be one of .* got 'mean'"):
            nmi([0, 1], [0, 1], average="mean")

    def test_two_dimensional_labels(self):
        with pytest.raises(InvalidParameterError, match=r"labels_pred must be 1-D, got an array of shape \(2, 2\)"):
            ari([0, 1], np.zeros((2, 2)))

    def test_unhashable_label(self):
        with pytest.raises(InvalidParameterError, match=r"labels_pred\[1\] = \{.*\} is not hashable"):
            ari([0, 1, 1], [0, {"a": 1}, 2])

    def test_not_a_sequence(self):
        with pytest.raises(InvalidParameterError, match="labels_true must be a sequence of labels, got str"):
            ari("abc", [0, 1, 2])


# ---------------------------------------------------------------------- violations
class TestViolations:
    def test_hand_example(self):
        """Must (0,1) kept, must (1,2) broken, cannot (0,3) kept, hard cannot (2,3) broken."""
        v = constraint_violations(
            ["a", "a", "b", "b"], [[0, 1], [1, 2], [0, 3], [2, 3]], [1.0, 2.0, -0.5, -np.inf]
        )
        assert (v.n_must, v.n_must_violated, v.must_weight_violated) == (2, 1, 2.0)
        assert (v.n_cannot, v.n_cannot_violated, v.cannot_weight_violated) == (2, 1, np.inf)
        assert (v.n_violated, v.weight_violated) == (2, np.inf)
        assert v.violated.tolist() == [1, 3]
        assert v.n_constraints == 4 and not v.satisfied

    def test_soft_weights_sum(self):
        v = constraint_violations([0, 1, 0, 1], [[0, 1], [0, 2], [1, 3], [2, 3]], [0.5, -2.0, -3.0, 1.5])
        assert (v.n_must_violated, v.must_weight_violated) == (2, 2.0)
        assert (v.n_cannot_violated, v.cannot_weight_violated) == (2, 5.0)
        assert v.weight_violated == 7.0

    def test_no_constraints(self):
        v = constraint_violations([0, 1], np.empty((0, 2), int), [])
        assert v == Violations(0, 0, 0.0, 0, 0, 0.0, 0, 0.0) and v.satisfied

    def test_problem_and_sideinfo_agree(self):
        """Problem, SideInfo + dict and SideInfo + nodes give the same count."""
        S = gc.SideInfo.from_pairs(must=[("a", "b"), ("c", "d")], cannot=[("a", "d"), ("b", "c")])
        P = gc.Problem.from_graph(nx.path_graph(["a", "b", "c", "d"]), S)
        labels = [0, 1, 1, 1]
        v = violations(P, labels)
        assert (v.n_must_violated, v.n_cannot_violated) == (1, 1)
        assert violations(S, dict(zip("abcd", labels))) == v
        assert violations(S, labels, nodes="abcd") == v
        assert violations(P, dict(zip("dcba", labels[::-1]))) == v

    def test_bad_constraint_position(self):
        with pytest.raises(InvalidParameterError, match=r"constraint 1 \(2, 5\) refers to a node position out of range for 3"):
            constraint_violations([0, 1, 2], [[0, 1], [2, 5]], [1.0, -1.0])

    def test_zero_weight(self):
        with pytest.raises(InvalidConstraintError, match=r"constraint 0 \(0, 1\) has weight nan") as err:
            constraint_violations([0, 1, 2], [[0, 1]], [np.nan])
        assert err.value.constraint == (0, 1)

    def test_shape_errors(self):
        with pytest.raises(InvalidParameterError, match=r"shape \(n_constraints, 2\), got dtype .* shape \(2, 3\)"):
            constraint_violations([0, 1, 2], [[0, 1, 2], [0, 1, 2]], [1.0, 1.0])
        with pytest.raises(InvalidParameterError, match="2 constraints but 1 weights"):
            constraint_violations([0, 1, 2], [[0, 1], [1, 2]], [1.0])

    def test_label_count(self):
        S = gc.SideInfo.from_pairs(must=[(0, 1)])
        P = gc.Problem.from_array(np.zeros((3, 1)), S)
        with pytest.raises(InvalidParameterError, match="2 labels given for a graph of 3 nodes"):
            violations(P, [0, 1])
        with pytest.raises(InvalidParameterError, match="3 labels given for 2 nodes"):
            violations(S, [0, 1, 1], nodes=[0, 1])

    def test_sideinfo_needs_nodes(self):
        with pytest.raises(InvalidParameterError, match="pass nodes="):
            violations(gc.SideInfo.from_pairs(must=[(0, 1)]), [0, 0])

    def test_sideinfo_unknown_node(self):
        S = gc.SideInfo.from_pairs(cannot=[("a", "z")])
        with pytest.raises(UnknownNodeError, match=r"refers to node 'z', which has no label") as err:
            violations(S, {"a": 0, "b": 1})
        assert err.value.node == "z"

    def test_dict_missing_node(self):
        P = gc.Problem.from_graph(nx.path_graph(["a", "b", "c"]))
        with pytest.raises(InvalidParameterError, match="node 'c' has no label"):
            violations(P, {"a": 0, "b": 1})
        with pytest.raises(UnknownNodeError, match="node 'q', which is not in the graph"):
            violations(P, {"a": 0, "b": 1, "c": 1, "q": 2})

    def test_not_a_problem(self):
        with pytest.raises(InvalidParameterError, match="expected a Problem or a SideInfo, got list"):
            violations([[0, 1]], [0, 1])


# ---------------------------------------------------------------------- cuts
def weighted_graph(n, p, seed):
    G = nx.gnp_random_graph(n, p, seed=seed)
    rng = np.random.default_rng(seed)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = float(rng.uniform(0.1, 3.0))
    return G


class TestCuts:
    @pytest.mark.parametrize("seed", range(5))
    def test_two_way_against_networkx(self, seed):
        """Two clusters: cut and normalized cut equal networkx's cut_size / normalized_cut_size."""
        G = weighted_graph(14, 0.4, seed)
        labels = np.random.default_rng(seed).integers(0, 2, 14)
        labels[:2] = [0, 1]
        A = {u for u in G if labels[u] == 0}
        B = set(G) - A
        assert cut(G, labels) == pytest.approx(nx.cut_size(G, A, B, weight="weight"))
        assert normalized_cut(G, labels) == pytest.approx(nx.normalized_cut_size(G, A, B, weight="weight"))
        assert ratio_cut(G, labels) == pytest.approx(nx.cut_size(G, A, weight="weight") * (1 / len(A) + 1 / len(B)))

    @pytest.mark.parametrize("seed", range(5))
    def test_multiway_against_networkx(self, seed):
        """k clusters: sums of networkx's one-cluster cut sizes and volumes."""
        G = weighted_graph(15, 0.5, seed)
        labels = np.random.default_rng(seed).choice(["x", "y", "z", "w"], 15)
        groups = [{u for u in G if labels[u] == c} for c in np.unique(labels)]
        cuts = [nx.cut_size(G, A, weight="weight") for A in groups]
        assert cut(G, labels) == pytest.approx(sum(cuts) / 2)
        assert normalized_cut(G, labels) == pytest.approx(
            sum(c / nx.volume(G, A, weight="weight") for c, A in zip(cuts, groups))
        )
        assert ratio_cut(G, labels) == pytest.approx(sum(c / len(A) for c, A in zip(cuts, groups)))

    def test_hand_multiway(self):
        """Path a-b-c-d-e with weights 1,2,3,4 and clusters {a,b},{c},{d,e}."""
        G = nx.Graph()
        G.add_weighted_edges_from([("a", "b", 1), ("b", "c", 2), ("c", "d", 3), ("d", "e", 4)])
        labels = {"a": 0, "b": 0, "c": 1, "d": 2, "e": 2}
        assert cut(G, labels) == 5.0
        # cut(A) = 2, 5, 3; vol = 1+3, 2+3, 7+4; sizes 2, 1, 2
        assert normalized_cut(G, labels) == pytest.approx(2 / 4 + 5 / 5 + 3 / 11)
        assert ratio_cut(G, labels) == pytest.approx(2 / 2 + 5 / 1 + 3 / 2)
        assert ratio_cut(G, labels, vertex_weights=[1, 3, 2, 0.5, 0.5]) == pytest.approx(2 / 4 + 5 / 2 + 3 / 1)

    def test_inputs_agree(self):
        """A graph, its Problem, a sparse matrix and a dense array give the same numbers."""
        G = weighted_graph(10, 0.5, 3)
        labels = [0, 1, 2] * 3 + [0]
        P = gc.Problem.from_graph(G)
        W = nx.to_scipy_sparse_array(G, nodelist=range(10))
        for f in (cut, normalized_cut, ratio_cut):
            values = [f(x, labels) for x in (G, P, W, W.toarray(), sp.csr_matrix(W))]
            assert values == pytest.approx([values[0]] * 5)

    def test_problem_vertex_weights_used(self):
        """A contracted-style Problem's vertex weights are the ratio-cut denominators."""
        W = sp.csr_array(np.array([[0, 2.0, 0], [2.0, 0, 1.0], [0, 1.0, 0]]))
        P = gc.Problem.from_arrays(W, vertex_weights=[3.0, 1.0, 2.0])
        assert ratio_cut(P, [0, 0, 1]) == pytest.approx(1 / 4 + 1 / 2)
        assert ratio_cut(P, [0, 0, 1], vertex_weights=[1, 1, 1]) == pytest.approx(1 / 2 + 1 / 1)

    def test_diagonal_ignored(self):
        W = np.array([[5.0, 1.0], [1.0, 0.0]])
        assert normalized_cut(W, [0, 1]) == 2.0

    def test_zero_volume_names_cluster(self):
        G = nx.path_graph(3)
        G.add_node(3)
        with pytest.raises(InvalidParameterError, match=r"cluster 'iso' has volume 0 \(1 node\(s\) without edges\)"):
            normalized_cut(G, [0, 0, 1, "iso"])

    def test_zero_size_names_cluster(self):
        with pytest.raises(InvalidParameterError, match="cluster 1 has size 0"):
            ratio_cut(nx.path_graph(3), [0, 0, 1], vertex_weights=[1, 1, 0])

    def test_bad_vertex_weights(self):
        with pytest.raises(InvalidParameterError, match="2 vertex weights given for a graph of 3 nodes"):
            ratio_cut(nx.path_graph(3), [0, 0, 1], vertex_weights=[1, 1])
        with pytest.raises(InvalidParameterError, match="vertex weight 2 is -1.0"):
            ratio_cut(nx.path_graph(3), [0, 0, 1], vertex_weights=[1, 1, -1])

    def test_label_count(self):
        with pytest.raises(InvalidParameterError, match="2 labels given for a graph of 3 nodes"):
            cut(nx.path_graph(3), [0, 1])

    def test_asymmetric_matrix(self):
        W = np.array([[0, 1.0, 0], [2.0, 0, 0], [0, 0, 0]])
        with pytest.raises(InvalidGraphError, match=r"not symmetric: W\[0, 1\] = 1.0 but W\[1, 0\] = 2.0") as err:
            cut(W, [0, 1, 1])
        assert err.value.edge == (0, 1)

    def test_negative_or_nan_entry(self):
        W = np.array([[0, -1.0], [-1.0, 0]])
        with pytest.raises(InvalidGraphError, match=r"edge \(0, 1\) has weight -1.0"):
            normalized_cut(W, [0, 1])
        W = np.array([[0, np.nan], [np.nan, 0]])
        with pytest.raises(InvalidGraphError, match=r"edge \(0, 1\) has weight nan"):
            ratio_cut(W, [0, 1])

    def test_not_square(self):
        with pytest.raises(InvalidGraphError, match=r"must be square, got shape \(2, 3\)"):
            cut(np.zeros((2, 3)), [0, 1])


def test_library_does_not_import_skimage():
    """metrics and datasets stay free of scikit-image (an extra) at import; scikit-learn
    is a core dependency (every estimator is a scikit-learn clusterer)."""
    import subprocess
    import sys

    code = (
        "import sys, graphclust.metrics, graphclust.datasets;"
        "bad = [m for m in ('skimage',) if m in sys.modules]; sys.exit(str(bad) if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_violated_mask_is_the_row_by_row_definition(rng):
    """The trusting twin the estimators use agrees with a loop over the constraints."""
    from graphclust.metrics import violated_mask

    labels = rng.integers(0, 3, 12)
    pairs = np.array([(i, j) for i in range(12) for j in range(i + 1, 12)])[rng.choice(66, 20, replace=False)]
    w = rng.choice([-2.0, -np.inf, 1.5, np.inf], 20)
    expected = [(labels[i] != labels[j]) if x > 0 else (labels[i] == labels[j]) for (i, j), x in zip(pairs, w)]
    np.testing.assert_array_equal(violated_mask(labels, pairs, w), expected)
    np.testing.assert_array_equal(constraint_violations(labels, pairs, w).violated, np.flatnonzero(expected))


def test_cut_weights_is_the_per_cluster_cut(rng):
    """The trusting twin COSC uses agrees with the definition edge by edge."""
    from graphclust.metrics import cut_weights

    A = sp.random(15, 15, density=0.3, random_state=0)
    A = sp.triu(A + A.T, k=1).tocoo()
    labels = rng.integers(0, 4, 15)
    per, total = cut_weights(A.row, A.col, A.data, labels, 4)
    expected = np.zeros(4)
    for i, j, w in zip(A.row, A.col, A.data):
        if labels[i] != labels[j]:
            expected[labels[i]] += w
            expected[labels[j]] += w
    np.testing.assert_allclose(per, expected)
    assert total == pytest.approx(expected.sum() / 2) == pytest.approx(gc.metrics.cut(A + A.T, labels))
