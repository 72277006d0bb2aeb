"""``gt-llm fruit-trading run`` / ``figures`` and their results folder, with real faults.

A process killed with SIGKILL while writing, re-runs with other
settings, ``--force``, incomplete folders, options checked before the first
model call (counted by the call cache never being created, or by the fake
server's request log), sizes that cannot fit, and a hung server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_server import HANG, Canned, FakeChatServer  # noqa: E402

from games.fruit_trading.estimate import max_nodes  # noqa: E402
from solvers.cfr import VARIANTS  # noqa: E402

# The smallest real run: one subgame of 2 messages, a handful of iterations.
TINY = [
    "--inits", "1", "--iterations", "3", "--max-messages", "2", "--num-seeds", "1",
    "--no-generalisation", "--no-whole-game", "--no-progress",
]  # fmt: skip

# Runs the CLI, but holds every rename onto summary.json for a minute (after
# saying so), so that the test kills the process exactly during that write.
HELD_WRITE = r"""
import os, sys, time
real_replace = os.replace
def held_replace(src, dst, *a, **k):
    if str(dst).endswith("summary.json"):
        print("writing-summary", flush=True)
        time.sleep(60)
    return real_replace(src, dst, *a, **k)
os.replace = held_replace
from gt_llm.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run(cli, out, cwd, *extra):
    return cli(["fruit-trading", "run", *TINY, "--out", str(out), *extra], cwd)


def _one_error_line(proc) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


# About 5 s (two fruit runs in a subprocess); the atomic writer's own kill -9 probe
# (tests/solvers/test_results.py) stays in the default suite.
@pytest.mark.slow
def test_sigkill_while_writing_summary_keeps_the_previous_one(child_env, gt_llm_cli, tmp_path):
    out = tmp_path / "res"
    assert _run(gt_llm_cli, out, tmp_path).returncode == 0
    before = (out / "summary.json").read_bytes()
    assert _manifest(out)["complete"] is True

    # The same settings again (accepted: a re-run), killed while summary.json is being written.
    proc = subprocess.Popen(
        [sys.executable, "-c", HELD_WRITE, "fruit-trading", "run", *TINY, "--out", str(out)],
        env=child_env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = proc.stdout.readline().strip()
        assert line == "writing-summary", proc.stderr.read()
        # The new summary is fully in its temporary file, not yet renamed: kill now.
        assert any(p.name.startswith(".tmp-summary.json") for p in out.iterdir())
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=20)
    assert proc.returncode == -signal.SIGKILL
    assert (out / "summary.json").read_bytes() == before
    json.loads(before)  # the previous summary, valid
    assert _manifest(out)["complete"] is False  # readers know the run did not finish

    # figures refuses the incomplete folder in one line, or warns with --allow-incomplete.
    line = _one_error_line(gt_llm_cli(["fruit-trading", "figures", "--out", str(out)], tmp_path))
    assert "incomplete" in line and "complete: false" in line and "re-run" in line
    proc = gt_llm_cli(
        ["fruit-trading", "figures", "--allow-incomplete", "--out", str(out)], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" in proc.stderr and "incomplete" in proc.stderr

    # Re-running the same command finishes the folder and cleans the killed write's temp file.
    assert _run(gt_llm_cli, out, tmp_path).returncode == 0
    assert _manifest(out)["complete"] is True
    assert not any(p.name.startswith(".tmp-") for p in out.iterdir())


def test_other_settings_refused_force_clears_results_keeps_cache(gt_llm_cli, tmp_path):
    out = tmp_path / "res"
    assert _run(gt_llm_cli, out, tmp_path, "--variants", "tone,tone+belief").returncode == 0
    assert (out / "curves_tone.csv").exists() and (out / "curves_tone_belief.csv").exists()
    cache = out / "llm_cache.sqlite"
    cache_bytes = cache.stat().st_size
    summary = (out / "summary.json").read_bytes()

    line = _one_error_line(_run(gt_llm_cli, out, tmp_path, "--variants", "tone"))
    assert "other settings" in line and "variants" in line and "--force" in line
    assert (out / "summary.json").read_bytes() == summary  # nothing touched
    assert _manifest(out)["complete"] is True

    proc = _run(gt_llm_cli, out, tmp_path, "--variants", "tone", "--force")
    assert proc.returncode == 0, proc.stderr
    names = {p.name for p in out.iterdir()}
    assert "curves_tone.csv" in names
    assert not any("belief" in n for n in names), names  # no old variant CSV left
    assert cache.exists() and cache.stat().st_size >= cache_bytes  # the cache was kept
    m = _manifest(out)
    assert m["complete"] is True and m["settings"]["variants"] == ["tone"]
    assert set(m["files"]) <= names and "summary.json" in m["files"]
    # Table 1 has its header even without belief rows.
    assert (out / "table1_guesses.csv").read_text().splitlines() == [
        "variant,count,message,correct,total,percentage,backend,model"
    ]


def test_figures_names_a_bad_summary(gt_llm_cli, tmp_path):
    out = tmp_path / "res"
    assert _run(gt_llm_cli, out, tmp_path).returncode == 0
    (out / "summary.json").write_text("")  # e.g. truncated by an older in-place writer
    line = _one_error_line(gt_llm_cli(["fruit-trading", "figures", "--out", str(out)], tmp_path))
    assert "summary.json is not valid JSON" in line and "re-run" in line


@pytest.mark.parametrize(
    ("extra", "names"),
    [
        (["--cfr", "nope"], "--cfr"),
        (["--seed", "-5"], "--seed"),
        (["--timeout", "0"], "--timeout"),
        (["--retry-budget", "-1"], "--retry-budget"),
        (["--max-answer-bytes", "0"], "--max-answer-bytes"),
        (["--out", ""], "--out"),
    ],
)
def test_bad_options_refused_before_any_call(extra, names, gt_llm_cli, tmp_path):
    out = tmp_path / "res"
    proc = gt_llm_cli(["fruit-trading", "run", *TINY, "--out", str(out), *extra], tmp_path)
    assert names in _one_error_line(proc)
    # Zero model calls: the call cache (opened before the first call) was never created.
    assert not (out / "llm_cache.sqlite").exists()
    assert not (tmp_path / "llm_cache.sqlite").exists()
    assert list(tmp_path.iterdir()) == [] or not any(tmp_path.rglob("*.sqlite"))


def test_help_lists_every_cfr_variant(gt_llm_cli, tmp_path):
    proc = gt_llm_cli(["fruit-trading", "run", "--help"], tmp_path)
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    for name in VARIANTS:  # the solver's registry, including dcfr and lcfr
        assert name in text
    assert "dcfr" in text and "lcfr" in text
    for flag in ("--retry-budget", "--max-answer-bytes", "--timeout", "--force"):
        assert flag in text


@pytest.mark.parametrize("extra", [["--iterations", "1000000000000"], ["--inits", "1000000000"]])
def test_sizes_that_cannot_fit_are_refused_quickly(extra, gt_llm_cli, tmp_path):
    out = tmp_path / "res"
    t0 = time.monotonic()
    proc = gt_llm_cli(
        ["fruit-trading", "run", "--no-progress", "--out", str(out), *extra], tmp_path
    )
    elapsed = time.monotonic() - t0
    line = _one_error_line(proc)
    assert extra[0] in line and "memory" in line and "lower" in line
    assert elapsed < 30  # refused from the settings alone (interpreter start included)
    assert not out.exists()  # no folder, no cache, no call


def test_max_nodes_is_the_largest_tree():
    import games  # noqa: F401
    from games.fruit_trading.dialogue import Config
    from games.fruit_trading.tree import build_subgames
    from gt_llm import load_model

    model = load_model("scripted")
    for m, s in ((2, 1), (2, 2), (3, 2)):
        sizes = [
            sg.tree.num_nodes
            for sg in build_subgames(
                range(4), Config(max_messages=m, num_seeds=s), model, progress=False
            )
        ]
        assert max(sizes) <= max_nodes(m, s)
    # Without early agreements the bound is reached: 2 messages, 1 decision, 2 seeds.
    assert max_nodes(2, 2) == 1 + 4 + 8
    assert max_nodes(4, 2) == 877  # the largest subgame of the paper's defaults


def test_timeout_and_retry_budget_reach_a_hung_server(child_env, gt_llm_cli, tmp_path):
    out = tmp_path / "res"
    with FakeChatServer() as server:
        server.enqueue(*[Canned(delay=HANG) for _ in range(50)])
        env = {**child_env, "NO_PROXY": "127.0.0.1,localhost", "OPENAI_API_KEY": "test-key-1"}
        t0 = time.monotonic()
        proc = gt_llm_cli(
            ["fruit-trading", "run", *TINY, "--out", str(out),
             "--backend", f"openai:m@{server.url}/v1", "--timeout", "0.5", "--retry-budget", "2"],
            tmp_path, env=env,
        )  # fmt: skip
        elapsed = time.monotonic() - t0
        assert server.request_count >= 1  # the calls did reach the (hung) server
    line = _one_error_line(proc)
    assert "re-run the same command to resume" in line
    assert "test-key-1" not in proc.stderr
    assert elapsed < 25, elapsed  # a 0.5 s timeout within a 2 s budget, not 6 x 60 s
    m = _manifest(out)
    assert m["complete"] is False  # an interrupted run is never presented as finished
    assert not (out / "summary.json").exists()


def test_manifest_written_first(tmp_path):
    """The manifest exists with ``complete: false`` before the first result file."""
    from runs.results import prepare_results_dir

    out = tmp_path / "res"
    run = prepare_results_dir(out, {"inits": 1}, backend="scripted")
    assert _manifest(out)["complete"] is False
    # Nothing else but the folder's lock, which the open run holds until it finishes.
    assert sorted(p.name for p in out.iterdir()) == [".gt-llm.lock", "manifest.json"]
    run.write_csv("t.csv", [], ("a", "b"))
    assert (out / "t.csv").read_text().splitlines() == ["a,b"]
    assert oct((out / "t.csv").stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    run.finish()
    assert _manifest(out)["complete"] is True
    assert not (out / ".gt-llm.lock").exists()  # freed and removed by finish()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_max_answer_bytes_reaches_the_backend(child_env, gt_llm_cli, tmp_path):
    out = tmp_path / "res"
    with FakeChatServer() as server:  # echo answers are longer than 16 bytes
        env = {**child_env, "NO_PROXY": "127.0.0.1,localhost", "OPENAI_API_KEY": "test-key-1"}
        proc = gt_llm_cli(
            ["fruit-trading", "run", *TINY, "--out", str(out),
             "--backend", f"openai:m@{server.url}/v1", "--max-answer-bytes", "16"],
            tmp_path, env=env,
        )  # fmt: skip
        assert server.request_count >= 1
    line = _one_error_line(proc)
    assert "16" in line and "max" in line.lower()
    assert _manifest(out)["complete"] is False


def test_solver_kernels_cached_tells_a_cold_cache(child_env, tmp_path):
    """A fresh NUMBA_CACHE_DIR is cold (the run then says it compiles); after a solve it is warm."""
    probe = "from games.engine.resources import solver_kernels_cached as c; print(c())"
    env = {**child_env, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    proc = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.strip() == "False", proc.stderr

    from games.engine.resources import solver_kernels_cached
    from solvers import CFRSolver
    from solvers.synthetic import layered_tree

    CFRSolver(layered_tree(np.random.default_rng(0))).run(
        2
    )  # compiles (and caches) or loads the kernels
    assert solver_kernels_cached() is True


# --- werewolf series: the same results folder -----------------------------------------------


def test_werewolf_series_uses_a_results_folder(gt_llm_cli, tmp_path):
    out = tmp_path / "ww"
    series = ["werewolf", "play", "--players", "rules", "--no-progress", "--out", str(out)]
    proc = gt_llm_cli([*series, "--games", "3"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    m = _manifest(out)
    assert m["complete"] is True and m["settings"]["games"] == 3
    assert {"summary.json", "games.csv"} <= set(m["files"])
    assert len(list((out / "logs").glob("game_*.jsonl"))) == 3
    summary = (out / "summary.json").read_bytes()

    line = _one_error_line(gt_llm_cli([*series, "--games", "2"], tmp_path))
    assert "other settings" in line and "games" in line and "--force" in line
    assert (out / "summary.json").read_bytes() == summary

    proc = gt_llm_cli([*series, "--games", "2", "--force"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _manifest(out)["settings"]["games"] == 2
    assert len(list((out / "logs").glob("game_*.jsonl"))) == 2  # the old series' logs are gone
    assert len((out / "games.csv").read_text().splitlines()) == 3  # header + 2 games

    for extra, flag in (
        (["--out", ""], "--out"),
        (["--seed", "-5"], "--seed"),
        (["--jobs", "0"], "--jobs"),
    ):
        assert flag in _one_error_line(gt_llm_cli([*series, "--games", "2", *extra], tmp_path))
