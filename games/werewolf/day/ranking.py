"""The speaker's view of the others in the Werewolf day: beliefs, suspicion ranking, options.

A living player's opponent model (:mod:`gt_llm.opponents`) is read as the
vote prompt reads it: per other player, a distribution over roles
(:func:`werewolf_probabilities`, after the decision's consultation,
:func:`observer_beliefs`). The speaker ranks the living others, most
suspected first, by hard knowledge (a werewolf knows its partners and that
the others are not werewolves; the seer its checks), then its belief that the
player is a werewolf (in a full game, averaged with its deception score of the
player), then public accusations so far, then seat
(:func:`suspicion_ranking`; the ordering itself is :func:`rank_suspects`, a pure
function of those facts that a full game's agent calls too,
:mod:`games.werewolf.players.cfr_policy`); the slots of the action abstraction (``most``,
``most2``, ``least``, ``least2``) name players by that ranking, which turns
each action id into a concrete speech act or none (:func:`speech_options`).
:mod:`games.werewolf.day.steps` describes the tree they belong to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

from games.werewolf.day.abstraction import concrete_act
from games.werewolf.day.state import DayRoot, Statement
from games.werewolf.players.beliefs import SeatBeliefs
from games.werewolf.players.prompts import player_name
from games.werewolf.players.table_beliefs import seat_decision
from games.werewolf.rules import SpeechAct
from gt_llm.opponents import OpponentModel

__all__ = [
    "observer_beliefs",
    "public_accusations",
    "rank_suspects",
    "speech_options",
    "suspicion_ranking",
    "werewolf_probabilities",
]


def werewolf_probabilities(
    model: OpponentModel, subjects: Sequence[int]
) -> dict[int, dict[str, float]]:
    """The role distributions the vote prompt carries: ``model.belief(p).distribution``.

    Args:
      model: The observer's model (after any consultation).
      subjects: Seats asked about.

    Returns:
      ``{seat: {role: probability}}``; a subject without a distribution is left out.
    """
    out: dict[int, dict[str, float]] = {}
    for q in subjects:
        dist = dict(model.belief(player_name(q)).distribution)
        if dist:
            out[q] = dist
    return out


def observer_beliefs(
    root: DayRoot, model: OpponentModel, observer: int
) -> dict[int, dict[str, float]]:
    """The observer's beliefs about the living others, after the vote decision's consult.

    The consultation is the arena's one
    (:func:`~games.werewolf.players.table_beliefs.seat_decision` of ``day_vote``),
    about the living others; its model is read, not kept (the tree's models
    change by what the listeners hear only).
    """
    others = [q for q in root.living if q != observer]
    seat = SeatBeliefs(
        seat=observer, role=root.role(observer), config=root.settings.config, model=model
    )
    consulted, _ = seat_decision(seat, "day_vote", others, readings=False)
    return werewolf_probabilities(consulted.model, others)


def public_accusations(acts: Iterable[SpeechAct]) -> Counter[int]:
    """Per seat, the public statements against it: accusations and checks that found a werewolf."""
    c: Counter[int] = Counter()
    for a in acts:
        # An accusation and a check always name a target (SpeechAct checks it).
        if a.target is not None and (
            a.kind == "accuse" or (a.kind == "share_check" and a.result == "werewolf")
        ):
            c[int(a.target)] += 1
    return c


def rank_suspects(
    others: Sequence[int],
    *,
    role: str | None,
    werewolves: Collection[int] = (),
    checks: Iterable[tuple[int, str]] = (),
    beliefs: Mapping[int, Mapping[str, float]] | None = None,
    acts: Iterable[SpeechAct] = (),
    suspicion: Mapping[int, float] | None = None,
) -> tuple[int, ...]:
    """``others``, most suspected first: the ordering of :func:`suspicion_ranking` (pure).

    The key, in order: hard knowledge (a werewolf knows ``werewolves``, so every
    other is known not to be one; the seer knows its ``checks``: a known werewolf
    first, a known non-werewolf last), then the speaker's reading of the player
    (highest first): the mean of ``beliefs[q]["werewolf"]`` and ``suspicion[q]``
    over those given (one alone when the other is missing; 0 when both are),
    then :func:`public_accusations` of ``acts`` (most first), then seat.

    The day tree has no deception scores (its listeners extract beliefs only), so
    the solver's :func:`suspicion_ranking` passes none; a full game's agent passes
    the scores its twin's prompt carries, so that the two rank by the same signal
    (:func:`games.werewolf.players.cfr_policy.full_game_ranking`).

    Args:
      others: The speaker's living others.
      role: The speaker's role.
      werewolves: The werewolves the speaker knows (read only when ``role`` is werewolf).
      checks: The seer's ``(target, result)`` checks (read only when ``role`` is seer).
      beliefs: The speaker's role distribution per player (None: no belief term).
      acts: Every public statement so far (earlier days and today).
      suspicion: The speaker's deception scores per player, in [0, 1] (None: none).
    """
    known: dict[int, float] = {}
    if role == "werewolf":
        wolves = set(werewolves)
        known = {q: (1.0 if q in wolves else -1.0) for q in others}
    elif role == "seer":
        for t, r in checks:
            known[t] = 1.0 if r == "werewolf" else -1.0
    accused = public_accusations(acts)
    return tuple(
        sorted(
            others,
            key=lambda q: (
                -known.get(q, 0.0),
                -_reading(q, beliefs or {}, suspicion or {}),
                -accused[q],
                q,
            ),
        )
    )


def _reading(
    q: int, beliefs: Mapping[int, Mapping[str, float]], suspicion: Mapping[int, float]
) -> float:
    """The mean of the belief that ``q`` is a werewolf and its deception score, where given."""
    given = [
        float(v) for v in (beliefs.get(q, {}).get("werewolf"), suspicion.get(q)) if v is not None
    ]
    return sum(given) / len(given) if given else 0.0


def suspicion_ranking(
    root: DayRoot,
    models: Sequence[OpponentModel | None],
    statements: Sequence[Statement],
    speaker: int,
) -> tuple[int, ...]:
    """The speaker's living others, most suspected first (module docstring, :func:`rank_suspects`)."""
    model = models[speaker]
    return rank_suspects(
        [q for q in root.living if q != speaker],
        role=root.role(speaker),
        werewolves=root.werewolves(),
        checks=[(t, r) for _, t, r in root.start.checks],
        beliefs=observer_beliefs(root, model, speaker) if model is not None else None,
        acts=[a for _, a in root.past_acts] + [s.act for s in statements],
    )


def speech_options(
    root: DayRoot, models: Sequence[OpponentModel | None], statements: Sequence[Statement]
) -> tuple[SpeechAct | None, ...]:
    """The next speaker's concrete speech act per action id (None: not legal)."""
    if len(statements) >= len(root.speakers):
        return ()
    ab = root.settings.abstraction
    ranking = suspicion_ranking(root, models, statements, root.speakers[len(statements)])
    seen: set[SpeechAct] = set()
    out: list[SpeechAct | None] = []
    for a in range(ab.num_actions):
        tone, token = ab.decode(a)
        act = concrete_act(token, tone, ranking)
        if act is not None and act in seen:
            act = None  # the same statement as an earlier id: one branch only
        if act is not None:
            seen.add(act)
        out.append(act)
    return tuple(out)
