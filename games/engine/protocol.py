"""What a game built from LLM calls implements for the engine.

The contracts follow the style of ``mctx``'s ``base.py``: typed Protocols and
callables for what a game supplies, frozen dataclasses for what the engine
returns. A game's state ``S`` is an immutable value (the engine shares it
between branches); everything that needs the LLM happens inside a *step*
(:data:`games.engine.calls.Step`), a generator of LLM calls that returns the
next state.

The tree shape: at a decision state the player picks an action from
:meth:`GameLogic.legal_actions`; if :meth:`GameLogic.seed_outcomes` of that action
is non-empty, a chance node follows (usually the LLM seed of the call that
realises the action, Lindström et al. Fig. 4), and the step is
``step(state, action, outcome)``; otherwise ``step(state, action, None)``. At
a chance state (``current_player == CHANCE``) the outcome is drawn from
:meth:`GameLogic.chance_outcomes` and the step is ``step(state, outcome, None)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar, runtime_checkable

from games.engine.calls import Step

__all__ = ["CHANCE", "ExpandedNode", "GameLogic", "Outcomes", "S"]

#: The player id of a chance state (as OpenSpiel's ``PlayerId.CHANCE``).
CHANCE = -1

S = TypeVar("S")

#: Chance outcomes as (outcome, probability) pairs; probabilities sum to 1.
Outcomes = Sequence[tuple[int, float]]


@runtime_checkable
class GameLogic(Protocol[S]):
    """A game whose moves are realised by LLM calls.

    ``num_players`` is read-only: a plain attribute, a frozen dataclass field or
    a property all satisfy it.
    """

    @property
    def num_players(self) -> int:
        """Number of (non-chance) players."""
        ...

    def is_terminal(self, state: S) -> bool:
        """True when the game is over."""
        ...

    def current_player(self, state: S) -> int:
        """The player to move, or :data:`CHANCE` at a chance state."""
        ...

    def legal_actions(self, state: S) -> Sequence[int]:
        """The actions of the player to move (sorted, non-empty)."""
        ...

    def chance_outcomes(self, state: S) -> Outcomes:
        """The outcomes of a chance state."""
        ...

    def seed_outcomes(self, state: S, action: int) -> Outcomes:
        """The chance node after a decision (e.g. the LLM seed); empty for none."""
        ...

    def step(self, state: S, action: int, outcome: int | None) -> Step[S] | S:
        """The LLM calls that realise ``action`` (and ``outcome``); returns the next state.

        A move that needs no call may return the next state itself (the drivers
        of :mod:`games.engine.calls` take any value that is not a generator as
        a finished step).
        """
        ...

    def information_state(self, state: S, player: int) -> str:
        """What ``player`` knows (its information-state string); perfect recall."""
        ...

    def returns(self, state: S) -> Sequence[float]:
        """Each player's return at a terminal state."""
        ...

    def action_to_string(self, state: S, action: int) -> str:
        """A readable name of ``action`` at ``state`` (decision or chance state)."""
        ...


@dataclasses.dataclass(frozen=True)
class ExpandedNode(Generic[S]):
    """A game state and its children, keyed by ``(action, outcome)``.

    ``outcome`` is the seed outcome after a decision, or ``None`` when the
    decision has no seed chance node or the state is a chance state (then
    ``action`` is the chance outcome). ``children`` is filled by
    :func:`games.engine.tree.expand` and empty at leaves.
    """

    state: S
    children: dict[tuple[int, int | None], ExpandedNode[S]]

    def states(self) -> list[S]:
        """Every state below and including this one, breadth-first, children by key."""
        out, queue = [], [self]
        while queue:
            node = queue.pop(0)
            out.append(node.state)
            queue.extend(node.children[k] for k in sorted(node.children, key=_key_order))
        return out


def _key_order(key: tuple[int, int | None]) -> tuple[int, int]:
    return (key[0], -1 if key[1] is None else key[1])
