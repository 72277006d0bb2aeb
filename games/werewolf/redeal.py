"""Re-deals of a Werewolf history that one seat cannot tell apart from the real one.

The conformance check ``indistinguishable`` (:mod:`games.engine.conformance`) asks
:func:`redeal` for such histories at every node of a few random games and requires
the seat's observation and information-state strings to be the same at both.

What a seat knows (:mod:`games.werewolf.rules`): its own role; a werewolf its
partners, and while alive the wolves' votes and their victim; the seer the result
of each of its checks; the doctor and the guard their own protections; the witch,
on each night she is asked, the wolves' victim, and her own potions; everyone the
public events (each night's deaths, bids, speeches, votes, exiles, roles revealed
with ``reveal_roles`` or at the end), and that the game went on after each death
(the werewolves had neither all died nor reached parity).

A re-deal

1. draws a new deal consistent with that: the seat's role, its partners, its check
   results and the revealed roles are kept, the witch's victims are no werewolves,
   the dead of a night without a witch in the game are no werewolves either; the
   other roles are shuffled, and a deal under which the game would have ended
   where it went on is drawn again;
2. replays the history on it: the deal, then every day action and tie-break as it
   was; each night, the moves the seat made or saw as they were, and the hidden
   moves (other roles' night actions; a non-werewolf's unseen wolf votes) chosen
   anew so that the night ends with the same deaths;
3. ends, when the real node is in a night, at the first step of the new night that
   is not before the real one's (wolves, tie-break, doctor, guard, seer, witch),
   with the seat to move there exactly when it is to move at the real node.

An attempt that fails (no deal fits, a replayed action is illegal under the new
deal, no hidden moves give the same deaths, no node matches mid-night) is skipped
and counted. The hook never looks at the strings it is checked with: what it keeps
comes from the rules' state (roles, checks, who lives, who acts), so a string that
shows more than the rules let a seat see fails the check instead of being hidden
by the hook.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pyspiel

from games.engine.registry import Redeals
from games.werewolf import rules
from games.werewolf.game import WerewolfGame, config_from_params
from games.werewolf.rules import (
    CHANCE,
    ROLES,
    Action,
    Config,
    GameState,
    Save,
    Skip,
    Target,
    decode_action,
    encode_action,
)

__all__ = [
    "SeatKnowledge",
    "Unreproducible",
    "alternative_history",
    "redeal",
    "replay_states",
    "sample_deal",
    "seat_knowledge",
]

logger = logging.getLogger(__name__)

#: Night steps in the order they come; a new night stops at the first step not before
#: the real node's.
_NIGHT_ORDER = (
    "night_wolves",
    "night_tie",
    "night_doctor",
    "night_guard",
    "night_seer",
    "night_witch_save",
    "night_witch_poison",
)
#: Draws of a deal before an attempt is given up (the game's going-on rejects some).
_DEAL_DRAWS = 20


class Unreproducible(Exception):
    """A new deal cannot reproduce what the seat saw (the attempt is skipped)."""


@dataclasses.dataclass(frozen=True)
class SeatKnowledge:
    """What one seat knows about the deal at a node.

    Attributes:
      dealt: Seats dealt so far (all of them after the deal).
      roles: Seat -> role it knows (its own, its checks' with ``seer_reveals=role``,
        the revealed ones).
      werewolf: Seat -> whether it is a werewolf, where the seat knows that much (a
        werewolf's partners, a team check, a witch's victim, a night's dead without
        a witch).
      went_on: Who lived at each death after which the game went on: no deal may
        end the game there.
    """

    dealt: int
    roles: dict[int, str]
    werewolf: dict[int, bool]
    went_on: tuple[tuple[bool, ...], ...]


@functools.lru_cache(maxsize=4)
def replay_states(config: Config, history: tuple[int, ...]) -> tuple[GameState, ...]:
    """The rules state before each action of ``history``, and after the last."""
    states = [rules.initial_state(config)]
    for action in history:
        s = states[-1]
        actor = rules.current_player(s)
        move = action if actor == CHANCE else decode_action(config.num_players, action)
        states.append(rules.apply(s, actor, move))
    return tuple(states)


def _sees_wolves(start: GameState, player: int | None) -> bool:
    """Whether ``player`` sees the wolves' night votes (a living werewolf)."""
    return player is not None and start.roles[player] == "werewolf" and bool(start.alive[player])


def _new_events(before: GameState, after: GameState) -> tuple[rules.Event, ...]:
    return after.events[len(before.events) :]


def seat_knowledge(states: Sequence[GameState], player: int | None) -> SeatKnowledge:
    """What ``player`` knows about the deal at ``states[-1]`` (``states``: the history's).

    ``player=None`` is the public: what every player at the table knows (the
    public events only).
    """
    final = states[-1]
    config = final.config
    dealt = len(final.roles)
    roles: dict[int, str] = (
        {player: final.roles[player]} if player is not None and player < dealt else {}
    )
    werewolf: dict[int, bool] = {}
    role = roles.get(player) if player is not None else None
    if role == "werewolf" and dealt == config.num_players:
        werewolf = {q: r == "werewolf" for q, r in enumerate(final.roles)}
    if role == "seer":
        for _, target, result in final.checks:
            if config.seer_reveals == "role":
                roles[target] = result
            else:
                werewolf[target] = result == "werewolf"
    for e in final.events:
        if e.visible_to is None and "roles" in e.data:
            roles.update({int(q): str(r) for q, r in e.data["roles"].items()})
        if e.kind == "witch_victim" and player is not None and e.seen_by(player):
            werewolf[int(e.data["target"])] = False
        if e.kind == "deaths" and config.roles.witch == 0:
            werewolf.update(dict.fromkeys(e.data["players"], False))
    went_on = tuple(
        after.alive
        for before, after in zip(states, states[1:], strict=False)
        if not after.is_terminal()
        and any(e.kind in ("deaths", "exile") for e in _new_events(before, after))
    )
    return SeatKnowledge(dealt, roles, werewolf, went_on)


def sample_deal(
    config: Config, known: SeatKnowledge, rng: np.random.Generator
) -> tuple[str, ...] | None:
    """A whole deal consistent with ``known`` (``None``: none found in a few draws)."""
    n = config.num_players
    pool = Counter(config.roles.as_dict())
    pool.subtract(known.roles.values())
    if any(c < 0 for c in pool.values()):
        return None
    free = [q for q in range(n) if q not in known.roles]
    must = [q for q in free if known.werewolf.get(q) is True]
    may = [q for q in free if q not in known.werewolf]
    extra = pool["werewolf"] - len(must)
    if not 0 <= extra <= len(may):
        return None
    others = [r for r in ROLES if r != "werewolf" for _ in range(pool[r])]
    for _ in range(_DEAL_DRAWS):
        wolves = set(must) | {int(q) for q in rng.choice(may, size=extra, replace=False)}
        rest = [q for q in free if q not in wolves]
        deal = dict(known.roles) | dict.fromkeys(wolves, "werewolf")
        deal |= {q: others[i] for q, i in zip(rest, rng.permutation(len(others)), strict=True)}
        roles = tuple(deal[q] for q in range(n))
        if all(rules.winner_of(roles, alive) is None for alive in known.went_on):
            return roles
    return None


def _apply(s: GameState, action: int, out: list[int]) -> GameState:
    """``s`` after the action id ``action`` (appended to ``out``); illegal: infeasible."""
    actor = rules.current_player(s)
    move = action if actor == CHANCE else decode_action(s.num_players, action)
    try:
        nxt = rules.apply(s, actor, move)
    except ValueError as exc:
        raise Unreproducible(str(exc)) from None
    out.append(action)
    return nxt


def _move(s: GameState, action: Action, out: list[int]) -> GameState:
    return _apply(s, encode_action(s.num_players, action), out)


def _pick(options: Sequence[Action], rng: np.random.Generator) -> Action:
    if not options:
        raise Unreproducible("no legal move")
    return options[int(rng.integers(len(options)))]


@dataclasses.dataclass(frozen=True)
class _NightPlan:
    """The hidden moves of a new night: its victim, whether it dies, who is poisoned."""

    victim: int | None  # None: the seat saw the wolves' votes, which are replayed
    kill: bool
    poison: int | None


def _hidden_move(s: GameState, actor: int, plan: _NightPlan, rng: np.random.Generator) -> Action:
    """A night move the seat does not see, chosen to carry out ``plan``."""
    legal = rules.legal_actions(s, actor)
    victim = s.victim if plan.victim is None else plan.victim
    if s.phase == "night_seer" or victim is None:  # a check shows nowhere else
        return _pick(legal, rng)
    hit = Target(victim)
    if s.phase == "night_wolves":
        if hit not in legal:
            raise Unreproducible(f"P{victim} is no legal victim under this deal")
        return hit
    if s.phase in ("night_doctor", "night_guard"):
        if not plan.kill and hit in legal:
            return hit
        return _pick([a for a in legal if a != hit] or legal, rng)
    if s.phase == "night_witch_save":
        return Save() if not plan.kill and victim not in s.protected else Skip()
    if s.phase == "night_witch_poison":
        return Skip() if plan.poison is None else Target(plan.poison)
    raise AssertionError(f"_hidden_move: unhandled phase {s.phase}")


def _reached(s: GameState, final: GameState, sees_wolves: bool) -> bool:
    """Whether the new night ``s`` is at or past the real node ``final``'s step."""
    here, there = _NIGHT_ORDER.index(s.phase), _NIGHT_ORDER.index(final.phase)
    if here == there == 0 and sees_wolves:
        return len(s.wolf_votes) == len(final.wolf_votes)
    return here >= there


def _night(
    s: GameState,
    segment: Sequence[tuple[GameState, int]],
    after: GameState,
    player: int | None,
    plan: _NightPlan,
    rng: np.random.Generator,
    out: list[int],
) -> GameState:
    """The new night from ``s``: ``player``'s own and seen moves replayed, hidden ones by
    ``plan``, to the same deaths as the real night (``after``: the state after it; a
    night state when the real node is inside the night)."""
    start = segment[0][0]
    sees_wolves = _sees_wolves(start, player)
    replays: dict[tuple[str, int], list[int]] = {}
    for st, action in segment:
        actor = rules.current_player(st)
        if actor == player or (sees_wolves and st.phase in ("night_wolves", "night_tie")):
            replays.setdefault((st.phase, actor), []).append(action)
    inside = after.phase.startswith("night")  # the real node is in this night
    while s.phase.startswith("night"):
        if inside and _reached(s, after, sees_wolves):
            break
        actor = rules.current_player(s)
        queue = replays.get((s.phase, actor))
        step: list[int] = []
        if queue is not None:
            if not queue:
                raise Unreproducible(f"P{actor} has no move left to replay in {s.phase}")
            nxt = _apply(s, queue[0], step)
        elif actor == CHANCE:
            raise Unreproducible("a hidden tie-break")  # hidden wolves vote as one
        else:
            nxt = _move(s, _hidden_move(s, actor, plan, rng), step)
        if inside and not nxt.phase.startswith("night"):
            break  # the night would end before the real node's step: stop here
        if queue:
            queue.pop(0)
        s = nxt
        out += step
    if any(replays.values()):
        raise Unreproducible("a move the seat made or saw is not replayed")
    if inside:
        if (rules.current_player(s) == player) != (rules.current_player(after) == player):
            raise Unreproducible("the seat would (not) be to move")
    elif s.alive != after.alive or s.phase != after.phase:
        raise Unreproducible("another night outcome")
    return s


def _night_plans(
    s: GameState,
    segment: Sequence[tuple[GameState, int]],
    after: GameState,
    player: int | None,
    rng: np.random.Generator,
) -> list[_NightPlan]:
    """Plans for the hidden moves of a night, the likeliest to fit first."""
    start = segment[0][0]
    inside = after.phase.startswith("night")
    dead = set() if inside else {q for q in start.living() if not after.alive[q]}
    if _sees_wolves(start, player):
        victims: list[int | None] = [None]
    else:
        seen = [
            int(e.data["target"])
            for e in _new_events(start, after)
            if e.kind == "witch_victim" and player is not None and e.seen_by(player)
        ]
        living = [q for q in s.living() if s.roles[q] != "werewolf"]
        ordered = sorted(living, key=lambda q: (q not in dead, float(rng.random())))
        victims = list(seen) if seen else list(ordered)
    plans = []
    for v in victims:
        victim = after.victim if v is None else v
        if victim is None:  # the real node is inside the wolves' step: nothing to match yet
            plans.append(_NightPlan(v, True, None))
            continue
        rest = sorted(dead - {victim})
        if len(rest) <= 1:
            plans.append(_NightPlan(v, inside or victim in dead, rest[0] if rest else None))
    return plans


def alternative_history(
    states: Sequence[GameState],
    history: Sequence[int],
    player: int | None,
    roles: Sequence[str],
    rng: np.random.Generator,
) -> tuple[int, ...]:
    """``history`` replayed on the deal ``roles`` as ``player`` would see it unchanged.

    Args:
      states: The rules state before each action of ``history``, and after the last.
      history: The real action ids.
      player: The seat that must not tell the two apart (None: the public, who
        sees only the public events; every night move is then drawn anew).
      roles: The new deal (every seat's role).
      rng: Draws the hidden moves.

    Raises:
      Unreproducible: the deal cannot reproduce what ``player`` saw.
    """
    final = states[-1]
    out: list[int] = []
    s = rules.initial_state(final.config)
    for seat in range(len(final.roles)):
        s = _apply(s, ROLES.index(roles[seat]), out)
    i = len(final.roles)
    while i < len(history):
        if not states[i].phase.startswith("night"):
            if (states[i].phase, rules.current_player(states[i])) != (
                s.phase,
                rules.current_player(s),
            ):
                raise Unreproducible(
                    f"the new game is at {s.phase}, the real one at {states[i].phase}"
                )
            s = _apply(s, history[i], out)
            i += 1
            continue
        j = i
        while j < len(history) and states[j].phase.startswith("night"):
            j += 1
        segment = list(zip(states[i:j], history[i:j], strict=True))
        for plan in _night_plans(s, segment, states[j], player, rng):
            trial: list[int] = []
            try:
                s_night = _night(s, segment, states[j], player, plan, rng, trial)
            except Unreproducible:
                continue
            s, out = s_night, out + trial
            break
        else:
            raise Unreproducible(f"no hidden moves give round {states[i].round}'s night")
        i = j
    if not final.phase.startswith("night") and s.phase != final.phase:
        raise Unreproducible(f"the new game is at {s.phase}, the real one at {final.phase}")
    return tuple(out)


def redeal(
    game: pyspiel.Game,
    history: Sequence[int],
    player: int,
    rng: np.random.Generator,
    num: int,
) -> Redeals:
    """Up to ``num`` Werewolf histories ``player`` cannot tell apart from ``history``.

    The conformance hook (``ConformanceParams.redeal``) of ``python_werewolf``; see
    the module docstring for what is kept and what is drawn anew. A history equal to
    ``history`` (nothing left to re-deal, as at the end, where every role is shown)
    or to another one returned is dropped; a failed attempt is counted in
    ``skipped``.
    """
    config = (
        game.config if isinstance(game, WerewolfGame) else config_from_params(game.get_parameters())
    )
    states = replay_states(config, tuple(int(a) for a in history))
    known = seat_knowledge(states, player)
    found: list[tuple[int, ...]] = []
    skipped = 0
    for _ in range(num):
        roles = sample_deal(config, known, rng)
        try:
            if roles is None:
                raise Unreproducible("no deal fits what the seat knows")
            alt = alternative_history(states, history, player, roles, rng)
        except Unreproducible as why:
            logger.debug("redeal: P%d at depth %d skipped: %s", player, len(history), why)
            skipped += 1
            continue
        if alt != tuple(history) and alt not in found:
            found.append(alt)
    return Redeals(tuple(found), skipped)
