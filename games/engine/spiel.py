"""The OpenSpiel side of games built from LLM calls.

* :func:`engine_game_type` and :func:`engine_game_info` — a game's
  ``pyspiel.GameType`` / ``GameInfo`` from the few facts that differ between
  engine games (every engine game is sequential, explicitly stochastic,
  imperfect-information, terminal-reward, with information-state and
  observation strings and no tensors);
* :func:`shared_model` — one chat model per (backend, cache, options) per
  process, so every game object loaded by ``pyspiel.load_game`` shares the
  cache connection; the engine's default cache is a process-wide in-memory
  one (:data:`DEFAULT_CACHE`);
* :class:`RootCache` — compute-once, thread-safe storage of root states (a
  root often needs LLM calls, e.g. a fixed opening message);
* :class:`InformationStateObserver` — a string-only observer returning the
  player's information state (perfect recall);
* :class:`EngineGame` and :class:`EngineState` — a generic ``pyspiel.Game`` /
  ``pyspiel.State`` pair over a :class:`games.engine.protocol.GameLogic`: an
  optional uniform chance node over several roots, then decisions, seed
  chance nodes and chance states exactly as the protocol describes, each
  move realised by :func:`games.engine.calls.run_sync`. Its tree is the one
  :mod:`games.engine.tree` builds.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import numpy as np
import pyspiel

from games.engine.calls import Step, run_sync
from games.engine.protocol import CHANCE, GameLogic
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParsePolicy, ParseStats
from gt_llm.registry import load_model

if TYPE_CHECKING:
    from solvers import GameTree

__all__ = [
    "DEFAULT_CACHE",
    "EngineGame",
    "EngineState",
    "InformationStateObserver",
    "RootCache",
    "StringObserver",
    "engine_game_info",
    "engine_game_type",
    "shared_model",
]

S = TypeVar("S")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_MODELS: dict[tuple[Any, ...], ChatModel] = {}
_MODELS_LOCK = threading.Lock()

#: The cache of a game loaded without ``cache=PATH``: in memory, shared by the process, so
#: that OpenSpiel's algorithms (which revisit states) pay one call per distinct request.
DEFAULT_CACHE = ":memory:"
#: The ``cache=`` value that asks for no cache at all.
NO_CACHE = "none"

_Utility = pyspiel.GameType.Utility
# OpenSpiel's player ids of chance and terminal states, as ints.
_CHANCE_ID: int = pyspiel.PlayerId.CHANCE
_TERMINAL_ID: int = pyspiel.PlayerId.TERMINAL


def engine_game_type(
    short_name: str,
    long_name: str,
    *,
    num_players: int | tuple[int, int],
    parameters: dict[str, Any],
    utility: pyspiel.GameType.Utility = _Utility.GENERAL_SUM,
) -> pyspiel.GameType:
    """The ``pyspiel.GameType`` of an engine game.

    Args:
      short_name: The name ``pyspiel.load_game`` knows (``"python_<game>"``).
      long_name: A readable name.
      num_players: The number of players, or ``(min, max)``.
      parameters: The game's parameters with their defaults (every engine
        game takes ``backend`` and ``cache``; include them).
      utility: ``GENERAL_SUM`` (default), ``ZERO_SUM``, ``CONSTANT_SUM`` ...
    """
    lo, hi = (num_players, num_players) if isinstance(num_players, int) else num_players
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=hi,
        min_num_players=lo,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=False,
        parameter_specification=parameters,
    )


def engine_game_info(
    *,
    num_actions: int,
    max_chance_outcomes: int,
    num_players: int,
    utility_bounds: tuple[float, float],
    max_game_length: int,
    utility_sum: float | None = None,
) -> pyspiel.GameInfo:
    """The ``pyspiel.GameInfo`` of a loaded engine game (keywords name every fact).

    ``max_game_length`` counts decisions and chance nodes (seed chance nodes
    and the root chance node over several roots included).
    """
    return pyspiel.GameInfo(
        num_distinct_actions=num_actions,
        max_chance_outcomes=max_chance_outcomes,
        num_players=num_players,
        min_utility=float(utility_bounds[0]),
        max_utility=float(utility_bounds[1]),
        utility_sum=utility_sum,
        max_game_length=max_game_length,
    )


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
      cache: SQLite cache path; ``""`` for the engine's default
        (:data:`DEFAULT_CACHE`, in memory), ``"none"`` for no cache.
      timeout: Per-call timeout of a remote backend (None: the backend's).
      requests_per_minute: Rate limit of a remote backend (None: none).
    """
    cache = cache or DEFAULT_CACHE
    key = (backend, cache, timeout, requests_per_minute)
    with _MODELS_LOCK:
        if key not in _MODELS:
            options: dict[str, Any] = {}
            # Only options given: the scripted backend accepts none.
            if timeout is not None:
                options["timeout"] = timeout
            if requests_per_minute is not None:
                options["requests_per_minute"] = requests_per_minute
            _MODELS[key] = load_model(
                backend, cache=None if cache == NO_CACHE else cache, **options
            )
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


class StringObserver(Protocol):
    """What an engine game's ``make_py_observer`` returns: a string observer.

    OpenSpiel's Python observation API calls :meth:`set_from` and
    :meth:`string_from` (a string-only observer also holds an empty ``tensor``
    and ``dict``). :class:`InformationStateObserver` is the engine's; a game
    may return its own (fruit trading honours the observation type).
    """

    def set_from(self, state: pyspiel.State, player: int) -> None:
        """Updates the (empty) tensor from ``state``."""
        ...

    def string_from(self, state: pyspiel.State, player: int) -> str:
        """What ``player`` observes in ``state``, as a string."""
        ...


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
        text: str = state.information_state_string(player)
        return text


class EngineGame(pyspiel.Game, Generic[S]):
    """A ``pyspiel.Game`` over a :class:`GameLogic`.

    Subclasses call :meth:`setup_logic` before ``super().__init__(game_type,
    game_info, params)`` and may override :meth:`root_label` and
    :attr:`state_class`.
    """

    state_class: type[EngineState[Any]] = None  # type: ignore[assignment]  # set below

    def setup_logic(
        self,
        logic: GameLogic[S],
        model: ChatModel,
        roots: Sequence[Callable[[], Step[S] | S]],
        *,
        parse_policy: ParsePolicy | None = None,
    ) -> None:
        """Sets the game logic, the model and the root steps.

        Args:
          logic: The game logic (states and steps).
          model: The chat model every move uses.
          roots: One factory per root (a uniform chance node picks the root
            when there are several): a step, or the root state itself when it
            needs no call.
          parse_policy: Re-ask policy (default :class:`ParsePolicy`).
        """
        if not roots:
            raise ValueError("EngineGame.setup_logic: give at least one root")
        self.logic = logic
        self.model = model
        self.root_steps = tuple(roots)
        self.parse_policy = parse_policy or ParsePolicy()
        self.parse_stats = ParseStats()
        self._roots: RootCache[int, S] = RootCache()

    def run(self, gen: Step[S] | S) -> S:
        """Runs one step (or takes a ready state) with the game's model, parse policy and counters."""
        return run_sync(gen, self.model, policy=self.parse_policy, stats=self.parse_stats)

    def num_roots(self) -> int:
        return len(self.root_steps)

    def root_state(self, index: int) -> S:
        """The state of root ``index`` (computed once)."""
        return self._roots.get(index, lambda: self.run(self.root_steps[index]()))

    def root_label(self, index: int) -> str:
        """The name of the root chance outcome ``index``."""
        return f"root={index}"

    def new_initial_state(self) -> EngineState[S]:
        return self.state_class(self)

    def build_tree(self, *, progress: bool = False) -> GameTree:
        """This game's tree by the engine's batched expansion (:mod:`games.engine.tree`).

        The same tree ``solvers.materialize(self)`` walks (the conformance
        runner checks it), built with every level's calls in one batch: a
        chance node over the roots when there are several, then each root's tree.
        """
        from games.engine.tree import build_subgames, whole_game_tree

        subgames = build_subgames(
            self.logic,
            [make() for make in self.root_steps],
            self.model,
            game_name=self.get_type().short_name,
            policy=self.parse_policy,
            stats=self.parse_stats,
            progress=progress,
        )
        if len(subgames) == 1:
            return subgames[0].tree
        return whole_game_tree(
            self.logic, [sg.root for sg in subgames], game_name=self.get_type().short_name
        )

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> StringObserver:
        return InformationStateObserver(iig_obs_type, params)


class _Held(Generic[S]):
    """The engine side of an :class:`EngineState`: the game state and a pending decision.

    OpenSpiel clones a Python state by deep-copying its attributes and
    serialises it by pickling them. This holder deep-copies its game state
    (immutable states return themselves) but pickles as a *stale* marker: a
    deserialised state rebuilds itself by replaying its action history
    (:meth:`EngineState._node`), so game states never need to be picklable and
    a serialised state is a few bytes whatever the dialogue.
    """

    __slots__ = ("inner", "pending", "stale")

    def __init__(self, inner: S | None = None, pending: int | None = None, stale: bool = False):
        self.inner = inner
        self.pending = pending
        self.stale = stale

    def __deepcopy__(self, memo: dict[int, Any]) -> _Held[S]:
        return _Held(copy.deepcopy(self.inner, memo), self.pending, self.stale)

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return (_stale_held, ())


def _stale_held() -> _Held[Any]:
    return _Held(stale=True)


class EngineState(pyspiel.State, Generic[S]):
    """A node of an :class:`EngineGame`: the game state and a pending decision.

    Serialisation (``state.serialize()``, ``pyspiel.serialize_game_and_state``)
    stores the action history; deserialising replays it (through the game's
    model and cache, so no call is paid twice).

    Attributes:
      inner: The game state (None before the root chance node).
      pending: A decision waiting for its seed outcome, or None.
    """

    def __init__(self, game: EngineGame[S]):
        super().__init__(game)
        self._held: _Held[S] = _Held(game.root_state(0) if game.num_roots() == 1 else None)

    def _node(self) -> _Held[S]:
        held = self._held
        if held.stale:
            # Deserialised: OpenSpiel restored the history; replay it to rebuild the state.
            fresh = self.get_game().new_initial_state()
            for action in self.history():
                fresh.apply_action(action)
            held = self._held = fresh._held
        return held

    @property
    def inner(self) -> S | None:
        return self._node().inner

    @inner.setter
    def inner(self, value: S | None) -> None:
        self._node().inner = value

    @property
    def pending(self) -> int | None:
        return self._node().pending

    @pending.setter
    def pending(self, value: int | None) -> None:
        self._node().pending = value

    def get_game(self) -> EngineGame[S]:  # narrows the type for readers
        game: EngineGame[S] = super().get_game()
        return game

    def current_player(self) -> int:
        if self.inner is None or self.pending is not None:
            return _CHANCE_ID
        logic = self.get_game().logic
        if logic.is_terminal(self.inner):
            return _TERMINAL_ID
        player = logic.current_player(self.inner)
        return _CHANCE_ID if player == CHANCE else player

    def _legal_actions(self, player: int) -> list[int]:
        # OpenSpiel asks only at decision states (never at the root chance node).
        inner = self.inner
        assert inner is not None
        return [int(a) for a in self.get_game().logic.legal_actions(inner)]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        game = self.get_game()
        if self.inner is None:
            n = game.num_roots()
            return [(i, 1.0 / n) for i in range(n)]
        if self.pending is not None:
            return list(game.logic.seed_outcomes(self.inner, self.pending))
        return list(game.logic.chance_outcomes(self.inner))

    def _apply_action(self, action: int) -> None:
        game = self.get_game()
        logic = game.logic
        if self.inner is None:
            self.inner = game.root_state(action)
        elif self.pending is not None:
            pending, self.pending = self.pending, None
            self.inner = game.run(logic.step(self.inner, pending, int(action)))
        elif logic.current_player(self.inner) != CHANCE and logic.seed_outcomes(self.inner, action):
            self.pending = int(action)
        else:
            self.inner = game.run(logic.step(self.inner, int(action), None))

    def _action_to_string(self, player: int, action: int) -> str:
        game = self.get_game()
        if self.inner is None:
            return game.root_label(action)
        if self.pending is not None:
            return f"seed={action}"
        return game.logic.action_to_string(self.inner, action)

    def is_terminal(self) -> bool:
        return (
            self.inner is not None
            and self.pending is None
            and self.get_game().logic.is_terminal(self.inner)
        )

    def returns(self) -> list[float]:
        inner = self.inner
        if inner is None or not self.is_terminal():
            return [0.0] * self.get_game().num_players()
        return [float(r) for r in self.get_game().logic.returns(inner)]

    def information_state_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        if self.inner is None:
            return ""
        return self.get_game().logic.information_state(self.inner, player)

    def observation_string(self, player: int | None = None) -> str:
        return self.information_state_string(player)

    def __str__(self) -> str:
        # The whole state (OpenSpiel's history string); games override it with a readable one.
        if self.inner is None:
            return "(root not drawn)"
        pending = f"\n[pending action: {self.pending}]" if self.pending is not None else ""
        return f"{self.inner!r}{pending}"


EngineGame.state_class = EngineState
