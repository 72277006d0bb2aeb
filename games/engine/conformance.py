"""The conformance runner: the checks every registered game must pass.

In the spirit of PettingZoo's ``api_test``: a game registers small
parameters (:class:`games.engine.registry.ConformanceParams`) and gets the
same checks as every other game. Every check always runs; when a game does
not provide what a check needs, the check *fails* and says what to add — it
never skips. The checks:

* ``random_sim`` — ``pyspiel.random_sim_test`` with serialisation on (engine
  states serialise as their history and replay it);
* ``determinism`` — two game objects, the same seed: the same trajectory,
  information states and returns;
* ``private_info`` — no player's information state holds another player's
  private information, and each player's holds its own (a secret is matched
  as a whole token: ``bid=1`` is not found in ``bid=10``);
* ``indistinguishable`` — for a game that declares a re-deal hook
  (:attr:`ConformanceParams.redeal <games.engine.registry.ConformanceParams.redeal>`):
  at every node of a few random games, for every player, the hook's
  alternative histories (the player's hidden chance outcomes re-drawn, what
  it saw kept) give the same ``observation_string`` and
  ``information_state_string`` as the real one, and the same
  ``private_info``. Unlike ``observations``, which compares only the nodes two
  random games happen to share, this builds the pairs by construction. The
  hook is optional (the other checks' inputs are not): a game without one has
  no ``indistinguishable`` case (:func:`conformance_cases`), and calling the
  check on it raises :class:`ConformanceSkipped`;
* ``answers`` — every request of a game that calls a model carries its
  task's JSON schema when the game's ``structured`` parameter is on (the
  default), and none when it is off (read back from the call cache);
* ``perfect_recall`` — in the materialised tree (``solvers.materialize``),
  the nodes of an information set share their player's own history;
* ``builder`` — the game's tree builder gives the tree ``solvers.materialize``
  walks (same nodes, information sets, returns, NashConv and CFR policy). The
  builder is ``ConformanceParams.build_tree`` if given, else the engine's
  batched expansion for an :class:`~games.engine.spiel.EngineGame`, else a
  walk that rebuilds every node by replaying its history from a new initial
  state (so state cloning and replay must agree).

:func:`conformance_cases` lists every (check, game string) of a game,
:func:`check_game` runs them all and returns the failures; the test module
``tests/games/engine/test_conformance.py`` runs them on every registered game.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
import unittest
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel

from games.engine.registry import GameSpec, RedealHook

if TYPE_CHECKING:
    from solvers import GameTree

__all__ = [
    "CHECKS",
    "ConformanceCase",
    "ConformanceError",
    "ConformanceSkipped",
    "RedealStats",
    "check_answers",
    "check_builder",
    "check_determinism",
    "check_game",
    "check_indistinguishable",
    "check_perfect_recall",
    "check_private_info",
    "check_observations",
    "check_random_sim",
    "conformance_cases",
    "observation_differences",
    "redeal_differences",
    "replay_tree",
]

logger = logging.getLogger(__name__)


class ConformanceError(AssertionError):
    """A game failed a conformance check (the message names the game, check and fix)."""


class ConformanceSkipped(unittest.SkipTest):
    """A check that does not apply to a game (pytest reports it as skipped, with the reason)."""


def _require(ok: bool, spec: GameSpec, check: str, message: str) -> None:
    if not ok:
        raise ConformanceError(f"{spec.name} [{check}]: {message}")


def _play(state: pyspiel.State, rng: np.random.Generator) -> None:
    """Applies one random action (chance by its probabilities)."""
    if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(outcomes, p=probs)))
    else:
        state.apply_action(int(rng.choice(state.legal_actions())))


# --- the checks --------------------------------------------------------------------------


def check_random_sim(spec: GameSpec, game_string: str) -> None:
    """``pyspiel.random_sim_test`` with serialisation on."""
    pyspiel.random_sim_test(
        pyspiel.load_game(game_string),
        num_sims=spec.conformance.num_sims,
        serialize=True,
        verbose=False,
    )


def _trajectory(game: pyspiel.Game, seed: int) -> list[tuple[Any, ...]]:
    """A random play-through: every action with every player's information state."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    out: list[tuple[Any, ...]] = []
    while not state.is_terminal():
        infos = tuple(
            "" if state.is_chance_node() else state.information_state_string(p)
            for p in range(game.num_players())
        )
        before = len(state.history())
        _play(state, rng)
        out.append((infos, state.history()[before:]))
    out.append(("returns", tuple(state.returns())))
    return out


def check_determinism(spec: GameSpec, game_string: str) -> None:
    """The same seed on two game objects gives the same trajectory and returns."""
    for seed in range(spec.conformance.num_sims):
        # Two game objects: nothing is shared between them but the (cached) model.
        first = _trajectory(pyspiel.load_game(game_string), seed)
        second = _trajectory(pyspiel.load_game(game_string), seed)
        _require(first == second, spec, "determinism", f"{game_string}: seed {seed} differs")
        _require(len(first) >= 2, spec, "determinism", f"{game_string}: no move was made")


def _holds(info: str, secret: str) -> bool:
    """``secret`` occurs in ``info`` as a whole token: ``bid=1`` is not in ``bid=10``."""
    return re.search(rf"(?<!\w){re.escape(secret)}(?!\w)", info) is not None


def check_private_info(spec: GameSpec, game_string: str) -> None:
    """No information state holds another player's private information; each holds its own."""
    private_info = spec.conformance.private_info
    _require(
        private_info is not None,
        spec,
        "private_info",
        "ConformanceParams.private_info is missing: give private_info(state, player) -> the "
        "strings only that player may know (e.g. its valuation or role)",
    )
    assert private_info is not None  # _require raised otherwise
    game = pyspiel.load_game(game_string)
    n = game.num_players()
    checked = 0
    for seed in range(spec.conformance.num_sims):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                secrets = [set(private_info(state, p)) for p in range(n)]
                for q in range(n):
                    info = state.information_state_string(q)
                    _require(
                        all(_holds(info, s) for s in secrets[q]),
                        spec,
                        "private_info",
                        f"{game_string}: player {q}'s information state lacks its own "
                        f"private information {sorted(s for s in secrets[q] if not _holds(info, s))}",
                    )
                    for p in range(n):
                        # A secret q holds as well (the same valuation, say) is not leaked.
                        for secret in secrets[p] - secrets[q] if p != q else ():
                            _require(
                                not _holds(info, secret),
                                spec,
                                "private_info",
                                f"{game_string}: player {q} sees player {p}'s {secret!r}",
                            )
                            checked += 1
            _play(state, rng)
    _require(
        checked > 0,
        spec,
        "private_info",
        f"{game_string}: no private information met in {spec.conformance.num_sims} games; "
        "give game strings where players hold private information",
    )


def _tree_strings(spec: GameSpec, check: str) -> tuple[str, ...]:
    strings = spec.conformance.tree_game_strings
    _require(
        bool(strings),
        spec,
        check,
        "ConformanceParams.tree_game_strings is empty: give at least one instance small "
        "enough to materialise whole (seconds)",
    )
    return strings


def _own_history(tree: GameTree, node: int, player: int) -> tuple[Any, ...]:
    """The (infoset key, action) sequence of ``player`` on the path to ``node``."""
    from solvers import DECISION

    hist = []
    n = node
    while tree.parent[n] >= 0:
        p = int(tree.parent[n])
        if tree.kind[p] == DECISION and tree.player[p] == player:
            hist.append((tree.infoset_keys[tree.infoset[p]], int(tree.action[n])))
        n = p
    return tuple(reversed(hist))


def check_perfect_recall(spec: GameSpec, game_string: str) -> None:
    """Every information set's nodes share their player's own past (keys and actions)."""
    import solvers

    tree = solvers.materialize(pyspiel.load_game(game_string))
    _require(
        tree.num_infosets > 1,
        spec,
        "perfect_recall",
        f"{game_string}: one information set only; give a larger tree game string",
    )
    for s in range(tree.num_infosets):
        nodes = tree.infoset_nodes[tree.infoset_node_ptr[s] : tree.infoset_node_ptr[s + 1]]
        player = int(tree.infoset_player[s])
        _require(
            all(int(tree.player[n]) == player for n in nodes),
            spec,
            "perfect_recall",
            f"{game_string}: an information set holds nodes of two players",
        )
        histories = {_own_history(tree, int(n), player) for n in nodes}
        _require(
            len(histories) == 1,
            spec,
            "perfect_recall",
            f"{game_string}: player {player} forgets its past at {tree.infoset_keys[s][:200]!r}",
        )


#: A node to add: its history, its parent, the action from the parent and its probability.
_Pending = tuple[tuple[int, ...], int | None, int | None, float | None]


def replay_tree(game: pyspiel.Game) -> GameTree:
    """The game tree built by replaying each node's history from a new initial state.

    The builder of last resort for a game without one of its own: it agrees
    with ``solvers.materialize`` (which clones states) only if a state is a
    function of its history.
    """
    from solvers import TreeBuilder

    b = TreeBuilder(num_players=game.num_players(), game_name=str(game))

    def state_at(history: Sequence[int]) -> pyspiel.State:
        state = game.new_initial_state()
        for a in history:
            state.apply_action(a)
        return state

    queue: list[_Pending] = [((), None, None, None)]
    while queue:
        nxt: list[_Pending] = []
        for history, parent, action, prob in queue:
            state = state_at(history)
            if state.is_terminal():
                b.add_terminal(state.returns(), parent=parent, action=action, prob=prob)
            elif state.is_chance_node():
                c = b.add_chance(parent=parent, action=action, prob=prob)
                nxt += [((*history, a), c, a, p) for a, p in state.chance_outcomes()]
            else:
                player = state.current_player()
                legal = state.legal_actions()
                d = b.add_decision(
                    player,
                    state.information_state_string(player),
                    legal,
                    parent=parent,
                    action=action,
                    prob=prob,
                )
                nxt += [((*history, a), d, a, None) for a in legal]
        queue = nxt
    return b.build()


def _builder(spec: GameSpec, game: pyspiel.Game) -> Callable[[pyspiel.Game], GameTree]:
    from games.engine.spiel import EngineGame

    if spec.conformance.build_tree is not None:
        return spec.conformance.build_tree
    if isinstance(game, EngineGame):
        return EngineGame.build_tree
    return replay_tree


def check_builder(spec: GameSpec, game_string: str) -> None:
    """The game's tree builder gives the tree ``solvers.materialize`` walks."""
    import solvers

    game = pyspiel.load_game(game_string)
    built = _builder(spec, game)(game)
    walked = solvers.materialize(game)

    def same(ok: bool, what: str) -> None:
        _require(ok, spec, "builder", f"{game_string}: the built tree differs in {what}")

    same(built.num_nodes == walked.num_nodes, "its number of nodes")
    same(built.num_terminals == walked.num_terminals, "its number of terminals")
    same(
        np.array_equal(np.bincount(built.kind, minlength=3), np.bincount(walked.kind, minlength=3)),
        "its node kinds",
    )
    same(set(built.infoset_keys) == set(walked.infoset_keys), "its information sets")
    same(
        sorted(map(tuple, built.returns[built.terminals]))
        == sorted(map(tuple, walked.returns[walked.terminals])),
        "its returns",
    )
    nc_b = solvers.nash_conv(built, solvers.uniform_policy(built)).nash_conv
    nc_w = solvers.nash_conv(walked, solvers.uniform_policy(walked)).nash_conv
    same(abs(nc_b - nc_w) <= 1e-9, f"NashConv of the uniform profile ({nc_b} vs {nc_w})")
    cfr_b = solvers.CFRSolver(built).run(50).average_policy()
    cfr_w = solvers.CFRSolver(walked).run(50).average_policy()
    pb = dict(zip(built.infoset_keys, cfr_b.probs, strict=True))
    pw = dict(zip(walked.infoset_keys, cfr_w.probs, strict=True))
    same(all(np.allclose(pb[k], pw[k], atol=1e-9) for k in pb), "its CFR policy (50 iterations)")


def _with_params(game_string: str, **params: object) -> pyspiel.Game:
    """``game_string``'s game with some parameters replaced."""
    game = pyspiel.load_game(game_string)
    return pyspiel.load_game(game.get_type().short_name, {**game.get_parameters(), **params})


def check_answers(spec: GameSpec, game_string: str) -> None:
    """Every request a game sends declares its answer (the JSON schema) when asked to.

    Runs on games that call a model through the engine (a ``cache`` game
    parameter): the random games' calls go to a fresh cache file, and every
    stored request must carry its task's schema when the game's
    ``structured`` parameter is true (its default), and none when it is false.
    A task without ``answer=`` on its ``PromptTemplate``, or a game that
    renders without ``structured=``, fails here.
    """
    import tempfile

    from gt_llm.cache_store import cached_requests

    params = pyspiel.load_game(game_string).get_parameters()
    if "cache" not in params:
        return  # not an engine game that calls a model (e.g. pure rules)
    structured = bool(params.get("structured", True))
    with tempfile.TemporaryDirectory(prefix="gt-llm-answers-") as tmp:
        path = f"{tmp}/calls.sqlite"
        game = _with_params(game_string, cache=path)
        for seed in range(spec.conformance.num_sims):
            rng = np.random.default_rng(seed)
            state = game.new_initial_state()
            while not state.is_terminal():
                _play(state, rng)
        requests = cached_requests(path)
    wrong = sorted(
        {str(r["task"]) for r in requests if (r.get("schema") is not None) != structured}
    )
    _require(
        not wrong,
        spec,
        "answers",
        f"{game_string}: {'no' if structured else 'a'} JSON schema on the requests of "
        f"{', '.join(wrong)}; declare the answer (PromptTemplate(answer=..., answer_line=...)) "
        "and render with structured= from the game's `structured` parameter",
    )


def observation_differences(game: pyspiel.Game, num_sims: int) -> tuple[int, int]:
    """Pairs of histories a player cannot tell apart that its observations tell apart.

    Two nodes at which player p has the same information state (and is, or is
    not, the player to move at both) differ only in what p must not know, so
    ``observation_string(p)`` must be the same at both. Plays ``num_sims``
    random games and counts the information states seen with more than one
    observation (0 for a game without observation strings).

    Returns:
      ``(differences, information states compared)``.
    """
    if not game.get_type().provides_observation_string:
        return 0, 0
    seen: dict[tuple[int, bool, str], str] = {}
    bad: set[tuple[int, bool, str]] = set()
    for seed in range(num_sims):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                mover = state.current_player()
                for p in range(game.num_players()):
                    key = (p, p == mover, state.information_state_string(p))
                    obs = state.observation_string(p)
                    if seen.setdefault(key, obs) != obs:
                        bad.add(key)
            _play(state, rng)
    return len(bad), len(seen)


def check_observations(spec: GameSpec, game_string: str) -> None:
    """Observations tell a player nothing its information state does not (paired histories)."""
    game = pyspiel.load_game(game_string)
    bad, compared = observation_differences(game, spec.conformance.num_sims)
    _require(
        bad == 0,
        spec,
        "observations",
        f"{game_string}: {bad} of {compared} information states come with more than one "
        "observation_string: it shows what the player may not know (e.g. whose turn it "
        "is at another player's node); derive the observation from what the player saw",
    )


# --- indistinguishable: re-dealt histories ----------------------------------------------

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


#: The checks, in the order they run; the first six run on every game string, the
#: last two on every tree game string.
CHECKS: dict[str, Callable[[GameSpec, str], None]] = {
    "random_sim": check_random_sim,
    "determinism": check_determinism,
    "private_info": check_private_info,
    "observations": check_observations,
    "indistinguishable": check_indistinguishable,
    "answers": check_answers,
    "perfect_recall": check_perfect_recall,
    "builder": check_builder,
}
_TREE_CHECKS = ("perfect_recall", "builder")


@dataclasses.dataclass(frozen=True)
class ConformanceCase:
    """One check on one game string (``game_string`` is None when the game gave none)."""

    spec: GameSpec
    check: str
    game_string: str | None

    @property
    def id(self) -> str:
        return f"{self.spec.name}:{self.check}:{self.game_string or '(none)'}"

    def run(self) -> None:
        """Runs the check.

        Raises:
          ConformanceError: the game fails it, or lacks what it needs.
          ConformanceSkipped: the check does not apply (``indistinguishable``
            for a game without a re-deal hook).
        """
        if self.game_string is None:
            _tree_strings(self.spec, self.check)  # fails, naming what to add
        assert self.game_string is not None  # _tree_strings raised otherwise
        self._check_short_name()
        CHECKS[self.check](self.spec, self.game_string)

    def _check_short_name(self) -> None:
        short = pyspiel.load_game(str(self.game_string)).get_type().short_name
        _require(
            short == self.spec.short_name,
            self.spec,
            self.check,
            f"{self.game_string} loads {short}, not the registered {self.spec.short_name}",
        )


def conformance_cases(specs: Iterable[GameSpec]) -> list[ConformanceCase]:
    """Every check of every game: one case per (check, game string).

    A game without tree game strings still gets one (failing) case per tree
    check, so nothing is skipped. ``indistinguishable`` is a case only of the
    games that declare a re-deal hook: a game whose game string fixes every
    player's private information (fruit trading's and the ultimatum game's
    scenario) has none to re-deal.
    """
    out = []
    for spec in specs:
        p = spec.conformance
        for check in CHECKS:
            if check == "indistinguishable" and p.redeal is None:
                continue
            strings = p.tree_game_strings if check in _TREE_CHECKS else p.game_strings
            out += [ConformanceCase(spec, check, gs) for gs in strings or (None,)]
    return out


def check_game(spec: GameSpec) -> list[str]:
    """Runs every check on ``spec``'s game; returns one line per failure (empty: conforms).

    A skipped check (:class:`ConformanceSkipped`) is logged, not a failure.
    """
    failures = []
    for case in conformance_cases([spec]):
        try:
            case.run()
        except ConformanceSkipped as skip:
            logger.info("%s: %s", case.id, skip)
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none stops the rest
            failures.append(f"{case.id}: {type(exc).__name__}: {exc}")
    return failures
