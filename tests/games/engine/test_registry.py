"""The game registry and the ``gt-llm <game>`` commands found through it."""

from __future__ import annotations

import argparse
import sys

import pytest

import games  # noqa: F401  (registers every game)
from games.engine import registry
from games.engine.cli_options import COMMON_OPTIONS, add_common_options, model_options
from games.engine.registry import ConformanceParams, GameSpec
from gt_llm.cli import build_parser, main


def _spec(name: str, add_parser) -> GameSpec:
    return GameSpec(
        name=name,
        short_name="kuhn_poker",
        help="test game",
        add_parser=add_parser,
        conformance=ConformanceParams(game_strings=("kuhn_poker",)),
    )


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "_SPECS", dict(registry._SPECS))


def test_fruit_trading_is_registered_and_has_a_command():
    names = [s.name for s in registry.registered_game_specs()]
    assert "fruit-trading" in names
    assert registry.get_game_spec("fruit-trading").short_name == "python_fruit_trading"
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert {"backends", "ask", "fruit-trading"} <= set(sub.choices)


def test_a_registered_game_gets_its_command(clean_registry):
    def add_parser(subparsers):
        p = subparsers.add_parser("game-x")
        add_common_options(p, out="results/x")
        p.set_defaults(func=lambda args: 0 if args.out == "results/x" else 1)

    registry.register_game_spec(_spec("game-x", add_parser))
    assert main(["game-x"]) == 0


def test_a_game_whose_commands_fail_is_logged_and_listed(clean_registry, caplog):
    def add_parser(subparsers):
        raise RuntimeError("no_such_dependency_xyz")

    registry.register_game_spec(_spec("broken-x", add_parser))
    with caplog.at_level("WARNING"):
        parser = build_parser()
    assert "no_such_dependency_xyz" in caplog.text
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"backends", "ask", "fruit-trading"} <= set(sub.choices)
    assert "broken-x: RuntimeError: no_such_dependency_xyz" in parser.format_help()


_BROKEN_GAME = "import no_such_dependency_xyz  # a game whose dependency is missing\n"
_WORKING_GAME = """
from games.engine.registry import ConformanceParams, GameSpec, register_game_spec

def _add(subparsers):
    p = subparsers.add_parser("tmp-ok-game")
    p.set_defaults(func=lambda args: 0)

register_game_spec(GameSpec(name="tmp-ok-game", short_name="kuhn_poker", help="a test game",
                            add_parser=_add,
                            conformance=ConformanceParams(game_strings=("kuhn_poker",))))
"""


def test_games_are_discovered_and_one_broken_game_is_one_line(
    clean_registry, tmp_path, monkeypatch, caplog, capsys
):
    # Two game packages in a folder of their own: no list anywhere names them.
    for name, code in (("tmp_broken_game", _BROKEN_GAME), ("tmp_ok_game", _WORKING_GAME)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(code)
    monkeypatch.setattr(registry, "_BROKEN", {})
    monkeypatch.setattr(games, "__path__", [*games.__path__, str(tmp_path)])
    for mod in ("games.tmp_broken_game", "games.tmp_ok_game"):
        monkeypatch.delitem(sys.modules, mod, raising=False)
    with caplog.at_level("WARNING", logger="games.engine.registry"):
        failed = registry.discover_games("games", games.__path__)
    assert [e.name for e in failed] == ["tmp_broken_game"]
    warnings = [r.getMessage() for r in caplog.records if "tmp_broken_game" in r.getMessage()]
    assert warnings == [
        "game tmp_broken_game failed to load: "
        "ModuleNotFoundError: No module named 'no_such_dependency_xyz'"
    ]
    # The working game and the real ones still load and get their commands.
    assert "tmp-ok-game" in [s.name for s in registry.registered_game_specs()]
    assert main(["tmp-ok-game"]) == 0
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    assert "commands that failed to load:" in help_text
    assert "tmp_broken_game: ModuleNotFoundError: No module named" in help_text
    assert "fruit-trading" in help_text


def test_register_rejects_a_second_game_under_the_same_name(clean_registry):
    registry.register_game_spec(_spec("dup-x", lambda s: None))
    with pytest.raises(ValueError, match="already registered"):
        registry.register_game_spec(_spec("dup-x", lambda s: None))
    with pytest.raises(ValueError, match="bad game name"):
        registry.register_game_spec(_spec("two words", lambda s: None))
    with pytest.raises(KeyError, match="unknown game 'nope'"):
        registry.get_game_spec("nope")


def test_common_options_are_defined_once_and_passed_to_the_model():
    p = argparse.ArgumentParser()
    add_common_options(p, out="o")
    args = p.parse_args([])
    assert set(COMMON_OPTIONS) <= set(vars(args))
    assert model_options(args) == {}
    args = p.parse_args(["--timeout", "5", "--rpm", "30", "--force", "--backend", "groq:x"])
    assert model_options(args) == {"timeout": 5.0, "requests_per_minute": 30.0}
    assert args.force and args.backend == "groq:x"
    with pytest.raises(SystemExit):
        p.parse_args(["--timeout", "0"])
