"""The conformance runner fails (never skips) a game that is incomplete or wrong.

A two-player card game on the engine, with steps that make no call: chance
deals player 0 a card (0 or 1), player 0 bets or checks, player 1 calls or
folds. Variants break one rule each; the runner must name the failing check.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

import pyspiel
import pytest

import solvers
from games.engine.conformance import (
    ConformanceError,
    check_answers,
    check_game,
    conformance_cases,
    replay_tree,
)
from games.engine.conformance.checks import _holds
from games.engine.protocol import CHANCE
from games.engine.registry import ConformanceParams, GameSpec
from games.engine.spiel import EngineGame, engine_game_info, engine_game_type, shared_model

SHORT_NAME = "python_conformance_card_test"
_COUNTER = itertools.count()


@dataclasses.dataclass(frozen=True)
class Card:
    card: int | None = None
    bet: int | None = None
    call: int | None = None
    noise: int = 0


@dataclasses.dataclass(frozen=True)
class CardLogic:
    leak: bool = False
    noisy: bool = False
    num_players: int = 2

    def is_terminal(self, s: Card) -> bool:
        return s.call is not None or s.bet == 0

    def current_player(self, s: Card) -> int:
        return CHANCE if s.card is None else (0 if s.bet is None else 1)

    def legal_actions(self, s: Card) -> Sequence[int]:
        return [0, 1]

    def chance_outcomes(self, s: Card):
        return [(0, 0.5), (1, 0.5)]

    def seed_outcomes(self, s: Card, action: int):
        return []

    def step(self, s: Card, action: int, outcome: int | None) -> Card:
        # Plain states: the engine accepts a step that makes no call.
        if s.card is None:
            return dataclasses.replace(s, card=action)
        noise = next(_COUNTER) if self.noisy else 0
        if s.bet is None:
            return dataclasses.replace(s, bet=action, noise=noise)
        return dataclasses.replace(s, call=action)

    def information_state(self, s: Card, player: int) -> str:
        mine = f"card={s.card} " if player == 0 or self.leak else ""
        return f"{mine}bet={s.bet} noise={s.noise}"

    def returns(self, s: Card) -> tuple[float, float]:
        if s.bet == 0:
            return (0.0, 0.0)
        if s.call == 0:
            return (1.0, -1.0)
        win = 2.0 if s.card == 1 else -2.0
        return (win, -win)

    def action_to_string(self, s: Card, action: int) -> str:
        return str(action)


class CardSpielGame(EngineGame[Card]):
    def __init__(self, params: dict[str, Any] | None = None):
        p = {**_PARAMS, **(params or {})}
        self.setup_logic(
            CardLogic(leak=bool(p["leak"]), noisy=bool(p["noisy"])),
            shared_model("scripted"),
            [Card],
        )
        info = engine_game_info(
            num_actions=2,
            max_chance_outcomes=2,
            num_players=2,
            utility_bounds=(-2, 2),
            max_game_length=3,
            utility_sum=0.0,
        )
        super().__init__(_TYPE, info, p)


_PARAMS = {"leak": False, "noisy": False, "backend": "scripted", "cache": ""}
_TYPE = engine_game_type(
    SHORT_NAME,
    "card game (conformance test)",
    num_players=2,
    parameters=_PARAMS,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
)
pyspiel.register_game(_TYPE, CardSpielGame)


def _private_info(state: pyspiel.State, player: int) -> list[str]:
    return [f"card={state.inner.card}"] if player == 0 and state.inner.card is not None else []


def _spec(**conformance: Any) -> GameSpec:
    params = {
        "game_strings": (SHORT_NAME,),
        "tree_game_strings": (SHORT_NAME,),
        "private_info": _private_info,
        **conformance,
    }
    return GameSpec(
        name="card-test",
        short_name=SHORT_NAME,
        help="card game (test)",
        add_parser=lambda subparsers: None,
        conformance=ConformanceParams(**params),
    )


def test_a_complete_game_passes_every_check():
    assert check_game(_spec()) == []
    assert [c.check for c in conformance_cases([_spec()])] == [
        "random_sim",
        "determinism",
        "private_info",
        "observations",
        "answers",
        "perfect_recall",
        "builder",
    ]


def test_an_incomplete_game_fails_the_checks_it_cannot_feed():
    spec = _spec(private_info=None, tree_game_strings=())
    failures = check_game(spec)
    assert [f.split(":")[1] for f in failures] == ["private_info", "perfect_recall", "builder"]
    assert "ConformanceParams.private_info is missing" in failures[0]
    assert all("tree_game_strings is empty" in f for f in failures[1:])
    # As pytest cases: the same three fail, none is skipped.
    cases = {c.check: c for c in conformance_cases([spec])}
    for check in ("private_info", "perfect_recall", "builder"):
        with pytest.raises(ConformanceError, match=check):
            cases[check].run()
    cases["random_sim"].run()


def test_a_leak_of_private_information_fails():
    spec = _spec(game_strings=(f"{SHORT_NAME}(leak=true)",), tree_game_strings=())
    failures = [f for f in check_game(spec) if ":private_info:" in f]
    assert len(failures) == 1 and "player 1 sees player 0's 'card=" in failures[0]


def test_a_nondeterministic_game_fails_determinism_and_the_builder():
    noisy = f"{SHORT_NAME}(noisy=true)"
    failures = check_game(_spec(game_strings=(noisy,), tree_game_strings=(noisy,)))
    checks = {f.split(":")[1] for f in failures}
    assert {"determinism", "builder"} <= checks, failures


def test_a_wrong_tree_builder_fails():
    def wrong(game: pyspiel.Game) -> solvers.GameTree:
        return solvers.materialize(pyspiel.load_game("kuhn_poker"))

    failures = check_game(_spec(build_tree=wrong))
    assert len(failures) == 1 and ":builder:" in failures[0], failures


def test_a_game_string_of_another_game_fails():
    failures = check_game(_spec(game_strings=("kuhn_poker",)))
    assert failures and all("loads kuhn_poker" in f for f in failures)


def test_replay_tree_equals_materialize_for_an_openspiel_game():
    game = pyspiel.load_game("kuhn_poker")
    a, b = replay_tree(game), solvers.materialize(game)
    assert a.num_nodes == b.num_nodes and set(a.infoset_keys) == set(b.infoset_keys)


def test_a_secret_is_matched_as_a_whole_token():
    # A seat holding bid=10 does not leak another seat's bid=1 (a substring, not the value).
    assert not _holds("bid=10 tone=calm", "bid=1")
    assert _holds("bid=1 tone=calm", "bid=1") and _holds("x\nbid=1", "bid=1")
    assert _holds("tone=calm.", "tone=calm") and not _holds("tone=calmer", "tone=calm")


def test_a_task_without_an_answer_format_fails_the_answers_check(monkeypatch):
    import games.ultimatum.game as ultimatum
    from games.engine.registry import get_game_spec
    from gt_llm.prompts import PromptBook

    spec = get_game_spec("ultimatum")
    check_answers(spec, "python_ultimatum")  # declared: passes
    bare = dataclasses.replace(ultimatum.OFFER, answer=None, answer_line="")
    monkeypatch.setattr(ultimatum, "PROMPTS", PromptBook([bare]))
    with pytest.raises(ConformanceError, match=r"ultimatum \[answers\].*ultimatum\.offer"):
        check_answers(spec, "python_ultimatum")
