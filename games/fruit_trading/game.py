"""Fruit trading as an OpenSpiel game (``python_fruit_trading``).

Two players negotiate a fruit trade by message (Lindström et al., built on
the chat-games fruit trade of Gemp et al., arXiv:2402.01704). The tree:

* (``init=-1`` only) a chance node over ``num_inits`` initialisations;
* player 1's opening message, fixed per initialisation (a random tone, seed 0),
  followed by its termination check;
* then, until agreement or ``max_messages`` messages: the speaker's decision
  is the tone (assertive, calm, submissive, any), a chance node picks the LLM
  seed (``num_seeds`` uniform outcomes), and the message is generated,
  checked for agreement, and (with ``opponent_model=NAME``, or the older
  ``beliefs=true`` for ``dirichlet``) read by the receiver, whose opponent
  model (Dirichlet belief revision, the GRATR trust graph, ...) is updated
  with its guess of what the sender wants.

Unlike OpenSpiel's own chat game there is no receiver dimension (two players),
the last decision still generates its message and can change the payoff, and
the information state holds the player's own private information, its own
past tones and the dialogue text, never the opponent's tones.

Payoffs are those of the agreed trade (value after minus before) from the
LLM's payoff calls (``payoff=llm``, the paper) or computed exactly from the
parsed trade (``payoff=exact``); 0 for both without agreement.

Player names: ``names=random`` (the paper: two names drawn per
initialisation; the information state then differs between initialisations
through the names alone) or ``names=fixed`` (the same two names everywhere, so
that with ``init=-1`` a player's information state is its own private
information, its own tones and the dialogue, shared across initialisations).
``pools=shared`` draws the three endowments and three valuations once for all
initialisations (the paper's small pools), so that players of different
initialisations hold the same private information and, with fixed names,
share information sets.

The model is the scripted stand-in unless ``backend=...`` (a spec for
:func:`gt_llm.load_model`, with ``cache=PATH``; without it the engine's
process-wide in-memory cache) or a ``model=`` passed to
:class:`FruitTradingGame` says otherwise.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pyspiel

from games.engine.calls import Step
from games.engine.spiel import (
    EngineGame,
    EngineState,
    engine_game_info,
    engine_game_type,
    shared_model,
)
from games.fruit_trading import scripted  # noqa: F401  (registers the scripted answers)
from games.fruit_trading.dialogue import (
    Config,
    DialogueLogic,
    DialogueState,
    initial_state,
    opening_step,
)
from games.fruit_trading.rules import PAYOFF_BOUND, TONES
from gt_llm.chat import ChatModel

SHORT_NAME = "python_fruit_trading"
_MAX_SEEDS = 16
_MAX_INITS = 10_000
DEFAULT_PARAMS: dict[str, Any] = {
    "init": 0,
    "num_inits": 30,
    "beliefs": False,
    "opponent_model": "",
    "max_messages": 4,
    "num_seeds": 2,
    "scenario_seed": 0,
    "payoff": "llm",
    "names": "random",
    "pools": "per_init",
    "structured": True,
    "backend": "scripted",
    "cache": "",
}

_GAME_TYPE = engine_game_type(
    SHORT_NAME,
    "Python Fruit Trading (LLM negotiation)",
    num_players=2,
    parameters=DEFAULT_PARAMS,
)


def _opponent_model_param(name: str, beliefs: bool) -> str | None:
    """The opponent model the parameters name (``None``: the ``tone`` variant).

    ``opponent_model=gratr`` (any registered model) selects it; the older
    ``beliefs=true`` alone means ``dirichlet``.
    """
    from gt_llm.opponents import opponent_models

    if not name:
        return "dirichlet" if beliefs else None
    if name not in opponent_models():
        raise ValueError(
            f"python_fruit_trading: unknown opponent_model={name!r}; use one of "
            f"{', '.join(opponent_models())} (or leave it empty)"
        )
    return name


class FruitTradingGame(EngineGame[DialogueState]):
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
        model_name = _opponent_model_param(str(p["opponent_model"]), bool(p["beliefs"]))
        self.config = Config(
            max_messages=int(p["max_messages"]),
            num_seeds=num_seeds,
            beliefs=model_name is not None,
            opponent_model=model_name or Config.opponent_model,
            scenario_seed=int(p["scenario_seed"]),
            payoff_source=str(p["payoff"]),
            names=str(p["names"]),
            pools=str(p["pools"]),
            structured=bool(p["structured"]),
        )
        self.setup_logic(
            DialogueLogic(self.config),
            model if model is not None else shared_model(str(p["backend"]), str(p["cache"])),
            [functools.partial(self._opening, i) for i in self.inits],
        )
        game_info = engine_game_info(
            num_actions=len(TONES),
            max_chance_outcomes=max(num_seeds, len(self.inits)),
            num_players=2,
            utility_bounds=(-PAYOFF_BOUND, PAYOFF_BOUND),
            # Opening + per message: decision and chance; plus the init chance node.
            max_game_length=1 + 2 * (self.config.max_messages - 1),
        )
        super().__init__(_GAME_TYPE, game_info, p)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> FruitTradingObserver:
        return FruitTradingObserver(iig_obs_type, params)

    def _opening(self, init: int) -> Step[DialogueState]:
        scenario = self.config.scenario(init)
        return opening_step(initial_state(scenario, self.config))

    def root_label(self, index: int) -> str:
        return f"init={self.inits[index]}"


class FruitTradingObserver:
    """String observer honouring ``iig_obs_type`` (OpenSpiel's observation types).

    * default, or ``private_info=SINGLE_PLAYER`` with public information: the
      information state (own private information, own tones, the dialogue);
      with ``perfect_recall=False`` it is the same string, since the dialogue
      already is the whole public history;
    * ``private_info=NONE``: public only — names and dialogue, no valuations,
      no endowment, no tones;
    * ``public_info=False``: private only — own private information and tones.
    """

    def __init__(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> None:
        if params:
            raise ValueError(
                f"python_fruit_trading: observation parameters not supported: {params}"
            )
        self.public = True if iig_obs_type is None else bool(iig_obs_type.public_info)
        self.private = (
            True
            if iig_obs_type is None
            else iig_obs_type.private_info != pyspiel.PrivateInfoType.NONE
        )
        if (
            iig_obs_type is not None
            and iig_obs_type.private_info == pyspiel.PrivateInfoType.ALL_PLAYERS
        ):
            raise ValueError(
                "python_fruit_trading: private_info=ALL_PLAYERS is not supported; use "
                "SINGLE_PLAYER (own information) or NONE (public only)"
            )
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: pyspiel.State, player: int) -> None:
        pass  # string-only observer

    def string_from(self, state: pyspiel.State, player: int) -> str:
        d = state.dialogue
        if d is None:
            return ""
        if self.private and self.public:
            return d.information_state(player)
        parts = []
        if self.private:
            parts.append(d.private_information(player))
        if self.public:
            parts.append(d.public_information())
        return "\n\n".join(parts)


class FruitTradingState(EngineState[DialogueState]):
    """A node of the negotiation tree (``dialogue`` is the engine's game state)."""

    @property
    def dialogue(self) -> DialogueState | None:
        return self.inner

    def information_state_string(self, player: int | None = None) -> str:
        """As OpenSpiel's games: a player's string anywhere, none for the chance player.

        Without ``player`` it is the current player's; at a chance node that is
        the chance player, which has no information state (OpenSpiel's games
        fail there too), so pass the player.
        """
        if player is None:
            player = self.current_player()
        if not 0 <= player < 2:
            raise pyspiel.SpielError(
                f"python_fruit_trading: information_state_string for player {player} (the "
                "current player at a chance or terminal node); pass player=0 or 1"
            )
        return super().information_state_string(player)

    def observation_string(self, player: int | None = None) -> str:
        return self.information_state_string(player)

    def __str__(self) -> str:
        if self.inner is None:
            return "(initialisation not drawn)"
        tones = ", ".join(t.tone for t in self.inner.turns)
        pending = f"\n[pending tone: {TONES[self.pending]}]" if self.pending is not None else ""
        return f"init={self.inner.scenario.init} tones=[{tones}]\n{self.inner.dialogue_text()}{pending}"


FruitTradingGame.state_class = FruitTradingState

pyspiel.register_game(_GAME_TYPE, FruitTradingGame)
