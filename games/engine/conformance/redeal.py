"""``indistinguishable``: a player's views at re-dealt histories (see :mod:`games.engine.conformance`)."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyspiel

from games.engine.registry import GameSpec, RedealHook

if TYPE_CHECKING:
    pass

from games.engine.conformance.checks import ConformanceError, ConformanceSkipped, _play, _require

logger = logging.getLogger(__name__)


#: The strings a player's view is made of, with the game-type flag that says a game gives it.
_VIEWS = (
    ("observation_string", "provides_observation_string"),
    ("information_state_string", "provides_information_state_string"),
)


@dataclasses.dataclass(frozen=True)
class RedealStats:
    """What :func:`redeal_differences` did.

    Attributes:
      nodes: Nodes visited (every node of every game, chance and terminal included).
      compared: Alternative histories compared with the real one (node, player, history).
      skipped: Attempts the hook skipped (the new deal could not reproduce what the
        player saw).
      seconds: Wall-clock time.
    """

    nodes: int
    compared: int
    skipped: int
    seconds: float


@dataclasses.dataclass(frozen=True)
class RedealDifference:
    """The first node at which a re-dealt history gives a player another view.

    Attributes:
      player: The player.
      depth: The real node's depth (its history's length).
      kind: ``"observation_string"``, ``"information_state_string"``,
        ``"private_info"`` or ``"replay"`` (the hook's history did not replay).
      original: The real node's value (for ``"replay"``: the history's length).
      redealt: The re-dealt node's value (for ``"replay"``: the error).
    """

    player: int
    depth: int
    kind: str
    original: str
    redealt: str


def _view_kinds(game: pyspiel.Game) -> tuple[str, ...]:
    """The view strings ``game`` provides (observation, information state)."""
    game_type = game.get_type()
    return tuple(kind for kind, flag in _VIEWS if getattr(game_type, flag))


def _views(
    state: pyspiel.State,
    player: int,
    kinds: Sequence[str],
    private_info: Callable[[pyspiel.State, int], Sequence[str]] | None,
) -> dict[str, str]:
    """``player``'s view of ``state``: its private information first, then each string."""
    out = {} if private_info is None else {"private_info": repr(list(private_info(state, player)))}
    out.update({kind: str(getattr(state, kind)(player)) for kind in kinds})
    return out


def _state_at(game: pyspiel.Game, history: Sequence[int]) -> pyspiel.State:
    """The state after ``history``.

    A re-drawn chance outcome is checked against the node's outcomes here (not
    every game checks); a decision is left to the game's ``apply_action``
    (listing every legal action at every node would double the check's time).

    Raises:
      ValueError: an action after the end, or a chance outcome the node does not have.
    """
    state = game.new_initial_state()
    for depth, action in enumerate(history):
        if state.is_terminal():
            raise ValueError(f"_state_at: action {action} at depth {depth}, after the end")
        if state.is_chance_node() and int(action) not in dict(state.chance_outcomes()):
            raise ValueError(f"_state_at: chance outcome {action} impossible at depth {depth}")
        state.apply_action(int(action))
    return state


def redeal_differences(
    game: pyspiel.Game,
    redeal: RedealHook,
    *,
    num_games: int,
    per_node: int,
    private_info: Callable[[pyspiel.State, int], Sequence[str]] | None = None,
) -> tuple[RedealStats, RedealDifference | None]:
    """Re-deals every node of ``num_games`` random games for every player and compares views.

    At each node (chance and terminal nodes included) and for each player, the
    hook gives up to ``per_node`` histories the player cannot tell apart from
    the real one; each must replay, keep ``private_info(state, player)`` (when
    given) and give the same observation and information-state strings (those
    the game provides). Game ``g`` is played with ``np.random.default_rng(g)``;
    the hook draws from its own generator, seeded by ``g`` as well.

    Returns:
      The counts, and the first difference found (``None``: none; the walk
      stops at the first).
    """
    kinds = _view_kinds(game)
    nodes = compared = skipped = 0
    start = time.perf_counter()

    def stats() -> RedealStats:
        return RedealStats(nodes, compared, skipped, time.perf_counter() - start)

    for seed in range(num_games):
        play_rng = np.random.default_rng(seed)
        hook_rng = np.random.default_rng((seed, 1))
        state = game.new_initial_state()
        while True:
            nodes += 1
            history = tuple(state.history())
            for player in range(game.num_players()):
                out = redeal(game, history, player, hook_rng, per_node)
                skipped += out.skipped
                mine = _views(state, player, kinds, private_info) if out.histories else {}
                for alt in out.histories:
                    try:
                        other = _state_at(game, alt)
                    except Exception as exc:  # noqa: BLE001 - any failure to replay is the hook's
                        error = f"{type(exc).__name__}: {exc}"
                        return stats(), RedealDifference(
                            player, len(history), "replay", str(len(alt)), error
                        )
                    compared += 1
                    theirs = _views(other, player, kinds, private_info)
                    for kind, value in mine.items():
                        if theirs[kind] != value:
                            diff = RedealDifference(player, len(history), kind, value, theirs[kind])
                            return stats(), diff
            if state.is_terminal():
                break
            _play(state, play_rng)
    return stats(), None


def _excerpts(a: str, b: str, width: int = 160) -> tuple[str, str]:
    """``a`` and ``b`` from a little before their first difference, each cut to ``width``."""
    first = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = max(0, first - width // 4)

    def cut(s: str) -> str:
        return (
            ("..." if start else "")
            + s[start : start + width]
            + ("..." if start + width < len(s) else "")
        )

    return cut(a), cut(b)


def _difference_message(game_string: str, diff: RedealDifference) -> str:
    """What :func:`check_indistinguishable` says about ``diff``, and how to fix it."""
    where = f"{game_string}: player {diff.player} at depth {diff.depth}"
    if diff.kind == "replay":
        return (
            f"{where}: a history of {diff.original} actions from the re-deal hook does not "
            f"replay ({diff.redealt}); ConformanceParams.redeal must return legal histories "
            "(skip and count an attempt whose replay fails)"
        )
    original, redealt = _excerpts(diff.original, diff.redealt)
    if diff.kind == "private_info":
        return (
            f"{where}: the re-deal hook changed the player's own private information, "
            f"{original!r} became {redealt!r}; a re-deal keeps what the player knows (its "
            "own private chance outcomes and what it saw): fix ConformanceParams.redeal"
        )
    return (
        f"{where} tells a re-dealt history from the real one by its {diff.kind}: "
        f"{original!r} here, {redealt!r} re-dealt. The string shows something the player "
        "does not know (a hidden chance outcome, or a count or fact derived from one): "
        "build it from the player's own private information and the public events only "
        "(or, if the re-dealt history is one the player could tell apart, fix "
        "ConformanceParams.redeal)"
    )


def check_indistinguishable(spec: GameSpec, game_string: str) -> None:
    """A player's views are the same at the real history and at every re-deal of it.

    Skipped (:class:`ConformanceSkipped`) for a game that declares no
    ``ConformanceParams.redeal``.
    """
    p = spec.conformance
    if p.redeal is None:
        raise ConformanceSkipped(
            f"{spec.name} [indistinguishable]: skipped: {spec.name} declares no re-deal hook; "
            "give ConformanceParams.redeal to check its observations against re-dealt histories"
        )
    game = pyspiel.load_game(game_string)
    _require(
        bool(_view_kinds(game)),
        spec,
        "indistinguishable",
        f"{game_string}: the game provides neither observation nor information-state "
        "strings, so a re-deal has nothing to compare; provide them or drop "
        "ConformanceParams.redeal",
    )
    stats, diff = redeal_differences(
        game,
        p.redeal,
        num_games=p.redeal_games,
        per_node=p.redeals_per_node,
        private_info=p.private_info,
    )
    if diff is not None:
        raise ConformanceError(
            f"{spec.name} [indistinguishable]: {_difference_message(game_string, diff)}"
        )
    _require(
        stats.compared > 0,
        spec,
        "indistinguishable",
        f"{game_string}: the re-deal hook returned no alternative history at {stats.nodes} "
        f"nodes ({stats.skipped} attempts skipped); ConformanceParams.redeal must re-deal "
        "what the players do not know",
    )
    logger.info(
        "%s [indistinguishable] %s: %d nodes, %d re-dealt histories compared, %d skipped, %.2f s",
        spec.name,
        game_string,
        stats.nodes,
        stats.compared,
        stats.skipped,
        stats.seconds,
    )
