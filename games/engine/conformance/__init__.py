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
from collections.abc import Callable, Iterable

import pyspiel

from games.engine.conformance.checks import (
    ConformanceError,
    ConformanceSkipped,
    _require,
    _tree_strings,
    check_answers,
    check_builder,
    check_determinism,
    check_observations,
    check_perfect_recall,
    check_private_info,
    check_random_sim,
    observation_differences,
    replay_tree,
)
from games.engine.conformance.redeal import (
    RedealStats,
    check_indistinguishable,
    redeal_differences,
)
from games.engine.registry import GameSpec

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
