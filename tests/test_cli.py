import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.cli import main


@pytest.fixture
def problem_file(tmp_path):
    G = nx.barbell_graph(5, 0)
    nx.set_node_attributes(G, {u: int(u >= 5) for u in G}, "truth")
    S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(0, 9)], weight=np.inf)
    path = tmp_path / "p.graphml"
    gc.write_graphml(path, G, S)
    return path


def test_check_command(problem_file, capsys):
    assert main(["check", str(problem_file), "--n-clusters", "2"]) == 0
    out = capsys.readouterr().out
    assert "1 must-link, 1 cannot-link" in out and "feasible" in out


def test_check_reports_infeasible(tmp_path, capsys):
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], cannot=[(0, 2)], weight=np.inf)
    path = tmp_path / "bad.graphml"
    gc.write_graphml(path, nx.path_graph(3), S)
    assert main(["check", str(path)]) == 1
    assert "must-link path 0 - 1 - 2 joins nodes 0 and 2" in capsys.readouterr().out


def test_cluster_writes_labels_and_scores(problem_file, tmp_path, capsys):
    out = tmp_path / "out.graphml"
    before = problem_file.read_bytes()
    assert main(["cluster", str(problem_file), "--method", "spectral", "--n-clusters", "2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "NMI=1.0000" in text and "0/1 must, 0/1 cannot" in text
    G, S = gc.read_graphml(out)
    labels = [G.nodes[u]["cluster"] for u in range(10)]
    assert len(set(labels[:5])) == 1 and len(set(labels[5:])) == 1 and labels[0] != labels[9]
    assert len(S) == 2
    assert problem_file.read_bytes() == before  # input untouched


def test_unknown_method_lists_available(problem_file, capsys):
    assert main(["cluster", str(problem_file), "--method", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown method 'nope'; available:" in err and "spectral" in err


def test_malformed_file_is_a_clean_error(tmp_path, capsys):
    bad = tmp_path / "bad.graphml"
    bad.write_text("<graphml><graph edgedefault='undirected'><node id='a'/>")
    assert main(["check", str(bad)]) == 2
    assert "graphclust: error:" in capsys.readouterr().err


def test_demo_runs_every_method(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "150 nodes" in out
    for name in gc.base.METHODS:
        assert name in out
    row = next(line for line in out.splitlines() if line.startswith("spectral"))
    assert float(row.split()[2]) > 0.7  # NMI of the baseline on iris


def test_param_parsing(problem_file, capsys):
    assert main(["cluster", str(problem_file), "--method", "spectral", "--param", "n_init=2"]) == 0
    assert main(["cluster", str(problem_file), "--method", "spectral", "--param", "bogus=2"]) == 2
    assert "has no parameter 'bogus'" in capsys.readouterr().err


def test_check_lists_the_suspects(tmp_path, capsys):
    S = gc.SideInfo([(0, 1, 2.0), (1, 2, 0.5), (2, 3, 2.0), (0, 3, -1.0)])
    path = tmp_path / "noisy.graphml"
    gc.write_graphml(path, nx.path_graph(4), S)
    assert main(["check", str(path), "--suspects"]) == 0
    out = capsys.readouterr().out
    assert "1 likely-wrong constraint(s) of total weight 0.5" in out and "must-link (1, 2)" in out
    main(["check", str(path)])
    assert "likely-wrong" not in capsys.readouterr().out


def test_version_and_every_option_has_help(capsys):
    import argparse

    from graphclust import __version__
    from graphclust.cli import _parser, main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"graphclust {__version__}"
    parser = _parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        for action in command._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"graphclust {name} {action.option_strings[0]} has no help text"
        text = command.format_help()
        for action in command._actions:
            if action.option_strings and not any(action.default is v for v in (None, False, argparse.SUPPRESS)):
                assert f"(default: {action.default})" in " ".join(text.split()), (name, action.dest)
