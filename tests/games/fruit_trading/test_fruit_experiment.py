"""The experiment end to end, its files, resuming through the cache, and the CLI."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from games.fruit_trading import figures
from games.fruit_trading.experiment import ExperimentSettings, run_experiment
from gt_llm.backends.scripted import SCRIPTED_MODEL_NAME
from solvers.writers import finite_or_none
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[3]
PNG = b"\x89PNG\r\n\x1a\n"
PNGS = ("fig6_agreements.png", "fig7_nashconv_cfrgain.png", "fig8_ratio.png")
CSVS = (
    "table1_guesses.csv",
    "fig6_agreements.csv",
    "table2_3_payoff_signs.csv",
    "curves_tone.csv",
    "curves_tone_per_tree.csv",
    "curves_tone_belief.csv",
    "curves_tone_belief_per_tree.csv",
    "ess.csv",
    "generalisation.csv",
    "whole_game.csv",
)


def _settings(out: Path, **kw) -> ExperimentSettings:
    base = dict(inits=2, iterations=30, out=str(out), progress=False, max_messages=3)
    return ExperimentSettings(**{**base, **kw})


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("fruit_run")
    result = run_experiment(_settings(out))
    return out, result


def _reject_constant(name: str):
    raise ValueError(f"not strict JSON: {name}")


def _strict_json(path: Path):
    return json.loads(path.read_text(), parse_constant=_reject_constant)


def _nan_to_none(o):
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: _nan_to_none(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_nan_to_none(v) for v in o]
    return o


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_summary_json(run_dir):
    out, result = run_dir
    summary = _strict_json(out / "summary.json")
    assert summary == _nan_to_none(result.summary)
    # Tables 2 and 3 cover the last two messages (here max_messages=3).
    signs = [r["message"] for r in summary["variants"]["tone"]["payoff_signs"]]
    assert signs == [2, 3]
    assert summary["backend"] == "scripted"
    assert summary["model"] == SCRIPTED_MODEL_NAME
    assert summary["is_llm"] is False
    assert "not an LLM" in summary["label"]
    assert set(summary["variants"]) == {"tone", "tone+belief"}
    for v in summary["variants"].values():
        f = v["final"]
        assert f["iteration"] == 30
        assert f["nash_conv_mean"] >= 0 and math.isfinite(f["cfr_gain_mean"])
        assert len(v["trees"]) == 2 and [t["init"] for t in v["trees"]] == [0, 1]
        assert len(v["ess_first_iteration"]) == 2
        assert [r["message"] for r in v["agreements"]] == [1, 2, 3]
        # The whole game is solved on fixed names and shared pools (other trees).
        assert (v["whole_game"]["names"], v["whole_game"]["pools"]) == ("fixed", "shared")
        assert v["whole_game"]["nodes"] > 1
        assert len(v["generalisation"]["matrix"]) == 2
    guesses = summary["variants"]["tone+belief"]["guesses"]
    assert [r["message"] for r in guesses] == [1, 2, 3]
    assert "guesses" not in summary["variants"]["tone"]
    assert summary["fallbacks_total"] == 0
    assert summary["llm_calls"]["misses"] > 0
    assert summary["settings"]["inits"] == 2
    assert (out / "tables.md").read_text().startswith("Model: **")


def test_percentage_over_nothing_is_written_as_null():
    # A percentage over zero histories is NaN in memory and null in summary.json.
    data = {"a": [float("nan"), 1.5, np.float64("inf")], "b": np.array([1.0, np.nan])}
    assert finite_or_none(data) == {"a": [None, 1.5, None], "b": [1.0, None]}
    json.dumps(finite_or_none(data), allow_nan=False)


def test_csvs_and_pngs(run_dir):
    out, _ = run_dir
    for name in CSVS:
        rows = _rows(out / name)
        assert rows, name
        assert {r["backend"] for r in rows} == {"scripted"}, name
        assert {r["model"] for r in rows} == {SCRIPTED_MODEL_NAME}, name
    assert {r["variant"] for r in _rows(out / "table1_guesses.csv")} == {"tone+belief"}
    assert {r["variant"] for r in _rows(out / "fig6_agreements.csv")} == {"tone", "tone+belief"}
    curves = _rows(out / "curves_tone.csv")
    assert int(curves[-1]["iteration"]) == 30
    assert {"nash_conv_mean", "cfr_gain_mean", "ratio_mean"} <= set(curves[0])
    for name in PNGS:
        data = (out / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 2000, name


def test_resume_makes_no_new_calls(run_dir):
    out, first = run_dir
    again = run_experiment(_settings(out))
    assert again.summary["llm_calls"]["misses"] == 0
    assert again.summary["llm_calls"]["hits"] > 0
    for v in ("tone", "tone+belief"):
        assert again.summary["variants"][v]["final"] == first.summary["variants"][v]["final"]
        assert again.summary["variants"][v]["trees"] == first.summary["variants"][v]["trees"]


def test_figures_redraw_from_files(run_dir):
    out, _ = run_dir
    for name in PNGS:
        (out / name).unlink()
    paths = figures.draw_all(out)
    assert [p.name for p in paths] == list(PNGS)
    for name in PNGS:
        assert (out / name).read_bytes().startswith(PNG)


def test_settings_validation(tmp_path):
    for kw in (
        {"inits": 0},
        {"iterations": 0},
        {"variants": ()},
        {"variants": ("foo",)},
        {"max_messages": 1},
        {"num_seeds": 0},
        {"payoff": "guess"},
    ):
        with pytest.raises(ValueError):
            _settings(tmp_path, **kw)


# --- command line --------------------------------------------------------------------------


def _cli(args, env, cwd):
    return run_cli(args, env=env, cwd=cwd)


@pytest.mark.parametrize(
    "extra",
    [
        ["--inits", "0"],
        ["--iterations", "-1"],
        ["--variants", "foo"],
        ["--variants", "tone,tone+oracle"],
        ["--names", "odd"],
        ["--processes", "0"],
        ["--backend", "nope"],
        ["--out", "/proc/forbidden"],
    ],
)
def test_cli_invalid_values_exit_2_with_one_line(extra, child_env, tmp_path):
    args = ["fruit-trading", "run", "--no-progress", "--out", str(tmp_path / "o"), *extra]
    proc = _cli(args, child_env, tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "error" in lines[0]
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    # Nothing was run.
    assert not (tmp_path / "o" / "summary.json").exists()


def test_cli_tiny_run_and_figures(child_env, tmp_path):
    out = tmp_path / "res"
    args = [
        "fruit-trading", "run", "--inits", "1", "--iterations", "5", "--max-messages", "3",
        "--variants", "tone", "--no-progress", "--no-generalisation", "--no-whole-game",
        "--out", str(out),
    ]  # fmt: skip
    proc = _cli(args, child_env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith(f"fruit trading results in {out}")
    assert "scripted stand-in, not an LLM" in proc.stdout
    assert "NashConv" in proc.stdout and "CFR-Gain" in proc.stdout
    assert "LLM calls:" in proc.stdout
    summary = _strict_json(out / "summary.json")
    assert list(summary["variants"]) == ["tone"]
    assert "whole_game" not in summary["variants"]["tone"]

    for name in PNGS:
        (out / name).unlink()
    proc = _cli(["fruit-trading", "figures", "--out", str(out)], child_env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [Path(p).name for p in proc.stdout.split()] == list(PNGS)
    assert all((out / n).read_bytes().startswith(PNG) for n in PNGS)

    proc = _cli(["fruit-trading", "figures", "--out", str(tmp_path / "empty")], child_env, tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "summary.json" in proc.stderr


def test_single_subgame_run_writes_strict_json(tmp_path):
    """One subgame: no transfer to other subgames (None, not NaN, in the file)."""
    res = run_experiment(
        _settings(tmp_path, inits=1, iterations=5, variants=("tone+belief",), whole_game=False)
    )
    summary = _strict_json(tmp_path / "summary.json")
    gen = summary["variants"]["tone+belief"]["generalisation"]
    assert gen["summary"]["transfer_gain_mean"] is None
    assert gen["transfer_gain_mean"] == [None]
    assert len(gen["own_gain"]) == 1 and math.isfinite(gen["own_gain"][0])
    assert math.isnan(
        res.summary["variants"]["tone+belief"]["generalisation"]["transfer_gain_mean"][0]
    )
    rows = _rows(tmp_path / "generalisation.csv")
    assert len(rows) == 1 and rows[0]["transfer_cfr_gain_mean"] == ""


@pytest.mark.slow  # about 8 s: three variants end to end; CI runs it in its slow step
def test_variants_name_the_opponent_model(tmp_path):
    """tone+gratr runs, tone+belief is tone+dirichlet, and the degeneracy counts are
    reported per variant (and match solvers.degeneracy_counts of the same trees)."""
    from games.fruit_trading.experiment import variant_model
    from games.fruit_trading.studies import ANY
    from solvers import degeneracy_counts

    assert variant_model("tone") is None
    assert variant_model("tone+belief") == variant_model("tone+dirichlet") == "dirichlet"
    assert variant_model("tone+native-rag") == "native-rag"
    with pytest.raises(ValueError, match="tone\\+MODEL"):
        variant_model("tone+oracle")
    r = run_experiment(
        _settings(
            tmp_path,
            variants=("tone+belief", "tone+dirichlet", "tone+gratr"),
            max_messages=4,
            inits=3,
            generalisation=False,
            whole_game=False,
        )
    )
    v = r.summary["variants"]
    assert v["tone+belief"]["final"] == v["tone+dirichlet"]["final"]
    assert v["tone+gratr"]["opponent_model"] == "gratr" and "guesses" in v["tone+gratr"]
    sizes = {k: [t["nodes"] for t in v[k]["trees"]] for k in v}
    # GRATR's trust changes what is offered, so its trees are not Dirichlet's.
    assert v["tone+gratr"]["final"] != v["tone+dirichlet"]["final"] or (
        sizes["tone+gratr"] != sizes["tone+dirichlet"]
    )
    trees = [sg.tree for sg in r.subgames["tone+gratr"]]
    assert v["tone+gratr"]["degeneracy"] == degeneracy_counts(trees, baseline_action=ANY).to_dict()
    table = (tmp_path / "tables.md").read_text()
    assert "| tone+gratr | 1 |" in table and "a tone choice changes some payoff" in table
    with pytest.raises(ValueError, match="run_experiment: unknown variant"):
        _settings(tmp_path, variants=("tone+oracle",))


def test_whole_game_with_fixed_names_shares_information_sets():
    """Random names: no information set recurs, the legal assembly is the per-subgame
    profile itself (no leak). Fixed names + shared pools: some recur; where the
    subgames' policies differ there, the legal mixture differs from them."""
    from games.fruit_trading.dialogue import Config
    from games.fruit_trading.studies import legal_assembly
    from games.fruit_trading.tree import build_subgames, whole_game_tree
    from gt_llm.registry import load_model
    from solvers import CFRSolver, TreePolicy

    model = load_model("scripted")
    for names, pools in (("random", "per_init"), ("fixed", "shared")):
        cfg = Config(max_messages=3, beliefs=True, names=names, pools=pools)
        sgs = build_subgames(range(6), cfg, model, progress=False)
        whole = whole_game_tree([sg.root for sg in sgs], cfg)
        pols = [CFRSolver(sg.tree).run(40).average_policy() for sg in sgs]
        legal = legal_assembly(whole, [sg.tree for sg in sgs], pols)
        assert np.allclose(
            np.array(legal["oracle_value"]) - legal["value"], legal["leak"], atol=1e-12
        )
        if names == "random":
            assert legal["shared_infosets"] == 0
            assert np.allclose(legal["leak"], 0.0, atol=1e-9)
            assert legal["policy_disagreement"] == 0.0
            continue
        assert legal["shared_infosets"] >= 1
        # Make the subgames disagree at a shared information set: a pure "assertive"
        # in the first subgame that holds one, so the mixture must differ from it.
        index = whole.key_to_infoset
        seen: dict[int, int] = {}
        for k, sg in enumerate(sgs):
            for key in sg.tree.infoset_keys:
                if index[key] in seen and seen[index[key]] != k:
                    first, row = seen[index[key]], index[key]
                    break
                seen.setdefault(index[key], k)
            else:
                continue
            break
        key = whole.infoset_keys[row]
        probs = pols[first].probs.copy()
        s0 = sgs[first].tree.key_to_infoset[key]
        probs[s0] = 0.0
        probs[s0, 0] = 1.0
        pols[first] = TreePolicy(probs)
        changed = legal_assembly(whole, [sg.tree for sg in sgs], pols)
        assert changed["policy_disagreement"] > 0
        assert changed["nash_conv"] >= 0


def test_policy_and_dialogue_exports_load_back(run_dir):
    """policy_<variant>.json loads into an OpenSpiel TabularPolicy of the subgame that
    equals the CFR policy; dialogues_<variant>.jsonl has every leaf, reach sums to 1."""
    from games.fruit_trading.exports import load_tabular_policy
    from solvers import from_tabular_policy

    out, result = run_dir
    for variant, slug in (("tone", "tone"), ("tone+belief", "tone_belief")):
        sgs = result.subgames[variant]
        for sg in sgs:
            tab, game = load_tabular_policy(out / f"policy_{slug}.json", sg.scenario.init)
            assert game.get_parameters()["init"] == sg.scenario.init
            back = from_tabular_policy(sg.tree, tab)
            doc = json.loads((out / f"policy_{slug}.json").read_text())
            entry = next(e for e in doc["subgames"] if e["init"] == sg.scenario.init)
            assert len(entry["infosets"]) == sg.tree.num_infosets
            for s, key in enumerate(sg.tree.infoset_keys):
                for r, a in enumerate(sg.tree.legal_actions(s)):
                    assert back.probs[s, r] == entry["infosets"][key][str(a)]
        lines = [json.loads(x) for x in (out / f"dialogues_{slug}.jsonl").read_text().splitlines()]
        assert len(lines) == sum(sg.tree.num_terminals for sg in sgs)
        for init in (0, 1):
            mine = [r for r in lines if r["init"] == init]
            assert math.isclose(sum(r["reach_cfr"] for r in mine), 1.0, abs_tol=1e-9)
            assert all(r["messages"][0]["seed"] == 0 for r in mine)  # the fixed opening
        assert all(len(r["payoffs"]) == 2 and r["messages"][-1]["text"] for r in lines)
    with pytest.raises(ValueError, match="no subgame init=9"):
        load_tabular_policy(out / "policy_tone.json", 9)


def test_compare_overlays_runs_and_figures_follow_the_options(run_dir, tmp_path, child_env):
    """`compare` draws one figure set from two folders with a headline table; Fig. 7
    has no zoomed column when the run has no more than 50 iterations; formats work."""
    from games.fruit_trading import figures

    out, _ = run_dir
    fig = figures.fig7_metrics(out)  # 30 iterations: one column, NashConv and CFR-Gain rows
    assert len(fig.axes) == 2
    assert [ax.get_title() for ax in fig.axes] == [
        "NashConv, iterations 1–30\n(mean, 95 % t-interval over subgames)",
        "CFR-Gain, iterations 1–30\n(mean, 95 % t-interval over subgames)",
    ]
    # The CFR-Gain panel shows each variant's label null beside its curve.
    gain_legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert sum("null 5-95 %" in t for t in gain_legend) == 2
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["tone (σ_CFR)", "tone + belief (σ_CFR-B)"]
    fig8 = figures.fig8_ratio(out)
    counts = fig8.axes[1].get_lines()
    assert len(counts) == 2 and max(counts[0].get_ydata()) <= 2  # subgames in the ratio
    (tmp_path / "svg").mkdir()
    paths = figures.draw_all(tmp_path / "svg", runs=[out], fmt="svg")
    assert [p.suffix for p in paths] == [".svg"] * 3 and all(p.stat().st_size > 0 for p in paths)
    with pytest.raises(ValueError, match="draw_all: format"):
        figures.draw_all(out, fmt="jpg")
    r = _cli(
        [
            "fruit-trading",
            "compare",
            str(out),
            str(out),
            "--out",
            str(tmp_path / "cmp"),
            "--labels",
            "a,b",
            "--format",
            "pdf",
            "--log-y",
        ],
        child_env,
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    rows = _rows(tmp_path / "cmp" / "compare.csv")
    assert [(x["run"], x["variant"]) for x in rows] == [
        ("a", "tone"),
        ("a", "tone+belief"),
        ("b", "tone"),
        ("b", "tone+belief"),
    ]
    assert (tmp_path / "cmp" / "compare_fig7_nashconv_cfrgain.pdf").stat().st_size > 0
    bad = _cli(
        ["fruit-trading", "compare", str(tmp_path), "--out", str(tmp_path / "x")],
        child_env,
        tmp_path,
    )
    assert bad.returncode != 0 and "no summary.json" in bad.stderr
