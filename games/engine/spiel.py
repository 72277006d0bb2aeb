"""The OpenSpiel side of games built from LLM calls.

* :func:`shared_model` — one chat model per (backend, cache, options) per
  process, so every game object loaded by ``pyspiel.load_game`` shares the
  cache connection;
* :class:`RootCache` — compute-once, thread-safe storage of root states (a
  root often needs LLM calls, e.g. a fixed opening message);
* :class:`InformationStateObserver` — a string-only observer returning the
  player's information state (perfect recall);
* :class:`EngineGame` and :class:`EngineState` — a generic ``pyspiel.Game`` /
  ``pyspiel.State`` pair over an :class:`games.engine.protocol.LLMGame`: an
  optional uniform chance node over several roots, then decisions, seed
  chance nodes and chance states exactly as the protocol describes, each
  move realised by :func:`games.engine.calls.run_sync`. Its tree is the one
  :mod:`games.engine.tree` builds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

import numpy as np
import pyspiel

from games.engine.calls import Step, run_sync
from games.engine.protocol import CHANCE, LLMGame
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats
from gt_llm.registry import load_model

__all__ = [
    "EngineGame",
    "EngineState",
    "InformationStateObserver",
    "RootCache",
    "shared_model",
]

S = TypeVar("S")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_MODELS: dict[tuple[Any, ...], ChatModel] = {}
_MODELS_LOCK = threading.Lock()


def shared_model(
    backend: str,
    cache: str = "",
    *,
    timeout: float | None = None,
    requests_per_minute: float | None = None,
) -> ChatModel:
    """One model per (backend, cache, options) per process.

    Args:
      backend: Model spec for :func:`gt_llm.load_model`.
      cache: SQLite cache path ("" for none).
      timeout: Per-call timeout of a remote backend (None: the backend's).
      requests_per_minute: Rate limit of a remote backend (None: none).
    """
    key = (backend, cache, timeout, requests_per_minute)
    with _MODELS_LOCK:
        if key not in _MODELS:
            options: dict[str, Any] = {}
            # Only options given: the scripted backend accepts none.
            if timeout is not None:
                options["timeout"] = timeout
            if requests_per_minute is not None:
                options["requests_per_minute"] = requests_per_minute
            _MODELS[key] = load_model(backend, cache=cache or None, **options)
        return _MODELS[key]


class RootCache(Generic[K, V]):
    """Values computed once per key, thread-safe (e.g. root states after an opening)."""

    def __init__(self) -> None:
        self._values: dict[K, V] = {}
        self._lock = threading.Lock()

    def get(self, key: K, compute: Callable[[], V]) -> V:
        """The value of ``key``, computing it with ``compute()`` the first time."""
        with self._lock:
            if key not in self._values:
                self._values[key] = compute()
            return self._values[key]


class InformationStateObserver:
    """String-only observer: a player's information state (perfect recall)."""

    def __init__(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> None:
        if params:
            raise ValueError(
                f"InformationStateObserver: observation parameters not supported: {params}"
            )
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: pyspiel.State, player: int) -> None:
        pass

    def string_from(self, state: pyspiel.State, player: int) -> str:
        return state.information_state_string(player)


class EngineGame(pyspiel.Game, Generic[S]):
    """A ``pyspiel.Game`` over an :class:`LLMGame`.

    Subclasses call :meth:`setup_engine` before ``super().__init__(game_type,
    game_info, params)`` and may override :meth:`root_label` and
    :attr:`state_class`.
    """

    state_class: type[EngineState] = None  # type: ignore[assignment]  # set below

    def setup_engine(
        self,
        engine: LLMGame[S],
        model: ChatModel,
        roots: Sequence[Callable[[], Step[S]]],
        *,
        parse_policy: ParsePolicy | None = None,
    ) -> None:
        """Sets the game logic, the model and the root steps.

        Args:
          engine: The game logic.
          model: The chat model every move uses.
          roots: One step factory per root (a uniform chance node picks the
            root when there are several).
          parse_policy: Re-ask policy (default :class:`ParsePolicy`).
        """
        if not roots:
            raise ValueError("EngineGame.setup_engine: give at least one root")
        self.engine = engine
        self.model = model
        self.root_steps = tuple(roots)
        self.parse_policy = parse_policy or ParsePolicy()
        self.parse_stats = ParseStats()
        self._roots: RootCache[int, S] = RootCache()

    def run(self, gen: Step[S]) -> S:
        """Runs one step with the game's model, parse policy and counters."""
        return run_sync(gen, self.model, policy=self.parse_policy, stats=self.parse_stats)

    def num_roots(self) -> int:
        return len(self.root_steps)

    def root_state(self, index: int) -> S:
        """The state of root ``index`` (computed once)."""
        return self._roots.get(index, lambda: self.run(self.root_steps[index]()))

    def root_label(self, index: int) -> str:
        """The name of the root chance outcome ``index``."""
        return f"root={index}"

    def new_initial_state(self) -> EngineState:
        return self.state_class(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> InformationStateObserver:
        return InformationStateObserver(iig_obs_type, params)


class EngineState(pyspiel.State, Generic[S]):
    """A node of an :class:`EngineGame`: the game state and a pending decision.

    Attributes:
      inner: The game state (None before the root chance node).
      pending: A decision waiting for its seed outcome, or None.
    """

    def __init__(self, game: EngineGame[S]):
        super().__init__(game)
        self.inner: S | None = None
        self.pending: int | None = None
        if game.num_roots() == 1:
            self.inner = game.root_state(0)

    def get_game(self) -> EngineGame[S]:  # narrows the type for readers
        return super().get_game()

    def current_player(self) -> int:
        if self.inner is None or self.pending is not None:
            return pyspiel.PlayerId.CHANCE
        engine = self.get_game().engine
        if engine.is_terminal(self.inner):
            return pyspiel.PlayerId.TERMINAL
        player = engine.current_player(self.inner)
        return pyspiel.PlayerId.CHANCE if player == CHANCE else player

    def _legal_actions(self, player: int) -> list[int]:
        return [int(a) for a in self.get_game().engine.legal_actions(self.inner)]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        game = self.get_game()
        if self.inner is None:
            n = game.num_roots()
            return [(i, 1.0 / n) for i in range(n)]
        if self.pending is not None:
            return list(game.engine.seed_outcomes(self.inner, self.pending))
        return list(game.engine.chance_outcomes(self.inner))

    def _apply_action(self, action: int) -> None:
        game = self.get_game()
        engine = game.engine
        if self.inner is None:
            self.inner = game.root_state(action)
        elif self.pending is not None:
            pending, self.pending = self.pending, None
            self.inner = game.run(engine.step(self.inner, pending, int(action)))
        elif engine.current_player(self.inner) != CHANCE and engine.seed_outcomes(
            self.inner, action
        ):
            self.pending = int(action)
        else:
            self.inner = game.run(engine.step(self.inner, int(action), None))

    def _action_to_string(self, player: int, action: int) -> str:
        game = self.get_game()
        if self.inner is None:
            return game.root_label(action)
        if self.pending is not None:
            return f"seed={action}"
        return game.engine.action_to_string(self.inner, action)

    def is_terminal(self) -> bool:
        return (
            self.inner is not None
            and self.pending is None
            and self.get_game().engine.is_terminal(self.inner)
        )

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.get_game().num_players()
        return [float(r) for r in self.get_game().engine.returns(self.inner)]

    def information_state_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        if self.inner is None:
            return ""
        return self.get_game().engine.information_state(self.inner, player)

    def observation_string(self, player: int | None = None) -> str:
        return self.information_state_string(player)

    def __str__(self) -> str:
        # The whole state (OpenSpiel's history string); games override it with a readable one.
        if self.inner is None:
            return "(root not drawn)"
        pending = f"\n[pending action: {self.pending}]" if self.pending is not None else ""
        return f"{self.inner!r}{pending}"


EngineGame.state_class = EngineState
