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


# ---------------------------------------------------------------------- graph-cut model (issue 28)
def _independent_energy(img, seg, scrib, connectivity=8):
    """The graphcut model's energy rebuilt from its parts by other code: the colour
    model's costs, hard scribbles, and the float64 contrast weights of grid_arrays
    (same formula) times the smoothness."""
    from graphclust.energy import Energy

    model, values = seg.info["colour_model"], seg.info["values"]
    free = model.costs(img.reshape(img.shape[0] * img.shape[1], -1)).astype(np.float64)
    U = free.copy()
    flat = scrib.reshape(-1)
    for k, v in enumerate(values):  # a scribbled pixel may only take its label
        U[flat == v] = np.inf
        U[flat == v, k] = free[flat == v, k]
    edges, w, _ = gc.grid_arrays(img, connectivity, channel_axis=-1 if img.ndim == 3 else None)
    return Energy(U, edges, seg.info["smoothness"] * w)


def test_graphcut_two_labels_is_the_exact_minimum_of_its_model():
    from graphclust.inference import mincut

    img, scrib, truth = noisy_regions(shape=(14, 16), noise=0.5)
    scrib[scrib == 3] = 2
    truth[truth == 3] = 2
    seg = segment(img, scrib, random_state=0)
    assert seg.method == "graphcut" and seg.info["engine"] == "grid_cut"
    on = scrib > 0
    np.testing.assert_array_equal(seg.labels[on], scrib[on])
    E = _independent_energy(img, seg, scrib)
    best = mincut(E, flow="networkx")  # an independent max-flow
    ours = E.evaluate(np.searchsorted(seg.info["values"], seg.labels.reshape(-1)))
    assert ours == pytest.approx(best.energy, rel=1e-5)
    assert seg.energy == pytest.approx(best.energy, rel=1e-5)
    assert np.mean(seg.labels == truth) > 0.9


def test_graphcut_em_rounds_never_raise_the_energy_and_three_labels_use_expansion():
    img, scrib, truth = noisy_regions(colour=True, noise=0.35)
    seg = segment(img, scrib, em_rounds=2, random_state=0)
    assert seg.info["engine"] == "grid_cut" and seg.info["engine_result"].info["moves"] == "expansion"
    energies = seg.info["em_energies"]
    assert len(energies) >= 2
    assert seg.energy == pytest.approx(min(energies)) and seg.energy <= energies[0]
    on = scrib > 0
    np.testing.assert_array_equal(seg.labels[on], scrib[on])
    assert np.mean(seg.labels == truth) > 0.95


@pytest.mark.parametrize("axis", [0, 1])
def test_channel_axis_is_the_same_as_moving_the_axis(axis):
    img, scrib, _ = noisy_regions(shape=(16, 18), colour=True, noise=0.35)
    last = segment(img, scrib, channel_axis=-1, random_state=0)
    moved = segment(np.moveaxis(img, -1, axis), scrib, channel_axis=axis, random_state=0)
    np.testing.assert_array_equal(moved.labels, last.labels)
    assert moved.energy == pytest.approx(last.energy, rel=1e-9)


def test_spacing_divides_each_pair_weight_by_its_length():
    from graphclust._gridseg import contrast_weights, grid_offsets

    rng = np.random.default_rng(1)
    vol = rng.normal(size=(3, 4, 5, 1)).astype(np.float32)
    offsets = grid_offsets(3, 26)
    unit, beta = contrast_weights(vol, offsets, np.ones(3))
    aniso, beta2 = contrast_weights(vol, offsets, np.array([2.0, 1.0, 0.5]), beta=beta)
    for off, a, b in zip(offsets, unit, aniso):
        ratio = np.sqrt(np.sum(np.square(off))) / np.sqrt(np.sum(np.square(np.array(off) * [2.0, 1.0, 0.5])))
        np.testing.assert_allclose(b, a * ratio, rtol=1e-6)
    # and the weight itself: exp(-beta |I_p - I_q|^2) / |offset|, 0 outside the grid
    k = offsets.index((1, 0, 1))
    expected = np.exp(-beta * (vol[1:, :, 1:, 0] - vol[:-1, :, :-1, 0]) ** 2) / np.sqrt(2)
    np.testing.assert_allclose(unit[k][:-1, :, :-1], expected, rtol=1e-5)
    assert not unit[k][-1].any() and not unit[k][:, :, -1].any()


@pytest.mark.parametrize("connectivity", [6, 18, 26])
def test_volume_segmentation_is_the_brute_force_minimum(connectivity):
    from graphclust.energy import Energy
    from graphclust.inference import brute_force

    rng = np.random.default_rng(3)
    truth = np.zeros((2, 2, 3), dtype=int)
    truth[:, :, 2] = 1
    vol = truth + rng.normal(scale=0.4, size=truth.shape)
    scrib = np.zeros(truth.shape, dtype=int)
    scrib[0, 0, 0], scrib[1, 1, 2] = 1, 2
    spacing = (2.0, 1.0, 1.0)
    seg = segment(vol, scrib, connectivity=connectivity, spacing=spacing, n_components=1, random_state=0)
    # the energy rebuilt voxel pair by voxel pair
    model, lam, beta = seg.info["colour_model"], seg.info["smoothness"], seg.info["beta"]
    U = model.costs(vol.reshape(-1, 1)).astype(np.float64)
    U[0, 1] = np.inf
    U[11, 0] = np.inf
    most = {6: 1, 18: 2, 26: 3}[connectivity]
    edges, w = [], []
    coords = list(np.ndindex(vol.shape))
    for i, p in enumerate(coords):
        for j, q in enumerate(coords):
            d = np.subtract(q, p)
            if j > i and np.abs(d).max() == 1 and np.count_nonzero(d) <= most:
                edges.append((i, j))
                w.append(lam * np.exp(-beta * (vol[p] - vol[q]) ** 2) / np.sqrt(np.sum((d * spacing) ** 2)))
    best = brute_force(Energy(U, edges, w), max_nodes=12)
    assert seg.energy == pytest.approx(best.energy, rel=1e-5)
    assert seg.labels.shape == truth.shape


@pytest.mark.parametrize("locality", [0.0, 5.0])
def test_segmenter_strokes_equal_one_cold_segment_with_every_stroke(locality):
    img, scrib, truth = noisy_regions(shape=(30, 36), noise=0.6)
    scrib[scrib == 3] = 2
    truth[truth == 3] = 2
    first = np.zeros_like(scrib)
    first[10, 3:6], first[10, 20:24] = 1, 2
    s = gc.Segmenter(img, first, locality=locality, random_state=0)
    start = s.labels.copy()
    strokes = [(np.argwhere(scrib == 1)[:4], 1), (np.argwhere(scrib == 2)[:6], 2), (np.argwhere(scrib == 1)[4:], 1)]
    for coords, label in strokes:
        before = s.labels.copy()
        r = s.add_stroke(coords, label)
        assert r.warm and r.n_changed == int((s.labels != before).sum())
        np.testing.assert_array_equal(r.changed, s.labels != before)
    assert (s.labels != start).any() or locality  # (with locality the first solve had it right already)
    cold = segment(img, s.scribbles, colour_model=s.model, smoothness=s.smoothness, locality=locality,
                   evidence=s.evidence)
    assert s.energy == pytest.approx(cold.energy, rel=1e-6)  # both exact minima of one energy
    assert np.mean(s.labels == cold.labels) > 0.99
    on = s.scribbles > 0
    np.testing.assert_array_equal(s.labels[on], s.scribbles[on])
    assert s.overlay().shape == img.shape + (3,)
    r = s.refit()
    assert r.labels.shape == img.shape


def test_segmenter_waits_for_every_segment_and_takes_masks():
    img, scrib, truth = noisy_regions(shape=(20, 24), colour=True, noise=0.3)
    s = gc.Segmenter(img, n_segments=3)
    assert s.add_stroke(scrib == 1, label=1).labels is None
    assert s.add_stroke(scrib == 2, label=2).labels is None
    r = s.add_stroke(scrib == 3, label=3)
    assert r.n_changed == img.shape[0] * img.shape[1] and not r.warm
    assert np.mean(s.labels == truth) > 0.95


def test_graphcut_bad_input_is_named():
    img, scrib, _ = noisy_regions(shape=(10, 12))
    with pytest.raises(InvalidParameterError, match="scribbles have shape 5x5 but the image is 10x12"):
        segment(img, np.ones((5, 5), int))
    with pytest.raises(InvalidParameterError, match="scribble label 3 .* beyond the 2 segments"):
        segment(img, scrib, n_segments=2)
    with pytest.raises(InvalidParameterError, match="segment 4 has no scribble"):
        segment(img, scrib, n_segments=4)
    bad = img.copy()
    bad[3, 4] = np.nan
    with pytest.raises(InvalidFeaturesError, match=r"NaN or infinite value at pixel \(row=3, col=4\)"):
        segment(bad, scrib)
    vol = np.zeros((4, 5, 6))
    vscrib = np.zeros((4, 5, 6), int)
    vscrib[0, 0, 0], vscrib[3, 4, 5] = 1, 2
    with pytest.raises(InvalidParameterError, match="scribbles have shape 4x5x5 but the volume is 4x5x6"):
        segment(vol, vscrib[:, :, :5])
    with pytest.raises(InvalidParameterError, match="spacing has 2 entries but the volume has 3 spatial axes"):
        segment(vol, vscrib, spacing=(1.0, 2.0))
    with pytest.raises(InvalidParameterError, match="connectivity must be one of \\[6, 18, 26\\] for a 3-D grid"):
        segment(vol, vscrib, connectivity=8)
    with pytest.raises(InvalidParameterError, match="method='hmrf-bp' segments 2-D images; volumes"):
        segment(vol, n_segments=2)  # no scribbles: the HMRF path, images only
    vol[1, 2, 3] = np.inf
    with pytest.raises(InvalidFeaturesError, match=r"pixel \(plane=1, row=2, col=3\)"):
        segment(vol, vscrib)


def test_segmenter_bad_strokes_are_named():
    img, scrib, _ = noisy_regions(shape=(10, 12))
    s = gc.Segmenter(img, scrib)
    with pytest.raises(InvalidParameterError, match=r"stroke is a mask or label image of shape 10x12 .* got shape"):
        s.add_stroke(np.ones((11, 12), bool), label=1)
    with pytest.raises(InvalidParameterError, match=r"stroke point \(10, 0\) is outside the 10x12 image"):
        s.add_stroke([(0, 0), (10, 0)], label=1)
    with pytest.raises(InvalidParameterError, match="stroke label 4 is beyond the 3 segments"):
        s.add_stroke([(0, 0)], label=4)
    with pytest.raises(InvalidParameterError, match="needs its label"):
        s.add_stroke([(0, 0)])
    assert s.add_stroke([(0, 0), (0, 0)], label=1).labels[0, 0] == 1  # a repeated point is one point


def test_an_image_too_large_for_memory_is_refused_before_allocation():
    from graphclust.errors import ProblemTooLargeError

    huge = np.broadcast_to(np.float32(0.5), (200_000, 200_000))  # a view: no memory behind it
    scrib = np.broadcast_to(np.int8(0), huge.shape)
    with pytest.raises(ProblemTooLargeError, match=r"200000x200000 image .* needs about .* GiB .* bytes per pixel"):
        segment(huge, scrib)
    with pytest.raises(ProblemTooLargeError, match="GiB is available"):
        gc.Segmenter(huge)


def test_segment_memory_peak_stays_within_its_per_pixel_estimate():
    """The grid path allocates no per-pixel array it does not need: the traced peak of
    one segment call on a float32 image stays under the estimate that gates the "too
    large" refusal, and under 64 B/px (61 now, of which 8 are the zero unary of
    ``grid_cut_terminals``, traced but never written, so never resident; 68 while the
    unary was stored, 92 while the pixel problem held int64 counts and float64 vertex
    weights of ones and the float32 image was copied)."""
    import tracemalloc

    from graphclust._gridseg import bytes_per_pixel

    rng = np.random.default_rng(1)
    truth = np.zeros((1024, 1024), bool)  # large enough for the fixed costs not to count
    truth[:, 512:] = True
    img = (truth + rng.normal(scale=0.5, size=truth.shape)).astype(np.float32)
    scrib = np.zeros(truth.shape, np.uint8)
    scrib[100:400:50, 60] = 1
    scrib[100:400:50, 960] = 2
    before = img.copy()
    segment(img[:64, :100].copy(), np.where(np.arange(100) >= 50, 2, 1)[None].repeat(64, 0),
            random_state=0)  # kernels loaded before tracing
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        seg = segment(img, scrib, random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    per_pixel = peak / img.size
    # labels (int64) are returned, so 8 B/px of the peak is the answer itself
    assert per_pixel <= bytes_per_pixel(1, 2, 4), per_pixel
    assert per_pixel < 64, per_pixel
    assert np.array_equal(img, before)  # the image was read, not written
    assert np.mean((seg.labels == 2) == truth) > 0.97


def test_the_pixel_problem_holds_no_per_pixel_arrays_of_ones():
    from graphclust.segmentation import _pixel_problem

    X = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    P = _pixel_problem(X)
    assert P.X is X and P.n_nodes == 6 and P.n_edges == 0
    assert P.counts.strides == (0,) and P.vertex_weights.strides == (0,)
    assert P.counts.tolist() == [1] * 6 and P.vertex_weights.tolist() == [1.0] * 6


def test_locality_prices_a_label_by_the_distance_to_its_strokes():
    from graphclust._gridseg import distance_prior

    seeds = np.full(5 * 9, -1)
    seeds[0], seeds[8] = 0, 1  # label 0 at (0, 0), label 1 at (0, 8)
    prior = distance_prior(seeds, (5, 9), 2, np.ones(2))
    diag = np.hypot(5, 9)
    assert prior[0, 0, 0] == 0 and prior[0, 0, 1] == pytest.approx(8 / diag)
    assert prior[4, 4].tolist() == [0.0, 0.0]  # halfway: no preference
    # dark left, bright right, a grey band between that the colours cannot decide:
    # with locality the band goes to the nearer stroke's label
    img = np.zeros((20, 40))
    img[:, 28:] = 1.0
    img[:, 10:28] = 0.5
    img += np.random.default_rng(0).normal(scale=0.05, size=img.shape)
    scrib = np.zeros((20, 40), int)
    scrib[5:15, 2], scrib[5:15, 37] = 1, 2
    plain = segment(img, scrib, smoothness=0.0, n_components=1, random_state=0)
    local = segment(img, scrib, smoothness=0.0, n_components=1, locality=50.0, random_state=0)
    assert (local.labels[:, 12:18] == 1).mean() > 0.9 and (local.labels[:, 22:28] == 2).mean() > 0.9
    # without it the band is not split by distance (mostly one label takes it)
    assert (plain.labels[:, 12:18] == 1).mean() < 0.5 or (plain.labels[:, 22:28] == 2).mean() < 0.5


def test_segmenter_on_a_volume_takes_voxel_coordinates():
    rng = np.random.default_rng(2)
    truth = np.zeros((6, 10, 12), dtype=int)
    truth[:, :, 6:] = 1
    vol = truth + rng.normal(scale=0.5, size=truth.shape)
    s = gc.Segmenter(vol, n_segments=2, spacing=(2.0, 1.0, 1.0), random_state=0)
    s.add_stroke([(3, 5, 1), (3, 5, 2)], label=1)
    r = s.add_stroke([(3, 5, 10), (3, 5, 9)], label=2)
    assert r.labels.shape == truth.shape and r.n_changed == truth.size
    r = s.add_stroke([(0, 0, 5), (5, 9, 5)], label=1)
    assert r.warm and s.labels[0, 0, 5] == 1 and s.labels[5, 9, 5] == 1
    cold = segment(vol, s.scribbles, spacing=(2.0, 1.0, 1.0), colour_model=s.model, smoothness=s.smoothness)
    assert s.energy == pytest.approx(cold.energy, rel=1e-6)
    with pytest.raises(InvalidParameterError, match=r"stroke point \(6, 0, 0\) is outside the 6x10x12 volume"):
        s.add_stroke([(6, 0, 0)], label=1)


@pytest.mark.parametrize("colour", [False, True])
def test_a_one_shot_two_label_solve_is_the_model_and_its_solve_without_the_unary(colour):
    """``_gridseg.solve_two_labels_once`` (what ``segment`` runs for two labels) gives
    the labels, energy, smoothness and evidence gap of ``grid_model`` + ``solve_grid``,
    whose unary it never stores."""
    from graphclust import _gridseg
    from graphclust.potentials import GaussianMixtures

    img, scrib, _ = noisy_regions(shape=(30, 37), colour=colour, seed=3)
    scrib[scrib == 3] = 2
    n_ch = 3 if colour else 1
    pixels = _gridseg.GridPixels(img.reshape(-1, n_ch).astype(np.float32))
    seeds = np.where(scrib.reshape(-1) > 0, scrib.reshape(-1) - 1, -1).astype(np.int8)
    offsets = _gridseg.grid_offsets(2, 8)
    w, _ = _gridseg.contrast_weights(img.reshape(30, 37, n_ch).astype(np.float32), offsets, np.ones(2))
    model = GaussianMixtures(2, n_components=3, reg=1e-3, random_state=0)
    model.update(pixels, seeds)
    unary, weights, lam, gap = _gridseg.grid_model(model, pixels, seeds, (30, 37), offsets, w.copy(), "auto")
    labels, energy, res = _gridseg.solve_grid(unary, offsets, weights)
    labels1, energy1, res1, lam1, gap1 = _gridseg.solve_two_labels_once(model, pixels, seeds, (30, 37), offsets,
                                                                        w, "auto")
    assert lam1 == pytest.approx(lam, rel=1e-12) and gap1 == gap
    np.testing.assert_array_equal(labels1, labels)
    assert energy1 == pytest.approx(energy, rel=1e-9)
    assert res1.info["unary_stored"] is False and res1.labels.shape == (30 * 37,)
    np.testing.assert_array_equal(w, weights)  # the weights were scaled in place
    seg = segment(img, np.where(scrib == 3, 2, scrib), random_state=0)
    assert seg.info["engine_result"].info.get("unary_stored") is False
