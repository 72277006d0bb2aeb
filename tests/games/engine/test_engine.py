"""The engine on a toy game: call driver, protocol, tree expansion and OpenSpiel adapter.

The toy game exercises what fruit trading does not: a chance *state* (a
non-uniform deal of a private secret), a decision with a seed chance node and
one without, a step that makes no call, and a step that yields a list.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyspiel
import pytest

import solvers
from games.engine.calls import Call, run_batched, run_sync
from games.engine.protocol import CHANCE, ExpandedNode, GameLogic
from games.engine.spiel import EngineGame, RootCache, engine_game_info, engine_game_type
from games.engine.tree import expand, subgame_tree, whole_game_tree
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Message
from gt_llm.errors import ParseError
from gt_llm.parsing import ParsePolicy, ParseStats, parse_number


class ToyModel(ChatModel):
    """Answers a digit derived from the request (deterministic); counts calls."""

    backend = "toy"
    model = "digits"

    def __init__(self, bad_tasks: Sequence[str] = ()) -> None:
        self.calls: list[ChatRequest] = []
        self.bad_tasks = set(bad_tasks)
        self._lock = threading.Lock()

    def complete(self, request: ChatRequest) -> ChatResponse:
        with self._lock:
            self.calls.append(request)
        if request.task in self.bad_tasks:
            return ChatResponse(text="no number here", backend=self.backend, model=self.model)
        h = hashlib.sha256(f"{request.messages[-1].content}|{request.seed}".encode()).digest()
        return ChatResponse(text=f"value: {h[0] % 10}", backend=self.backend, model=self.model)


def _request(task: str, text: str, seed: int = 0) -> ChatRequest:
    return ChatRequest(
        task=task, fields={"text": text}, messages=(Message("user", text),), seed=seed
    )


def _call(task: str, text: str, seed: int = 0) -> Call[float]:
    return Call(_request(task, text, seed), parse_number, lambda r: -1.0)


# --- the call driver ---------------------------------------------------------------------


def test_run_sync_answers_single_and_list_yields_in_order():
    def step():
        a = yield _call("toy.a", "first")
        b = yield [_call("toy.b", "x"), _call("toy.b", "y")]
        return (a, b)

    model = ToyModel()
    a, b = run_sync(step(), model)
    assert isinstance(a, float) and isinstance(b, list) and len(b) == 2
    assert [r.task for r in model.calls] == ["toy.a", "toy.b", "toy.b"]


def test_run_batched_sends_each_distinct_request_once_per_round():
    def step(text):
        v = yield _call("toy.a", text)
        return v

    model = ToyModel()
    rounds: list[int] = []
    out = run_batched([step("same"), step("same"), step("other")], model, on_round=rounds.append)
    assert out[0] == out[1]
    assert len(model.calls) == 2 and rounds == [3]


def test_a_step_without_calls_returns_at_once():
    def step():
        return 7
        yield  # a generator that never yields

    model = ToyModel()
    assert run_batched([step()], model) == [7]
    # A plain value is a step that made no call: no `return x; yield` needed.
    assert run_batched([8, step(), (9,)], model) == [8, 7, (9,)]
    assert run_sync("done", model) == "done" and model.calls == []


def test_fallback_after_reasks_is_counted_and_finish_hook_sees_it():
    seen = []

    def finish(parsed):
        seen.append(parsed)
        return ("fell back", parsed.response.text) if parsed.fell_back else parsed.value

    def step():
        v = yield Call(_request("toy.bad", "q"), parse_number, lambda r: -1.0, finish)
        return v

    stats = ParseStats()
    model = ToyModel(bad_tasks=["toy.bad"])
    out = run_sync(step(), model, policy=ParsePolicy(max_reasks=2), stats=stats)
    assert out == ("fell back", "no number here")
    assert len(model.calls) == 3  # the question and two re-asks
    assert stats.to_dict()["fallbacks"] == {"toy.bad": 1}
    assert seen[0].fell_back and seen[0].attempts == 3


def test_a_step_yielding_something_else_is_an_error():
    def step():
        yield "not a call"

    with pytest.raises(TypeError, match="run_batched: a step yielded str"):
        run_sync(step(), ToyModel())


def test_parse_errors_are_reasked_with_new_seeds():
    answers = iter(["nothing", "value: 4"])

    class Flaky(ToyModel):
        def complete(self, request):
            self.calls.append(request)
            return ChatResponse(text=next(answers), backend=self.backend, model=self.model)

    model = Flaky()
    assert run_sync(_single("toy.a"), model) == 4.0
    assert model.calls[0].seed != model.calls[1].seed


def _single(task):
    v = yield _call(task, "q")
    return v


# --- a toy game on the protocol -------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ToyState:
    secret: int | None = None
    claim: int | None = None
    told: float | None = None
    guess: int | None = None
    values: tuple[float, float] | None = None


@dataclasses.dataclass(frozen=True)
class ToyLogic:
    """Chance deals a secret (0.3 / 0.7); player 0 claims (seeded LLM call); player 1 guesses."""

    num_players: int = 2

    def is_terminal(self, s: ToyState) -> bool:
        return s.values is not None

    def current_player(self, s: ToyState) -> int:
        if s.secret is None:
            return CHANCE
        return 0 if s.claim is None else 1

    def legal_actions(self, s: ToyState) -> Sequence[int]:
        return [0, 1] if s.claim is None else [0, 1, 2]

    def chance_outcomes(self, s: ToyState):
        return [(0, 0.3), (1, 0.7)]

    def seed_outcomes(self, s: ToyState, action: int):
        return [(0, 0.5), (1, 0.5)] if s.claim is None else []

    def step(self, s: ToyState, action: int, outcome: int | None):
        if s.secret is None:
            return dataclasses.replace(s, secret=action)
        if s.claim is None:
            told = yield _call("toy.tell", f"secret {s.secret}, claim {action}", outcome or 0)
            return dataclasses.replace(s, claim=action, told=told)
        a, b = yield [
            _call("toy.judge", f"guess {action} told {s.told}"),
            _call("toy.judge", f"truth {s.secret} guess {action}"),
        ]
        win = 1.0 if action == s.secret else -1.0
        return dataclasses.replace(s, guess=action, values=(a - win, win - a + 0 * b))

    def information_state(self, s: ToyState, player: int) -> str:
        if player == 0:
            return f"secret={s.secret} claim={s.claim}"
        return f"told={s.told} guess={s.guess}"

    def returns(self, s: ToyState):
        return s.values if s.values is not None else (0.0, 0.0)

    def action_to_string(self, s: ToyState, action: int) -> str:
        return f"secret={action}" if s.secret is None else f"a={action}"


def test_toy_game_satisfies_the_protocol():
    assert isinstance(ToyLogic(), GameLogic)


_TOY_TYPE = engine_game_type(
    "python_engine_toy_test", "engine toy (test)", num_players=2, parameters={"roots": 1}
)
_TOY_MODEL = ToyModel()


class ToySpielGame(EngineGame[ToyState]):
    def __init__(self, params: dict[str, Any] | None = None):
        p = {"roots": 1, **(params or {})}
        # Roots that need no call: the root state itself.
        self.setup_logic(ToyLogic(), _TOY_MODEL, [ToyState] * int(p["roots"]))
        info = engine_game_info(
            num_actions=3,
            max_chance_outcomes=max(2, int(p["roots"])),
            num_players=2,
            utility_bounds=(-20, 20),
            max_game_length=5,
        )
        super().__init__(_TOY_TYPE, info, p)


pyspiel.register_game(_TOY_TYPE, ToySpielGame)


def test_toy_adapter_passes_random_sim_test():
    for roots in (1, 3):
        game = pyspiel.load_game(f"python_engine_toy_test(roots={roots})")
        pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


def test_engine_states_serialise_as_their_history_and_replay_it():
    game = pyspiel.load_game("python_engine_toy_test(roots=3)")
    state = game.new_initial_state()
    for action in (2, 1, 1):  # root 2, secret 1, player 0 plays 1 (a seed chance node follows)
        state.apply_action(action)
    text = state.serialize()
    # The game state is not pickled: only the history and a marker to replay it.
    assert text.startswith("history=-1:2,-1:1,0:1\n") and len(text) < 200
    copy = game.deserialize_state(text)
    assert copy.history() == [2, 1, 1] and copy.is_chance_node()
    assert copy.inner == state.inner and copy.pending == state.pending == 1
    assert str(copy) == str(state)
    copy.apply_action(0)
    assert copy.current_player() == 1 and state.is_chance_node()
    game2, copy2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert copy2.inner == state.inner and game2.get_type().short_name == "python_engine_toy_test"


def test_engine_game_type_fills_what_every_engine_game_shares():
    t = engine_game_type("python_x", "X", num_players=(3, 5), parameters={"a": 1})
    assert (t.min_num_players, t.max_num_players) == (3, 5)
    assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert t.provides_information_state_string and not t.provides_information_state_tensor
    assert t.parameter_specification == {"a": 1}


def test_toy_adapter_shapes_and_strings():
    state = pyspiel.load_game("python_engine_toy_test").new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes() == [(0, 0.3), (1, 0.7)]
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 1) == "secret=1"
    state.apply_action(1)
    assert state.current_player() == 0 and state.legal_actions() == [0, 1]
    state.apply_action(1)
    assert state.is_chance_node() and state.action_to_string(pyspiel.PlayerId.CHANCE, 0) == "seed=0"
    state.apply_action(0)
    assert state.current_player() == 1 and state.legal_actions() == [0, 1, 2]
    assert "secret" not in state.information_state_string(1)
    state.apply_action(2)  # no seed chance node after player 1's decision
    assert state.is_terminal() and len(state.returns()) == 2


@pytest.mark.parametrize("roots", [1, 3])
def test_expanded_tree_equals_materialized_toy_tree(roots):
    game = pyspiel.load_game(f"python_engine_toy_test(roots={roots})")
    nodes = expand(ToyLogic(), [ToyState()] * roots, _TOY_MODEL, progress=False)
    built = subgame_tree(ToyLogic(), nodes[0]) if roots == 1 else whole_game_tree(ToyLogic(), nodes)
    walked = solvers.materialize(game)
    assert built.num_nodes == walked.num_nodes
    np.testing.assert_array_equal(np.sort(built.kind), np.sort(walked.kind))
    assert set(built.infoset_keys) == set(walked.infoset_keys)
    # 1 (+ root chance) + chance state, 2 decisions of player 0 x 2 seeds, 3 guesses each.
    assert built.num_terminals == roots * 2 * 2 * 2 * 3
    nc_b = solvers.nash_conv(built, solvers.uniform_policy(built)).nash_conv
    nc_w = solvers.nash_conv(walked, solvers.uniform_policy(walked)).nash_conv
    assert nc_b == pytest.approx(nc_w, abs=1e-12)
    # Non-uniform chance probabilities survive.
    assert sorted(set(np.round(built.chance_prob[built.chance_prob > 0], 6))) == sorted(
        set(np.round(walked.chance_prob[walked.chance_prob > 0], 6))
    )


def test_expand_max_depth_stops_early_and_leaves_become_terminals():
    nodes = expand(ToyLogic(), [ToyState()], _TOY_MODEL, progress=False, max_depth=1)
    assert sorted(nodes[0].children) == [(0, None), (1, None)]
    assert all(not c.children for c in nodes[0].children.values())
    tree = subgame_tree(ToyLogic(), nodes[0])
    assert tree.num_terminals == 2


def test_expanded_node_states_are_breadth_first():
    nodes = expand(ToyLogic(), [ToyState()], _TOY_MODEL, progress=False)
    states = nodes[0].states()
    assert states[0] == ToyState()
    assert [s.secret for s in states[1:3]] == [0, 1]
    assert isinstance(nodes[0], ExpandedNode)


def test_root_cache_computes_once():
    cache: RootCache[int, list] = RootCache()
    made = []
    for _ in range(3):
        v = cache.get(1, lambda: made.append(1) or ["x"])
    assert v == ["x"] and made == [1]


def test_parse_error_type_is_the_engine_contract():
    # Parsers signal a bad answer with ParseError; anything else propagates.
    with pytest.raises(ParseError):
        parse_number("none")
