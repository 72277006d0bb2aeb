"""The features of a day speech decision that a solved day tree and a full game share.

A CFR agent (:mod:`games.werewolf.players.cfr_policy`) plays a solved day
policy in full games, where no solved tree's information state ever recurs
(another game, other words). It looks the policy up by what the speaker can
see, as the day abstraction models it (:func:`decision_features`): its role
group and, in order, today's statements before its turn, each as its act
kind, its tone, who said it and whom it names, both seen from the speaker
(``me``, ``partner`` — a werewolf partner, which only a werewolf knows —,
``other``; ``-`` for no one). The words are not in it, nor the deal: every
feature is something the speaker knows. ``werewolf solve`` writes each
decision's features into ``decisions.json``
(:mod:`games.werewolf.day.exports`); the agent computes the same string from
its seat's knowledge.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from games.werewolf.rules import SpeechAct

__all__ = ["decision_features", "role_group"]


def role_group(role: str | None) -> str:
    """The policy group of a role: ``werewolf`` for a werewolf, else ``village``."""
    return "werewolf" if role == "werewolf" else "village"


def _who(seat: int | None, me: int, partners: Collection[int]) -> str:
    if seat is None:
        return "-"
    if seat == me:
        return "me"
    return "partner" if seat in partners else "other"


def decision_features(
    role: str | None,
    me: int,
    partners: Collection[int],
    today: Sequence[tuple[int, SpeechAct]],
) -> str:
    """The feature key of a speech decision (module doc).

    Args:
      role: The speaker's role.
      me: The speaker's seat.
      partners: Its werewolf partners (empty unless it is a werewolf).
      today: ``(speaker, act)`` of today's statements before this one, in order.

    Returns:
      ``"<group>|<kind>/<tone>/<speaker>/<target>;..."`` (nothing after ``|``
      for the day's first statement).
    """
    known = set(partners) if role == "werewolf" else set()
    said = ";".join(
        f"{act.kind}/{act.tone}/{_who(speaker, me, known)}/{_who(act.target, me, known)}"
        for speaker, act in today
    )
    return f"{role_group(role)}|{said}"
