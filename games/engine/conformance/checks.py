"""The conformance checks that run on every game string (see :mod:`games.engine.conformance`)."""

from __future__ import annotations

import logging
import re
import unittest
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel

from games.engine.registry import GameSpec

if TYPE_CHECKING:
    from solvers import GameTree

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
