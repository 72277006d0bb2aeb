"""Every command of every registered game has a run on the scripted stand-in.

The commands come from the registry alone (``GameSpec.commands``), so a new
game is covered without an edit here, and a command the game adds without a
run in ``commands`` fails :func:`test_every_command_has_a_run` (the runs
themselves: ``tests/games/test_every_command_end_to_end.py``). For every
command that takes the shared options (``--seed``, ``--structured``), the
requests it sends are read back from its call cache: a game cannot offer one
of those options and ignore it, and the results folder compares them.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

import games  # noqa: F401  (registers every game)
from games.engine.registry import game_commands, registered_game_specs
from gt_llm.cache_store import cached_requests
from gt_llm.cli import main

SPECS = registered_game_specs()


def _command_of(argv: tuple[str, ...], leaves: dict) -> tuple[str, ...] | None:
    return max((c for c in leaves if argv[: len(c)] == c), key=len, default=None)


def _run(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        code = main(argv)
    return code, buf.getvalue()


def _fill(argv: tuple[str, ...], tmp: Path) -> list[str]:
    return [a.replace("{tmp}", str(tmp)) for a in argv]


def _option(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_every_command_has_a_run(spec):
    leaves = game_commands(spec)
    covered = {_command_of(tuple(a), leaves) for a in spec.commands}
    missing = sorted(" ".join(c) for c in leaves if c not in covered)
    assert not missing, (
        f"{spec.name}: no run of `gt-llm {'`, `gt-llm '.join(missing)}` in GameSpec.commands; "
        "add a small one (scripted backend, a few iterations) to the game's register_game_spec"
    )
    stray = [a for a in spec.commands if _command_of(tuple(a), leaves) is None]
    assert not stray, f"{spec.name}: GameSpec.commands names no command of the game: {stray}"


#: Commands whose three runs below cost about 6 s of CPU each: CI's slow step (-m slow) runs
#: them; the others (the same shared-option plumbing) run in the default suite.
_SLOW = {("werewolf", "solve"), ("werewolf", "tournament")}


def _shared_option_runs() -> list:
    runs = []
    for spec in SPECS:
        leaves = game_commands(spec)
        for argv in spec.commands:
            parser = leaves[_command_of(tuple(argv), leaves)]
            flags = {s for a in parser._actions for s in a.option_strings}
            if {"--seed", "--structured", "--cache"} <= flags:
                marks = [pytest.mark.slow] if tuple(argv[:2]) in _SLOW else []
                runs.append(pytest.param(spec, argv, marks=marks))
    return runs


@pytest.mark.parametrize(
    ("spec", "argv"),
    _shared_option_runs(),
    ids=lambda x: " ".join(x[:2]) if isinstance(x, tuple) else x.name,
)
def test_shared_options_reach_the_requests_and_the_settings(spec, argv, tmp_path):
    def requests(name: str, *extra: str) -> list[dict]:
        folder = tmp_path / name
        folder.mkdir()
        cache = folder / "calls.sqlite"
        args = [*_fill(argv, folder), "--cache", str(cache), *extra]
        code, output = _run(args)
        assert code == 0, f"`gt-llm {' '.join(args)}` exited {code}:\n{output[-3000:]}"
        return cached_requests(cache)

    base = requests("base")
    assert base, f"{argv}: no model call reached the cache"
    no_schema = sorted({r["task"] for r in base if r.get("schema") is None})
    assert not no_schema, f"{argv} with --structured on sent no schema for {no_schema}"
    plain = requests("off", "--structured", "off")
    with_schema = sorted({r["task"] for r in plain if r.get("schema") is not None})
    assert plain and not with_schema, f"{argv} with --structured off sent schemas: {with_schema}"
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    reseeded = requests("seed", "--seed", "1")
    assert {key(r) for r in reseeded} != {key(r) for r in base}, f"{argv} ignores --seed"

    # The results folder compares them: another --seed or --structured is another run.
    out = _option(_fill(argv, tmp_path / "base"), "--out")
    if out and (Path(out) / "manifest.json").is_file():
        for extra in (("--seed", "1"), ("--structured", "off")):
            args = [*_fill(argv, tmp_path / "base"), "--cache", str(tmp_path / "c2.sqlite"), *extra]
            code, output = _run(args)
            assert code != 0 and "--force" in output, (args, output[-2000:])
