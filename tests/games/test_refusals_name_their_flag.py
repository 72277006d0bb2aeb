"""Every refusal names its flag; every size has a bound.

The commands come from the registry (``registered_game_specs()``, each game's
parsers walked as in ``tests/games/engine/test_commands.py``) and the built-in ``ask``
and ``backends``, so a new game or flag is probed without an edit here. For
every option of every command:

* a number option has a documented bound (``gt_llm.argtypes.bounded_int`` /
  ``bounded_float``), and ``lo - 1``, ``hi + 1`` and junk are refused in one
  line naming the flag;
* a text option refuses ``''`` in one line naming the flag;
* the bound is not looser than the library's: ``hi`` itself is either accepted
  (the command reaches its first model call) or refused naming the flag.

The library's own refusals found on main (``Config: max_rounds must be in
[1, 100]``, ``RoleSet: needs at least one werewolf``, ``Abstraction: bad act
token``, ``python_werewolf_day: num_seeds``, ``run_experiment: max_messages``,
...) are probed as written in the issue. No probe makes a model call: loading
the model stops the command (:class:`_Reached`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

import pytest

import games  # noqa: F401  (registers every game)
import games.engine.cli_options
import gt_llm
import gt_llm.registry
from games.engine.registry import game_commands, parser_commands, registered_game_specs
from gt_llm.argtypes import BoundedFloat, BoundedInt
from gt_llm.cli import build_parser, main

SPECS = registered_game_specs()


class _Reached(Exception):
    """The command got past every check to its first model load: the value was accepted."""


@pytest.fixture(autouse=True)
def _no_model(monkeypatch):
    def stop(*args, **kwargs):
        raise _Reached

    # prepare_model, ask, and the commands that load a model themselves (werewolf play).
    monkeypatch.setattr(gt_llm, "load_model", stop)
    monkeypatch.setattr(gt_llm.registry, "load_model", stop)
    monkeypatch.setattr(games.engine.cli_options, "load_model", stop)


def _commands() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """``(command, base argv)`` for every command: the game's own run of it, or a minimal one."""
    found = []
    for spec in SPECS:
        leaves = game_commands(spec)
        for command in leaves:
            runs = [a for a in spec.commands if tuple(a[: len(command)]) == command]
            assert runs, f"{spec.name}: no run of {command} in GameSpec.commands"
            found.append((command, tuple(runs[0])))
    found.append((("ask",), ("ask", "hello")))
    found.append((("backends",), ("backends",)))
    return found


COMMANDS = _commands()
_PARSERS = parser_commands(build_parser())


def _parser(command: tuple[str, ...]) -> argparse.ArgumentParser:
    return _PARSERS[command]


def _run(argv: list[str]) -> tuple[object, str]:
    """Runs ``gt-llm ARGV``: (exit code or ``"reached"``, the last line of its output)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            code: object = main(argv)
        except SystemExit as stop:
            code = stop.code
        except _Reached:
            return "reached", ""
    lines = [line for line in buf.getvalue().splitlines() if line.strip()]
    return code, (lines[-1] if lines else "")


def _with(base: tuple[str, ...], flag: str, value: str, tmp: Path) -> list[str]:
    argv = [a.replace("{tmp}", str(tmp)) for a in base]
    if flag in argv:
        argv[argv.index(flag) + 1] = value
    else:
        argv += [flag, value]
    return argv


def _options(command: tuple[str, ...]) -> list[argparse.Action]:
    return [
        a
        for a in _parser(command)._actions
        if a.option_strings and a.nargs != 0 and not isinstance(a, argparse._HelpAction)
    ]


def _is_number(action: argparse.Action) -> bool:
    t = action.type
    name = getattr(t, "__name__", "")
    return (
        isinstance(t, (BoundedInt, BoundedFloat))
        or t in (int, float)
        or "int" in name
        or ("float" in name)
    )


#: Text options where an empty value means something: an empty system message.
EMPTY_ALLOWED = {("ask", "--system")}


def _probes(action: argparse.Action) -> list[str]:
    t = action.type
    if action.choices is not None:
        return ["no-such-choice"]
    if isinstance(t, BoundedInt):
        return [str(t.lo - 1), str(t.hi + 1), "x", "1e20", "9" * 5000]
    if isinstance(t, BoundedFloat):
        below = str(t.lo) if t.above else str(t.lo - 1)
        return [below, repr(t.hi * 2 + 1), "nan", "inf", "1e999", "x"]
    return [""]


def _ids(x):
    # The command names the case; its base run is shown by the failure message.
    return " ".join(x) if len(x) <= 2 else "run"


@pytest.mark.parametrize(("command", "base"), COMMANDS, ids=_ids)
def test_every_number_option_has_a_bound(command, base):
    unbounded = [
        a.option_strings[0]
        for a in _options(command)
        if _is_number(a) and not isinstance(a.type, (BoundedInt, BoundedFloat))
    ]
    assert not unbounded, (
        f"gt-llm {' '.join(command)}: {', '.join(unbounded)} take(s) any size; give each a "
        "documented bound (gt_llm.argtypes.bounded_int / bounded_float)"
    )


@pytest.mark.parametrize(("command", "base"), COMMANDS, ids=_ids)
def test_out_of_range_values_are_refused_naming_the_flag(command, base, tmp_path):
    bad = []
    for action in _options(command):
        flag = action.option_strings[0]
        for value in _probes(action):
            if value == "" and (command[-1], flag) in EMPTY_ALLOWED:
                continue
            code, line = _run(_with(base, flag, value, tmp_path))
            if code != 2 or flag not in line:
                bad.append(f"{flag} {value[:30]!r}: {code} {line[:200]}")
    assert not bad, f"gt-llm {' '.join(command)}:\n" + "\n".join(bad)


#: Upper bounds not run: `werewolf solve --days` plays that many rule-based games first.
HEAVY_AT_THE_BOUND = {"--days"}


@pytest.mark.parametrize(
    ("command", "base"),
    [c for c in COMMANDS if any(a.dest == "backend" for a in _options(c[0]))],
    ids=_ids,
)
def test_each_bound_is_within_what_the_library_accepts(command, base, tmp_path):
    # The ends of a flag's range are accepted, or refused naming the flag (a memory
    # estimate, another flag's value); never refused by the library without the flag.
    bad = []
    for action in _options(command):
        t, flag = action.type, action.option_strings[0]
        if not isinstance(t, (BoundedInt, BoundedFloat)) or flag in HEAVY_AT_THE_BOUND:
            continue
        for value in {t.lo, t.hi} if isinstance(t, BoundedInt) else {t.hi}:
            code, line = _run(_with(base, flag, str(value), tmp_path))
            if code != "reached" and flag not in line:
                bad.append(f"{flag} {value}: {code} {line[:200]}")
    assert not bad, f"gt-llm {' '.join(command)}:\n" + "\n".join(bad)


WEREWOLF_PLAY = ("werewolf", "play", "--max-rounds", "2", "--debate-turns", "1", "--no-progress")
ARENA = ("werewolf", "arena", "--models", "gratr,none", "--games", "2", "--max-rounds", "2",
         "--debate-turns", "1", "--no-progress")  # fmt: skip
SOLVE = ("werewolf", "solve", "--days", "1", "--speakers", "1", "--iterations", "5",
         "--models", "none", "--no-progress")  # fmt: skip
FRUIT = ("fruit-trading", "run", "--inits", "1", "--max-messages", "2", "--num-seeds", "1",
         "--iterations", "5", "--no-generalisation", "--no-whole-game", "--no-progress")  # fmt: skip
ULTIMATUM = ("ultimatum", "solve", "--iterations", "5", "--no-progress")

# The refusals of the issue, as found on main (the library's message without the flag).
LIBRARY_REFUSALS = [
    *[(cmd, "--max-rounds", "101") for cmd in (WEREWOLF_PLAY, ARENA)],
    *[(cmd, "--debate-turns", "51") for cmd in (WEREWOLF_PLAY, ARENA)],
    (ARENA, "--debate-turns", "-1"),
    *[
        (cmd, "--roles", roles)
        for cmd in (WEREWOLF_PLAY, ARENA)
        for roles in (
            "werewolf:0,villager:4",
            "x:1",
            "werewolf",
            "werewolf:1",
            "werewolf:99,villager:1",
            "werewolf:1,werewolf:1,villager:3",
            ",",
            "",
        )
    ],
    (ARENA, "--threshold", "2"),
    (ARENA, "--threshold", "nan"),
    (SOLVE, "--acts", "nothing,bad"),
    (SOLVE, "--acts", "nothing,accuse:x"),
    (SOLVE, "--acts", "nothing,claim:witch"),  # not a role of the arena preset
    (SOLVE, "--acts", "nothing,nothing"),
    (SOLVE, "--acts", "accuse:most"),  # the baseline act is missing
    (SOLVE, "--acts", ","),
    (SOLVE, "--tones", "calm,calm"),
    (SOLVE, "--tones", "calm"),  # the baseline tone is missing
    (SOLVE, "--models", "gratr,gratr"),
    (SOLVE, "--num-seeds", "17"),
    (SOLVE, "--speakers", "7"),
    (SOLVE, "--day", "11"),
    (SOLVE, "--day", "7"),  # no rule-based game of the preset lives to day 7
    (FRUIT, "--max-messages", "1"),
    (FRUIT, "--num-seeds", "17"),
    (ULTIMATUM, "--num-seeds", "100000000000000000000"),
    (ULTIMATUM, "--pie", "1000000000"),
]


@pytest.mark.parametrize(
    ("base", "flag", "value"),
    LIBRARY_REFUSALS,
    ids=[f"{b[1]} {f} {v!r}"[:60] for b, f, v in LIBRARY_REFUSALS],
)
def test_library_refusals_name_the_flag(base, flag, value, tmp_path):
    code, line = _run([*base, flag, value, "--out", str(tmp_path / "o")])
    assert code == 2 and flag in line, f"{flag} {value!r}: {code} {line}"
    assert not (tmp_path / "o").exists()


def test_the_probes_cover_every_command():
    probed = {c for c, _ in COMMANDS}
    every = {c for spec in SPECS for c in game_commands(spec)}
    assert every <= probed and {("ask",), ("backends",)} <= probed
    assert every == {c for c in _PARSERS if c[0] not in ("ask", "backends")}
