"""The game registry and the ``gt-llm <game>`` commands found through it."""

from __future__ import annotations

import argparse

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


def test_a_broken_game_is_logged_not_fatal(clean_registry, caplog):
    def add_parser(subparsers):
        raise RuntimeError("no_such_dependency_xyz")

    registry.register_game_spec(_spec("broken-x", add_parser))
    with caplog.at_level("WARNING", logger="gt_llm.cli"):
        parser = build_parser()
    assert "no_such_dependency_xyz" in caplog.text
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"backends", "ask", "fruit-trading"} <= set(sub.choices)


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
