"""Absurd inputs that were accepted, refused in one line.

The size flags' bounds, ``--cache ''`` and ``--roles ''`` are probed for every
command by ``test_refusals_name_their_flag.py``; here the cases of the issue
that need more than one flag: repeated ``compare --labels``, ultimatum's
``--num-seeds 1e20`` (5.8 GB in 25 s on main), and the ``--human`` prompt,
where a 5,000,000-digit answer ended the game.
"""

from __future__ import annotations

import time

import pytest

from games.werewolf.players.human import MAX_ANSWER_CHARS, HumanPlayer
from tests.cli_runner import run_cli

WIDE = "9" * 5_000_000


def _one_error(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr[-2000:]
    return lines[0]


@pytest.mark.parametrize("labels", ["a,a", "a, a", "a,", ","])
def test_compare_refuses_repeated_or_empty_labels(labels, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    line = _one_error(run_cli(["fruit-trading", "compare", str(run), str(run),
                               "--labels", labels, "--out", str(tmp_path / "c")]))  # fmt: skip
    assert "--labels" in line
    assert not (tmp_path / "c").exists()


@pytest.fixture
def no_model(monkeypatch):
    """Loading a model fails the test: what it checks is refused before (and main's sizes are
    never run: 1e20 seeds took 5.8 GB in 25 s)."""
    import games.engine.cli_options
    import gt_llm
    import gt_llm.registry

    def reached(*args, **kwargs):
        raise AssertionError("the command reached its model: the value was accepted")

    monkeypatch.setattr(gt_llm, "load_model", reached)
    monkeypatch.setattr(gt_llm.registry, "load_model", reached)
    monkeypatch.setattr(games.engine.cli_options, "load_model", reached)


@pytest.mark.parametrize("value", ["1e20", "100000000000000000000", "17"])
def test_ultimatum_refuses_absurd_seed_counts_at_once(value, tmp_path, no_model):
    start = time.monotonic()
    line = _one_error(run_cli(["ultimatum", "solve", "--num-seeds", value,
                               "--out", str(tmp_path / "u")]))  # fmt: skip
    assert "--num-seeds" in line and time.monotonic() - start < 10
    assert not (tmp_path / "u").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["ultimatum", "solve", "--cache", ""],
        ["werewolf", "play", "--cache", " "],
        ["werewolf", "play", "--roles", ""],
        ["werewolf", "arena", "--roles", ""],
        ["fruit-trading", "run", "--cache", ""],
        ["ask", "--cache", "", "hello"],
    ],
    ids=lambda a: " ".join(a[:3]),
)
def test_empty_cache_and_roles_are_refused(argv, tmp_path, no_model):
    args = argv if argv[0] == "ask" else [*argv, "--out", str(tmp_path / "o")]
    line = _one_error(run_cli(args))
    assert argv[-2 if argv[0] != "ask" else 1] in line and "empty" in line
    assert not (tmp_path / "o").exists()


def test_the_human_prompt_asks_again_after_an_absurd_answer():
    answers = iter([WIDE, "\u00b2", "12" * MAX_ANSWER_CHARS, "1"])
    shown: list[str] = []
    player = HumanPlayer(lambda: next(answers) + "\n", shown.append)
    assert player._choose(["a", "b", "c"]) == 1
    assert sum("please type a number from 0 to 2" in s.lower() for s in shown) == 3
    assert not any(len(s) > 200 for s in shown)  # the answer is not echoed back


def test_a_huge_answer_at_the_human_seat_does_not_end_the_game(tmp_path):
    stdin = f"{WIDE}\n\u00b2\n" + "0\n" * 3000
    proc = run_cli(["werewolf", "play", "--human", "0", "--players", "rules", "--max-rounds",
                    "2", "--debate-turns", "1", "--no-progress"], stdin=stdin)  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr[-2000:]  # a winner, or a draw
    assert "characters long" in proc.stdout and "Exceeds" not in proc.stderr
    assert "== Day 1 ==" in proc.stdout
