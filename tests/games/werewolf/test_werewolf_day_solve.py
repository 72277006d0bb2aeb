"""``gt-llm werewolf solve`` end to end at tiny settings: files, questions, resuming, options."""

from __future__ import annotations

import argparse
import json
import math

import pytest

import games  # noqa: F401  (registers every game)
from games.werewolf.day import command, summary
from games.werewolf.day.solve import SolveSettings, run_solve
from solvers.plots import read_csv_rows

PNG = b"\x89PNG\r\n\x1a\n"
TINY = dict(
    days=2,
    iterations=40,
    tones=("calm", "any"),
    acts=("nothing", "accuse:most", "accuse:least"),
    order="seats",
    deals=1,
    progress=False,
)


def _strict(path):
    def reject(name):
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(path.read_text(), parse_constant=reject)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("werewolf_day")
    result = run_solve(SolveSettings(out=str(out), **TINY))
    return out, result


def test_files_and_summary(run):
    out, result = run
    for name in ("summary.json", "days.csv", "strategies.csv"):
        assert (out / name).exists(), name
    for m in ("none", "dirichlet", "gratr"):
        assert (out / f"curves_{m}.csv").exists()
        assert (out / f"curves_{m}_per_tree.csv").exists()
    for name in ("fig_nashconv_cfrgain.png", "fig_side_gain.png", "fig_strategies.png"):
        assert (out / name).read_bytes().startswith(PNG), name
    s = _strict(out / "summary.json")
    # The file holds what the run returned, and it is finite (no NaN / Infinity).
    assert s == json.loads(json.dumps(result.summary.to_json(), allow_nan=False))
    assert summary.load_summary(out) == summary.DaySolveSummary.from_json(s)
    assert summary.load_summary(out).to_json() == s
    assert s["label"].endswith("(scripted stand-in, not an LLM)") and s["is_llm"] is False
    assert len(s["game_seeds"]) == 2
    for m in ("none", "dirichlet", "gratr"):
        v = s["models"][m]
        assert v["final"]["iteration"] == 40
        assert v["final"]["nash_conv_mean"] >= 0.0
        assert len(v["trees"]) == 2 and all(t["nodes"] > 1 for t in v["trees"])
        for g in ("werewolf", "village"):
            probs = [p for p in v["strategies"][g]["all"]["acts"].values() if p is not None]
            assert not probs or math.isclose(sum(probs), 1.0, rel_tol=1e-9)
    for m in ("none", "dirichlet", "gratr"):
        noise = s["models"][m]["noise"]
        assert noise["cfr_gain"]["n"] == 2 and noise["above_noise"]["of"] == 2
        assert all(0 < t["p_value"] <= 1 for t in noise["per_tree"])
        assert s["models"][m]["final"]["n"] == 2
    for m in ("none", "dirichlet", "gratr"):
        # Where each vote's choice stood in its prompt's list, beside a uniform choice.
        listed = s["models"][m]["quality"]["listed"]["votes"]
        assert listed["choices"] == sum(s["models"][m]["listed_votes"].values()) > 0
        assert 0 < listed["uniform_first"] < 1 and listed["first"] <= listed["choices"]
    lines = summary.report_lines(result.summary, out)
    assert sum("choices listed first / second: votes" in line for line in lines) == 3
    rows = read_csv_rows(out / "days.csv")
    assert all(0 < float(r["cfr_gain_p_value"]) <= 1 for r in rows)
    assert len(rows) == 6 and {r["opponent_model"] for r in rows} == {"none", "dirichlet", "gratr"}
    # Per day: CFR-Gain is the sum of the two sides' gains.
    for r in rows:
        total = float(r["werewolf_gain"]) + float(r["village_gain"])
        assert total == pytest.approx(float(r["cfr_gain"]), abs=1e-9)


def test_the_two_questions_are_answered_and_labelled(run):
    out, result = run
    q1 = result.summary.questions.strategy
    q2 = result.summary.questions.gain
    label = result.summary.label.label
    assert q1.label == label and q2.label == label
    assert set(q1.per_model) == {"none", "dirichlet", "gratr"}
    for a in q1.per_model.values():
        assert a.answer in ("yes", "no") or a.differs is None
    assert q2.answer in ("yes", "no") or q2.falls is None
    lines = summary.report_lines(result.summary, out)
    assert any(line.startswith("Q1") for line in lines)
    assert any(line.startswith("Q2") and label in line for line in lines)


def test_held_out_days_are_scored_on_fresh_seeds(tmp_path, capsys):
    settings = {**TINY, "models": ("none",), "days": 1, "permutations": 49, "bootstrap": 5}
    result = run_solve(SolveSettings(out=str(tmp_path), eval_seeds=1, **settings))
    noise = result.summary.models["none"].noise
    assert noise is not None
    held = noise["per_tree"][0]["held_out"]
    assert held is not None and held["infosets"] > 0
    assert noise["held_out_cfr_gain"]["n"] == 1
    lines = summary.report_lines(result.summary, tmp_path)
    assert any("held-out CFR-Gain" in line for line in lines)
    assert any("above noise in" in line for line in lines)


def test_a_rerun_makes_no_new_calls(tmp_path):
    settings = SolveSettings(out=str(tmp_path), **{**TINY, "days": 1, "models": ("gratr",)})
    first = run_solve(settings)
    assert first.summary.llm_calls["misses"] > 0
    again = run_solve(settings)
    assert again.summary.llm_calls["misses"] == 0
    assert again.summary.llm_calls["hits"] > 0
    assert _strict(tmp_path / "summary.json")["models"]["gratr"]["final"] == (
        again.summary.models["gratr"].final
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gt-llm werewolf")
    command.add_solve_parser(p.add_subparsers())
    return p


def test_the_command_runs_end_to_end(tmp_path, capsys):
    args = _parser().parse_args(
        ["solve", "--days", "2", "--iterations", "20", "--models", "none,gratr", "--deals", "2",
         "--tones", "any", "--acts", "nothing,accuse:least", "--out", str(tmp_path),
         "--no-progress"]
    )  # fmt: skip
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "scripted stand-in, not an LLM" in out
    assert "none" in out and "gratr" in out and "Q2" in out
    assert set(_strict(tmp_path / "summary.json")["models"]) == {"none", "gratr"}


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--models", "none,oracle"], "opponent model"),
        (["--tones", "loud"], "tone"),
        (["--days", "0"], "days"),
    ],
)
def test_bad_flags_fail_in_argparse(argv, match, capsys):
    with pytest.raises(SystemExit):
        _parser().parse_args(["solve", *argv])
    assert match in capsys.readouterr().err


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(acts=("nothing", "accuse:middle")), "bad act token"),
        (dict(tones=("calm",)), "baseline needs"),
        (dict(speakers=9), "speakers"),
        (dict(acts=("nothing", "check:most:not_werewolf")), "check result"),
        (dict(cfr_variant="magic"), "cfr_variant"),
        (dict(permutations=-1), "permutations"),
        (dict(fdr_q=1.5), "q must"),
        (dict(eval_seeds=-2), "eval_seeds"),
    ],
)
def test_bad_settings_fail_before_any_call(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        SolveSettings(out=str(tmp_path / "never"), **{**TINY, **kw})
    assert not (tmp_path / "never").exists()


def test_gt_llm_werewolf_solve_is_a_command(tmp_path, capsys):
    from gt_llm.cli import main

    argv = ["werewolf", "solve", "--days", "1", "--iterations", "10", "--models", "gratr", "--deals", "1",
            "--tones", "any", "--acts", "nothing,accuse:least", "--out", str(tmp_path),
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    assert "Q1" in capsys.readouterr().out
    assert (tmp_path / "summary.json").exists()
    # An unknown act token is refused before any model call: no cache is created.
    bad = tmp_path / "bad"
    bad_argv = ["werewolf", "solve", "--acts", "nothing,accuse:middle", "--out", str(bad)]
    assert main(bad_argv) != 0
    assert "bad act token" in capsys.readouterr().err
    assert not (bad / "llm_cache.sqlite").exists()


def test_call_options_reach_the_model(tmp_path, monkeypatch):
    """--timeout, --retry-budget, --max-answer-bytes and --rpm are passed to load_model."""
    seen = {}

    def fake_load_model(spec, *, cache=None, **options):
        seen.update(options)
        raise RuntimeError("stop after load_model")

    import games.engine.cli_options as cli_options

    monkeypatch.setattr(cli_options, "load_model", fake_load_model)
    args = _parser().parse_args(
        ["solve", "--days", "1", "--iterations", "5", "--models", "none", "--deals", "1",
         "--tones", "any", "--acts", "nothing,accuse:least", "--out", str(tmp_path),
         "--timeout", "3", "--retry-budget", "7", "--max-answer-bytes", "1000", "--rpm", "30",
         "--no-progress"]
    )  # fmt: skip
    with pytest.raises(RuntimeError, match="stop after load_model"):
        args.func(args)
    assert seen == {
        "timeout": 3.0,
        "retry_budget": 7.0,
        "max_answer_bytes": 1000,
        "requests_per_minute": 30.0,
    }
    # The model (backend, key, options) is checked before the folder is touched.
    assert not (tmp_path / "manifest.json").exists()


def test_load_summary_names_a_missing_or_foreign_file(tmp_path):
    from runs.atomic import ResultsError

    with pytest.raises(ResultsError, match="summary.json is missing"):
        summary.load_summary(tmp_path)
    (tmp_path / "summary.json").write_text(json.dumps({"model": "x"}))
    with pytest.raises(
        ResultsError, match="not a werewolf solve summary .*re-run gt-llm werewolf solve"
    ):
        summary.load_summary(tmp_path)
