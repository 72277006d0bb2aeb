"""Fruit trading as an OpenSpiel game (``python_fruit_trading``).

Two players negotiate a fruit trade by message (Lindström et al., built on
the chat-games fruit trade of Gemp et al., arXiv:2402.01704). The tree:

* (``init=-1`` only) a chance node over ``num_inits`` initialisations;
* player 1's opening message, fixed per initialisation (a random tone, seed 0),
  followed by its termination check;
* then, until agreement or ``max_messages`` messages: the speaker's decision
  is the tone (assertive, calm, submissive, any), a chance node picks the LLM
  seed (``num_seeds`` uniform outcomes), and the message is generated,
  checked for agreement, and (with ``beliefs=true``) read by the receiver,
  whose Dirichlet belief about what the sender wants is revised.

Unlike OpenSpiel's own chat game there is no receiver dimension (two players),
the last decision still generates its message and can change the payoff, and
the information state holds the player's own private information, its own
past tones and the dialogue text, never the opponent's tones.

Payoffs are those of the agreed trade (value after minus before) from the
LLM's payoff calls (``payoff=llm``, the paper) or computed exactly from the
parsed trade (``payoff=exact``); 0 for both without agreement.

The model is the scripted stand-in unless ``backend=...`` (a spec for
:func:`gt_llm.load_model`, with ``cache=PATH``) or a ``model=`` passed to
:class:`FruitTradingGame` says otherwise.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pyspiel

from games.engine.calls import run_sync
from games.fruit_trading import scripted  # noqa: F401  (registers the scripted answers)
from games.fruit_trading.dialogue import (
    Config,
    DialogueState,
    initial_state,
    opening_step,
    step,
)
from games.fruit_trading.rules import TONES, make_scenario
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats
from gt_llm.registry import load_model

SHORT_NAME = "python_fruit_trading"
_MAX_SEEDS = 16
_MAX_INITS = 10_000
DEFAULT_PARAMS: dict[str, Any] = {
    "init": 0,
    "num_inits": 30,
    "beliefs": False,
    "max_messages": 4,
    "num_seeds": 2,
    "scenario_seed": 0,
    "payoff": "llm",
    "backend": "scripted",
    "cache": "",
}

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Fruit Trading (LLM negotiation)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=False,
    parameter_specification=DEFAULT_PARAMS,
)

_MODELS: dict[tuple[str, str], ChatModel] = {}
_MODELS_LOCK = threading.Lock()


def _shared_model(backend: str, cache: str) -> ChatModel:
    """One model per (backend, cache) per process, so games share the cache connection."""
    with _MODELS_LOCK:
        key = (backend, cache)
        if key not in _MODELS:
            _MODELS[key] = load_model(backend, cache=cache or None)
        return _MODELS[key]


class FruitTradingGame(pyspiel.Game):
    """The fruit-trading negotiation game."""

    def __init__(self, params: dict[str, Any] | None = None, *, model: ChatModel | None = None):
        p = {**DEFAULT_PARAMS, **(params or {})}
        self.init = int(p["init"])
        self.num_inits = int(p["num_inits"])
        if self.init >= 0:
            self.inits: tuple[int, ...] = (self.init,)
        else:
            if not 1 <= self.num_inits <= _MAX_INITS:
                raise ValueError(f"python_fruit_trading: num_inits must be in [1, {_MAX_INITS}]")
            self.inits = tuple(range(self.num_inits))
        num_seeds = int(p["num_seeds"])
        if not 1 <= num_seeds <= _MAX_SEEDS:
            raise ValueError(f"python_fruit_trading: num_seeds must be in [1, {_MAX_SEEDS}]")
        self.config = Config(
            max_messages=int(p["max_messages"]),
            num_seeds=num_seeds,
            beliefs=bool(p["beliefs"]),
            scenario_seed=int(p["scenario_seed"]),
            payoff_source=str(p["payoff"]),
        )
        self.model = (
            model if model is not None else _shared_model(str(p["backend"]), str(p["cache"]))
        )
        self.parse_policy = ParsePolicy()
        self.parse_stats = ParseStats()
        self._roots: dict[int, DialogueState] = {}
        self._roots_lock = threading.Lock()
        game_info = pyspiel.GameInfo(
            num_distinct_actions=len(TONES),
            max_chance_outcomes=max(num_seeds, len(self.inits)),
            num_players=2,
            min_utility=-40.0,
            max_utility=40.0,
            utility_sum=None,
            # Opening + per message: decision and chance; plus the init chance node.
            max_game_length=1 + 2 * (self.config.max_messages - 1),
        )
        super().__init__(_GAME_TYPE, game_info, p)

    def run(self, gen) -> DialogueState:
        return run_sync(gen, self.model, policy=self.parse_policy, stats=self.parse_stats)

    def root_state(self, init: int) -> DialogueState:
        """The state after the opening of initialisation ``init`` (computed once)."""
        with self._roots_lock:
            if init not in self._roots:
                scenario = make_scenario(init, seed=self.config.scenario_seed)
                self._roots[init] = self.run(opening_step(initial_state(scenario, self.config)))
            return self._roots[init]

    def new_initial_state(self) -> FruitTradingState:
        return FruitTradingState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> FruitTradingObserver:
        return FruitTradingObserver(iig_obs_type, params)


class FruitTradingState(pyspiel.State):
    """A node of the negotiation tree."""

    def get_game(self) -> FruitTradingGame:  # narrows the type for readers
        return super().get_game()

    def __init__(self, game: FruitTradingGame):
        super().__init__(game)
        self.dialogue: DialogueState | None = None
        self.pending_tone: str | None = None
        if len(game.inits) == 1:
            self.dialogue = game.root_state(game.inits[0])

    # -- whose turn --------------------------------------------------------------
    def current_player(self) -> int:
        if self.dialogue is None or self.pending_tone is not None:
            return pyspiel.PlayerId.CHANCE
        if self.dialogue.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return self.dialogue.next_speaker()

    def _legal_actions(self, player: int) -> list[int]:
        return list(range(len(TONES)))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.dialogue is None:
            n = len(self.get_game().inits)
            return [(i, 1.0 / n) for i in range(n)]
        n = self.get_game().config.num_seeds
        return [(s, 1.0 / n) for s in range(n)]

    def _apply_action(self, action: int) -> None:
        if self.dialogue is None:
            self.dialogue = self.get_game().root_state(self.get_game().inits[action])
        elif self.pending_tone is None:
            self.pending_tone = TONES[action]
        else:
            tone, self.pending_tone = self.pending_tone, None
            self.dialogue = self.get_game().run(step(self.dialogue, tone, int(action)))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return (
                f"init={self.get_game().inits[action]}"
                if self.dialogue is None
                else f"seed={action}"
            )
        return f"tone={TONES[action]}"

    # -- outcome -----------------------------------------------------------------
    def is_terminal(self) -> bool:
        return (
            self.dialogue is not None and self.pending_tone is None and self.dialogue.is_terminal()
        )

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0, 0.0]
        return list(self.dialogue.returns())

    def information_state_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        if self.dialogue is None:
            return ""
        return self.dialogue.information_state(player)

    def observation_string(self, player: int | None = None) -> str:
        return self.information_state_string(player)

    def __str__(self) -> str:
        if self.dialogue is None:
            return "(initialisation not drawn)"
        tones = ", ".join(t.tone for t in self.dialogue.turns)
        pending = f"\n[pending tone: {self.pending_tone}]" if self.pending_tone else ""
        return f"init={self.dialogue.scenario.init} tones=[{tones}]\n{self.dialogue.dialogue_text()}{pending}"


class FruitTradingObserver:
    """String-only observer: a player's information state (perfect recall)."""

    def __init__(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(
                f"FruitTradingObserver: observation parameters not supported: {params}"
            )
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: FruitTradingState, player: int) -> None:
        pass

    def string_from(self, state: FruitTradingState, player: int) -> str:
        return state.information_state_string(player)


pyspiel.register_game(_GAME_TYPE, FruitTradingGame)
