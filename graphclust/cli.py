"""The ``graphclust`` command line: check, cluster and demo over GraphML files.

Examples::

    graphclust check problem.graphml --n-clusters 3
    graphclust cluster problem.graphml --method spectral --n-clusters 3 --out result.graphml
    graphclust methods
    graphclust demo
"""

import argparse
import ast
import sys
import time

import numpy as np

from .errors import GraphclustError

__all__ = ["main"]


def _parse_options(items):
    """``key=value`` pairs; values read as Python literals when they parse, else strings."""
    options = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise GraphclustError(f"--param {item!r}: expected key=value")
        try:
            options[key.replace("-", "_")] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            options[key.replace("-", "_")] = value
    return options


def _methods():
    from .base import METHODS

    return METHODS


def _build(method, n_clusters, random_state, options):
    methods = _methods()
    if method not in methods:
        raise GraphclustError(f"unknown method {method!r}; available: {', '.join(sorted(methods)) or '(none)'}")
    factory, _ = methods[method]
    est = factory(n_clusters=n_clusters, random_state=random_state)
    if options:
        est.set_params(**options)
    return est


def _truth(G):
    truth = {u: d["truth"] for u, d in G.nodes(data=True) if "truth" in d}
    return truth if len(truth) == G.number_of_nodes() else None


def _cmd_check(args):
    if args.suspects:  # the suspects may weigh the node features: the graph as the user gave it
        from .io import read_graphml

        data, S = read_graphml(args.file, side=args.side)
        n_nodes, n_edges = data.number_of_nodes(), data.number_of_edges()
    else:  # the constraints and the node list only: no networkx graph, no feature matrix
        from .io.graphml_read import _read_problem

        data, S, n_edges = _read_problem(args.file, side=args.side, features=False, allow_empty=True)
        n_nodes = data.n_nodes
    report = S.check(data, n_clusters=args.n_clusters)
    print(f"{args.file}: {n_nodes} nodes, {n_edges} data edges")
    print(report.summary())
    if args.suspects and report.conflicts and not report.hard_conflicts:
        from .conflict_repair import suspects

        print(suspects(S, data).summary())
    return 0 if report.feasible else 1


def _cmd_cluster(args):
    from .io import read_graphml, write_graphml
    from .metrics import ari, nmi

    G, S = read_graphml(args.file, side=args.side)
    options = _parse_options(args.param)
    if args.inference:
        options["inference"] = args.inference
    est = _build(args.method, args.n_clusters, args.random_state, options)
    est.fit(G, S)
    v = est.result_.violations
    print(f"method={args.method} clusters={est.n_clusters_} seconds={est.result_.seconds:.3f}")
    if est.result_.objective is not None:
        print(f"objective={est.result_.objective:.6g}")
    print(f"violated constraints: {v.n_must_violated}/{v.n_must} must, {v.n_cannot_violated}/{v.n_cannot} cannot")
    truth = _truth(G)
    if truth is not None:
        y = [truth[u] for u in est.nodes_]
        print(f"against node attribute 'truth': NMI={nmi(y, est.labels_):.4f} ARI={ari(y, est.labels_):.4f}")
    if args.out:
        write_graphml(args.out, G, S, labels=est.partition_, label_name=args.label_name)
        print(f"wrote {args.out} (node attribute {args.label_name!r})")
    return 0


def _cmd_methods(args):
    print(f"{'method':12s} {'input':18s} description")
    for name, (factory, description) in sorted(_methods().items()):
        needs = factory(n_clusters=2, random_state=0)._needs_features()
        print(f"{name:12s} {'node features' if needs else 'graph or features':18s} {description}")
    return 0


def _cmd_demo(args):
    from .datasets import load_demo
    from .metrics import ari, nmi

    G, S, y, n_clusters = load_demo()
    print(
        f"demo problem: {G.number_of_nodes()} nodes, {G.number_of_edges()} edges, "
        f"{len(S.must_links())} must-links, {len(S.cannot_links())} cannot-links, {n_clusters} classes"
    )
    methods = args.methods or sorted(_methods())
    runs = []
    for name in methods:
        factory = _methods().get(name, (None,))[0]
        probe = factory(n_clusters=n_clusters, random_state=args.random_state) if factory else None
        if probe is not None and "inference" in probe.get_params():
            runs += [(f"{name} ({engine})", name, {"inference": engine}) for engine in ("icm", "bp", "lp")]
        else:
            runs.append((name, name, {}))
    if not methods:
        print("no clustering methods are registered")
        return 1
    header = f"{'method':18s} {'clusters':>8s} {'NMI':>7s} {'ARI':>7s} {'violated':>9s} {'seconds':>8s}"
    print(header)
    print("-" * len(header))
    status = 0
    for label, name, options in runs:
        try:
            est = _build(name, n_clusters, args.random_state, options)
            start = time.perf_counter()
            est.fit(G, S)
            seconds = time.perf_counter() - start
        except GraphclustError as exc:
            print(f"{label:18s} failed: {exc}")
            status = 1
            continue
        labels = np.asarray([est.partition_[u] for u in G.nodes])
        v = est.result_.violations
        print(
            f"{label:18s} {est.n_clusters_:8d} {nmi(y, labels):7.3f} {ari(y, labels):7.3f} "
            f"{v.n_violated:4d}/{v.n_must + v.n_cannot:<4d} {seconds:8.3f}"
        )
    return status


def _auto_or_float(text):
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'auto', got {text!r}") from None


def _cmd_segment(args):
    from .segmentation import overlay, read_image, segment, write_label_image

    image = read_image(args.image)
    scribbles = read_image(args.scribbles, what="scribble image") if args.scribbles else None
    options = _parse_options(args.param)
    seg = segment(image, scribbles, n_segments=args.n_segments, method=args.method, graph=args.graph,
                  connectivity=args.connectivity, smoothness=args.smoothness, n_superpixels=args.n_superpixels,
                  random_state=args.random_state, progress=args.progress, **options)
    print(f"method={args.method} graph={args.graph} nodes={seg.info['n_nodes']} "
          f"segments={len(np.unique(seg.labels))} seconds={seg.seconds:.3f}")
    if seg.energy is not None:
        bound = f" lower_bound={seg.lower_bound:.6g}" if seg.lower_bound is not None else ""
        print(f"energy={seg.energy:.6g}{bound}")
    # a palette PNG shows the segments in colour and still holds the labels as its pixels
    write_label_image(args.out, seg.labels, palette=not args.raw_labels and seg.labels.max() < 256)
    print(f"wrote {args.out}")
    if args.overlay:
        write_label_image(args.overlay, overlay(image, seg.labels))
        print(f"wrote {args.overlay}")
    return 0


class _DefaultsShown(argparse.HelpFormatter):
    """Every option's help ends with its default, when it has one worth saying."""

    def _get_help_string(self, action):
        text = action.help or ""
        said = not any(action.default is v for v in (None, False, argparse.SUPPRESS))  # 0 is a default to say
        if said and action.option_strings and "%(default)" not in text:
            text += " (default: %(default)s)"
        return text


def _parser():
    from . import __version__

    fmt = _DefaultsShown
    p = argparse.ArgumentParser(prog="graphclust", description="Clustering with side information over GraphML files.",
                                formatter_class=fmt)
    p.add_argument("--version", action="version", version=f"graphclust {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("check", formatter_class=fmt, help="report what the constraints in a file imply")
    c.add_argument("file", help="GraphML file (data edges + kind=must/cannot edges)")
    c.add_argument("--side", help="side information in a second GraphML file or a CSV edge list")
    c.add_argument("--n-clusters", type=int, help="also check feasibility with this many clusters")
    c.add_argument("--suspects", action="store_true",
                   help="list the likely-wrong soft constraints: the lightest set whose removal leaves no conflict")
    c.set_defaults(func=_cmd_check)

    c = sub.add_parser("cluster", formatter_class=fmt, help="cluster a GraphML file and write the labels")
    c.add_argument("file", help="GraphML file: the data graph, optionally with kind=must/cannot edges")
    c.add_argument("--method", required=True, help="a registered method (see 'graphclust methods')")
    c.add_argument("-k", "--n-clusters", type=int, default=2, help="number of clusters (a hint for RDP-means)")
    c.add_argument("--inference", help="E-step engine for HMRF methods: auto (the default: bp with cannot-links, "
                   "mincut or expansion without), icm, bp, lp, exact, expansion, ...")
    c.add_argument("--side", help="side information in a second GraphML file or a CSV edge list")
    c.add_argument("--random-state", type=int, default=0, help="seed of every random choice")
    c.add_argument("--param", action="append", metavar="KEY=VALUE", help="extra estimator parameter (repeatable)")
    c.add_argument("--out", help="write the graph with the labels as a node attribute (atomic)")
    c.add_argument("--label-name", default="cluster", help="name of the node attribute the labels are written to")
    c.set_defaults(func=_cmd_cluster)

    c = sub.add_parser("segment", formatter_class=fmt, help="segment an image from scribbles (image extra)")
    c.add_argument("image", help="image file (PNG, JPEG, TIFF, ...)")
    c.add_argument("--scribbles", help="scribble image of the same size: 0/black = none, labels or colours")
    c.add_argument("--method", default="auto",
                   help="auto (graphcut with scribbles, hmrf-bp without), graphcut, hmrf-bp, hmrf-icm, hmrf-lp, "
                        "cosc or rdpmeans")
    c.add_argument("--graph", default="grid", choices=["grid", "superpixels"],
                   help="pixel grid, or a graph over SLIC superpixels (faster on large images)")
    c.add_argument("-k", "--n-segments", type=int, help="number of segments (required without scribbles)")
    c.add_argument("--connectivity", type=int, default=8, choices=[4, 8], help="pixel neighbours of the grid")
    c.add_argument("--smoothness", type=_auto_or_float, default="auto",
                   help="weight of the contrast-sensitive edges, or auto (data-driven for graphcut, 1 otherwise)")
    c.add_argument("--n-superpixels", type=int, default=400, help="with --graph superpixels: about this many")
    c.add_argument("--random-state", type=int, default=0, help="seed of every random choice")
    c.add_argument("--param", action="append", metavar="KEY=VALUE", help="extra engine/estimator option")
    c.add_argument("--progress", action="store_true", help="show a progress bar")
    c.add_argument("--out", required=True,
                   help="label image to write (atomic): a palette PNG whose pixels are the labels, shown in colour")
    c.add_argument("--raw-labels", action="store_true", help="write --out as plain grey labels 1..k instead")
    c.add_argument("--overlay", help="also write the image with the segments painted over it")
    c.set_defaults(func=_cmd_segment)

    c = sub.add_parser("methods", formatter_class=fmt, help="list the registered methods")
    c.set_defaults(func=_cmd_methods)

    c = sub.add_parser("demo", formatter_class=fmt, help="run every registered method on the shipped demo problem")
    c.add_argument("--methods", nargs="*", help="only these methods (default: all)")
    c.add_argument("--random-state", type=int, default=0, help="seed of every random choice")
    c.set_defaults(func=_cmd_demo)
    return p


def main(argv=None):
    """Entry point of the ``graphclust`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except GraphclustError as exc:
        print(f"graphclust: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"graphclust: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
