"""Image segmentation: scribbles, graphs, every method, the label image, the CLI."""

import numpy as np
import pytest

import graphclust as gc
from graphclust.cli import main
from graphclust.errors import ImageReadError, InvalidFeaturesError, InvalidParameterError
from graphclust.segmentation import (
    overlay,
    read_image,
    scribble_labels,
    scribbles_to_side_info,
    segment,
    superpixel_graph,
    write_label_image,
)

pytest.importorskip("skimage")


def noisy_regions(shape=(40, 48), noise=0.45, seed=0, colour=False):
    """Three vertical bands (labels 1, 2, 3) with Gaussian noise, and a few scribbled
    pixels inside each band."""
    rows, cols = shape
    truth = np.ones(shape, dtype=np.int64)
    truth[:, cols // 3:] = 2
    truth[:, 2 * cols // 3:] = 3
    levels = np.array([0.0, 0.0, 1.0, 2.0])
    img = levels[truth] + np.random.default_rng(seed).normal(scale=noise, size=shape)
    if colour:
        palette = np.array([[0, 0, 0], [0.1, 0.2, 0.9], [0.9, 0.1, 0.1], [0.1, 0.9, 0.2]])
        img = palette[truth] + np.random.default_rng(seed).normal(scale=noise, size=shape + (3,))
    scrib = np.zeros(shape, dtype=np.int64)
    for lab, c in ((1, cols // 6), (2, cols // 2), (3, 5 * cols // 6)):
        scrib[rows // 4: 3 * rows // 4: 3, c] = lab
    return img, scrib, truth


@pytest.mark.parametrize("method", ["hmrf-bp", "hmrf-icm", "hmrf-lp"])
def test_hmrf_methods_are_accurate_and_keep_every_scribble(method):
    img, scrib, truth = noisy_regions()
    seg = segment(img, scrib, method=method, random_state=0)
    assert seg.labels.shape == truth.shape and seg.labels.dtype == np.int64
    on = scrib > 0
    np.testing.assert_array_equal(seg.labels[on], scrib[on])  # hard: scribbles always hold
    assert np.mean(seg.labels == truth) > 0.9
    assert np.isfinite(seg.energy)
    if method == "hmrf-lp":
        assert seg.lower_bound <= seg.energy + 1e-6


def test_smoothing_beats_the_colour_model_alone():
    img, scrib, truth = noisy_regions(noise=0.6)
    smooth = segment(img, scrib, random_state=0)
    alone = segment(img, scrib, smoothness=0.0, random_state=0)
    assert np.mean(smooth.labels == truth) > np.mean(alone.labels == truth) + 0.05


def test_energy_of_the_answer_is_the_energy_reported():
    # recompute the energy from the returned label image with an independent formula
    img, scrib, _ = noisy_regions(shape=(12, 15))
    # the single-Gaussian model of the hmrf methods (the default became "graphcut", whose
    # energy is checked against an independent max-flow in test_graphcut_*)
    seg = segment(img, scrib, method="hmrf-bp", connectivity=4, smoothness=0.7, random_state=0)
    mu, var = seg.info["colour_means"][:, 0], seg.info["colour_vars"][:, 0]
    k = np.searchsorted([1, 2, 3], seg.labels)
    unary = 0.5 * ((img - mu[k]) ** 2 / var[k] + np.log(2 * np.pi * var[k]))
    edges, w, _ = gc.grid_arrays(img, 4)
    flat = seg.labels.reshape(-1)
    pair = 0.7 * w[flat[edges[:, 0]] != flat[edges[:, 1]]].sum()
    assert seg.energy == pytest.approx(unary.sum() + pair, rel=1e-9)


def test_colour_image_and_colour_scribbles():
    img, scrib, truth = noisy_regions(colour=True, noise=0.3)
    rgb = np.zeros(scrib.shape + (3,), dtype=np.uint8)
    colours = {1: [255, 0, 0], 2: [0, 255, 0], 3: [0, 0, 255]}
    for lab, c in colours.items():
        rgb[scrib == lab] = c
    lab = scribble_labels(rgb, img.shape[:2])
    assert sorted(np.unique(lab).tolist()) == [0, 1, 2, 3]
    seg = segment(img, rgb, random_state=0)
    # the colour labels are numbered by colour value: map them back by the scribbles
    mapping = {int(lab[scrib == k][0]): k for k in (1, 2, 3)}
    mapped = np.vectorize(mapping.get)(seg.labels)
    assert np.mean(mapped == truth) > 0.9


def test_without_scribbles_needs_n_segments_and_finds_the_bands():
    img, _, truth = noisy_regions(noise=0.3)
    with pytest.raises(InvalidParameterError, match="give scribbles or n_segments"):
        segment(img)
    seg = segment(img, n_segments=3, random_state=0)
    assert gc.ari(truth.reshape(-1), seg.labels.reshape(-1)) > 0.8


def test_superpixel_graph_and_segmentation():
    img, scrib, truth = noisy_regions(shape=(60, 60), noise=0.15, colour=True)
    segments, W, means, counts = superpixel_graph(img, 80)
    n = W.shape[0]
    assert segments.shape == img.shape[:2] and segments.max() == n - 1
    assert counts.sum() == img.shape[0] * img.shape[1]
    assert (W != W.T).nnz == 0 and W.diagonal().sum() == 0 and W.nnz > 0
    # superpixels are adjacent exactly when their pixels touch
    a = np.concatenate([segments[:, :-1].ravel(), segments[:-1, :].ravel()])
    b = np.concatenate([segments[:, 1:].ravel(), segments[1:, :].ravel()])
    touching = {(min(x, y), max(x, y)) for x, y in zip(a.tolist(), b.tolist()) if x != y}
    upper = W.tocoo()
    assert {(int(i), int(j)) for i, j in zip(upper.row, upper.col) if i < j} == touching
    for method in ("hmrf-bp", "cosc"):
        seg = segment(img, scrib, method=method, graph="superpixels", n_superpixels=80,
                      random_state=0)
        assert seg.segments is not None and seg.labels.shape == truth.shape
        assert np.mean(seg.labels == truth) > 0.85, method


def test_cosc_keeps_scribbles_on_a_small_grid():
    img, scrib, truth = noisy_regions(shape=(16, 18), noise=0.2)
    two = np.where(truth == 3, 2, truth)
    s2 = np.where(scrib == 3, 2, scrib)
    seg = segment(img, s2, method="cosc", connectivity=4, random_state=0)
    on = s2 > 0
    np.testing.assert_array_equal(seg.labels[on], s2[on])
    assert np.mean(seg.labels == two) > 0.85


def test_rdpmeans_segments_colours_with_scribble_names():
    img, scrib, truth = noisy_regions(shape=(20, 24), noise=0.1)
    seg = segment(img, scrib, method="rdpmeans", random_state=0)
    assert seg.labels.shape == truth.shape
    assert np.mean(seg.labels == truth) > 0.9  # clusters named after the scribbles inside them


def test_scribbles_to_side_info_is_sparse_and_complete():
    _, scrib, _ = noisy_regions(shape=(10, 12))
    S = scribbles_to_side_info(scrib)
    n_on = int((scrib > 0).sum())
    assert len(S.must_links()) == n_on - 3 and len(S.cannot_links()) == 3
    rep = gc.SideInfo.check(S)
    assert rep.feasible and rep.n_components == 3 + 0 * n_on
    cells = scribbles_to_side_info(scrib, nodes="cells")
    assert all(isinstance(u, tuple) for u, _, _ in cells.must_links())


def test_side_info_graphml_round_trip_with_the_grid(tmp_path):
    img, scrib, truth = noisy_regions(shape=(10, 12), noise=0.2)
    G = gc.grid_graph(img, 4)
    S = scribbles_to_side_info(scrib, nodes="cells")
    path = tmp_path / "scene.graphml"
    gc.write_graphml(path, G, S)
    G2, S2 = gc.read_graphml(path)
    assert sorted(S2.must_links()) == sorted(S.must_links())
    est = gc.HMRF(gc.potentials.Centroids(3), smoothness=0.5, random_state=0).fit(G2, S2)
    assert gc.ari(truth.reshape(-1), est.labels_) > 0.8


@pytest.mark.parametrize("bad, match", [
    (dict(scribbles=np.zeros((5, 5), int)), "scribbles have shape 5x5 but the image is 10x12"),
    (dict(method="maxflow"), "method must be one of"),  # "graphcut" became a method (issue 28)
    (dict(graph="voxels"), "graph must be 'grid' or 'superpixels'"),
    (dict(smoothness=-1.0), "smoothness must be >= 0"),
])
def test_bad_arguments_are_named(bad, match):
    img, scrib, _ = noisy_regions(shape=(10, 12))
    kwargs = dict(scribbles=scrib) | bad
    with pytest.raises(InvalidParameterError, match=match):
        segment(img, **kwargs)


def test_bad_pixels_and_scribbles_are_named():
    img, scrib, _ = noisy_regions(shape=(10, 12))
    img[3, 4] = np.nan
    with pytest.raises(InvalidFeaturesError, match=r"pixel \(row=3, col=4\)"):
        segment(img, scrib)
    neg = scrib.copy()
    neg[2, 2] = -1
    with pytest.raises(InvalidParameterError, match=r"negative label at pixel \(row=2, col=2\)"):
        scribble_labels(neg)
    with pytest.raises(InvalidParameterError, match="at least two segments"):
        segment(np.zeros((6, 6)), np.pad([[1]], ((0, 5), (0, 5))), method="cosc")


def test_overlay_and_label_image_files(tmp_path):
    img, scrib, _ = noisy_regions(shape=(10, 12))
    seg = segment(img, scrib, random_state=0)
    ov = seg.overlay(img)
    assert ov.shape == (10, 12, 3) and ov.min() >= 0.0 and ov.max() <= 1.0
    with pytest.raises(InvalidParameterError, match="labels have shape"):
        overlay(img, seg.labels[:5])
    path = tmp_path / "labels.png"
    write_label_image(path, seg.labels)
    np.testing.assert_array_equal(read_image(path), seg.labels)
    # a failed write leaves the old file in place
    with pytest.raises(InvalidParameterError):
        write_label_image(path, -seg.labels)
    np.testing.assert_array_equal(read_image(path), seg.labels)
    assert [p.name for p in tmp_path.iterdir()] == ["labels.png"]


def _overlay_before_scikit_image(image, labels, alpha):
    """The overlay graphclust drew itself before it used scikit-image: a linear tint by
    the palette (label v in colour v mod 10), and the pixels whose left or upper
    neighbour differs darkened."""
    from graphclust.segmentation import _PALETTE

    lo, hi = image.min(), image.max()
    rgb = (image - lo) / (hi - lo)
    rgb = np.repeat(rgb[:, :, None], 3, axis=2) if rgb.ndim == 2 else rgb
    out = (1 - alpha) * rgb + alpha * _PALETTE[labels % len(_PALETTE)]
    edge = np.zeros(labels.shape, dtype=bool)
    edge[:, 1:] |= labels[:, 1:] != labels[:, :-1]
    edge[1:, :] |= labels[1:, :] != labels[:-1, :]
    return out, edge


@pytest.mark.parametrize("channels", [None, 3])
def test_overlay_by_scikit_image_matches_the_previous_drawing(channels):
    rng = np.random.default_rng(0)
    shape = (24, 30) if channels is None else (24, 30, channels)
    img = rng.random(shape)
    labels = np.repeat(np.repeat(rng.integers(0, 13, (6, 6)), 4, axis=0), 5, axis=1)  # 13 labels > palette size
    labels[labels == 3] = 4  # a label absent: the ones above it keep their colours
    before, edge = _overlay_before_scikit_image(img, labels, 0.45)
    np.testing.assert_allclose(overlay(img, labels, boundaries=False), before, atol=1e-3)
    after = overlay(img, labels)
    # boundaries: both pixels of each differing pair of neighbours (the old one and its
    # left or upper partner), drawn black; everything else as before
    thick = edge.copy()
    thick[:, :-1] |= edge[:, 1:] & (labels[:, 1:] != labels[:, :-1])
    thick[:-1, :] |= edge[1:, :] & (labels[1:, :] != labels[:-1, :])
    assert (after[thick] == 0).all()
    np.testing.assert_allclose(after[~thick], before[~thick], atol=1e-3)
    assert edge.any() and (thick & ~edge).any()


def test_cli_segment_writes_labels_and_overlay(tmp_path, capsys):
    img, scrib, truth = noisy_regions(shape=(30, 36), noise=0.3)
    image_path, scrib_path = tmp_path / "img.png", tmp_path / "scrib.png"
    write_label_image(image_path, np.clip((img + 0.5) / 3.0, 0, 1))  # an 8-bit grey picture
    write_label_image(scrib_path, scrib)
    out, ov = tmp_path / "labels.png", tmp_path / "overlay.png"
    assert main(["segment", str(image_path), "--scribbles", str(scrib_path), "--out", str(out),
                 "--overlay", str(ov)]) == 0
    labels = read_image(out, palette_indices=True)
    assert labels.shape == truth.shape and np.mean(labels == truth) > 0.85
    colours = read_image(out)  # what a viewer shows: one distinct colour per segment
    assert colours.shape[:2] == truth.shape and colours.shape[2] in (3, 4)
    assert len(np.unique(colours.reshape(-1, colours.shape[2]), axis=0)) == len(np.unique(labels))
    assert not (colours[..., :3] == 0).all(axis=-1).any()  # no segment drawn black
    assert read_image(ov).shape == truth.shape + (3,)
    assert "wrote" in capsys.readouterr().out
    raw = tmp_path / "raw.png"
    assert main(["segment", str(image_path), "--scribbles", str(scrib_path), "--out", str(raw), "--raw-labels"]) == 0
    np.testing.assert_array_equal(read_image(raw), labels)


def test_cli_segment_errors(tmp_path, capsys):
    image_path = tmp_path / "img.png"
    write_label_image(image_path, np.zeros((8, 8), dtype=np.uint8))
    small = tmp_path / "small.png"
    write_label_image(small, np.ones((4, 4), dtype=np.uint8))
    assert main(["segment", str(image_path), "--scribbles", str(small), "--out", str(tmp_path / "o.png")]) == 2
    assert "scribbles have shape 4x4 but the image is 8x8" in capsys.readouterr().err
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    assert main(["segment", str(broken), "--out", str(tmp_path / "o.png")]) == 2
    assert "cannot read image file" in capsys.readouterr().err
    with pytest.raises(ImageReadError, match="does not exist"):
        read_image(tmp_path / "missing.png")
    assert not (tmp_path / "o.png").exists()


def test_superpixels_without_scribbles_weigh_regions_by_their_pixels():
    img, _, truth = noisy_regions(shape=(60, 60), noise=0.1, colour=True)
    seg = segment(img, n_segments=3, graph="superpixels", n_superpixels=200, random_state=0)
    est = seg.info["estimator"]
    assert est.problem_.counts.sum() == 60 * 60  # every pixel counted once
    assert gc.ari(truth.reshape(-1), seg.labels.reshape(-1)) > 0.9


def test_an_engine_registered_outside_segments(rng):
    """segment(method="hmrf-<name>") runs any registered engine on its energy."""
    from graphclust.inference import ENGINES, icm, register_engine

    calls = []

    @register_engine("test-counting-icm")
    def counting_icm(energy, **options):
        calls.append(energy.n_nodes)
        return icm(energy, **options)

    try:
        img = np.zeros((12, 12))
        img[:, 6:] = 1.0
        img += rng.normal(scale=0.2, size=img.shape)
        scrib = np.zeros((12, 12), dtype=int)
        scrib[3, 1:4], scrib[8, 8:11] = 1, 2
        ours = gc.segment(img, scrib, method="hmrf-icm", random_state=0)
        theirs = gc.segment(img, scrib, method="hmrf-test-counting-icm", random_state=0)
        assert calls == [144]
        np.testing.assert_array_equal(theirs.labels, ours.labels)
    finally:
        del ENGINES["test-counting-icm"]
    with pytest.raises(InvalidParameterError, match="'hmrf-' and a registered engine .*got 'hmrf-nope'"):
        gc.segment(img, scrib, method="hmrf-nope")
