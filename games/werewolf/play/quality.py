"""Werewolf answer quality: what a game's records say about its players' answers.

:class:`QualityTally` reads a game's records as they are written (the
runner's ``emit``) and keeps raw, poolable counts; the shares come from
:mod:`games.engine.quality`, shared by every game:

* ``night_targets`` / ``votes`` -- how often each seat was the target of a
  night action (kill, protect, check) or a day vote;
* ``listed_night_targets`` / ``listed_votes`` -- where the chosen player stood
  in the list the prompt offered (``"7:1"``: the first of seven), from the
  table's ``offered`` records: prompts list the choices in an order of their
  own (:mod:`games.werewolf.players.order`), so a model that takes the first
  or second player listed shows as a first / second share above what a
  uniform choice gives (:func:`listed_report`);
* ``peer_labels`` / ``peer_answers`` -- each peer analysis's label, and its
  whole answer (label, confidence, suspicion): all alike means no information;
* ``contradictions`` -- actions against the actor's own certain knowledge.
  In speeches: a seer defending a player it checked as a werewolf
  (``seer_defends_werewolf``) or accusing one it cleared
  (``seer_accuses_cleared``). In votes, a vote to exile a player the voter
  knows to be on its own team (:func:`known_teammates`): itself
  (``self_vote``), a partner of a werewolf (``wolf_votes_partner``), a player
  the seer cleared (``seer_votes_cleared``) or one the witch saw the
  werewolves attack, who cannot be one of them (``witch_votes_attacked``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from games.engine import quality as engine_quality
from games.engine.quality import answer_quality, pool_counts

__all__ = [
    "CONTRADICTIONS",
    "LISTED",
    "QualityTally",
    "known_teammates",
    "listed_lines",
    "listed_report",
    "quality_lines",
    "series_quality",
]

#: The contradiction counts, in report order.
CONTRADICTIONS = (
    "seer_defends_werewolf",
    "seer_accuses_cleared",
    "wolf_votes_partner",
    "self_vote",
    "seer_votes_cleared",
    "witch_votes_attacked",
)
#: The tallies reported by their largest share.
TALLIES = ("night_targets", "votes", "peer_labels", "peer_answers")
#: The tallies of listed positions (``"length:position"``), by the choices they count.
LISTED = {"night_targets": "listed_night_targets", "votes": "listed_votes"}
#: How a voter knows a teammate -> the contradiction of voting for that teammate.
_VOTE_CONTRADICTION = {
    "self": "self_vote",
    "partner": "wolf_votes_partner",
    "check": "seer_votes_cleared",
    "attacked": "witch_votes_attacked",
}
#: Events that tell a player for certain who is on its team (see known_teammates).
_TEAM_EVENTS = ("partners", "check", "witch_victim")


def known_teammates(events: Iterable[Mapping[str, Any]], player: int) -> dict[int, str]:
    """Who ``player`` knows for certain is on its own team, and how, from the events it saw.

    ``events`` are rules events in their JSON form (:meth:`rules.Event.to_json`); those
    not visible to ``player`` are skipped, so passing a game's every event gives what
    ``rules.knowledge(state, player)`` holds. Certain facts about a teammate:

    * ``"self"`` -- the player itself;
    * ``"partner"`` -- a werewolf's partners;
    * ``"check"`` -- a player the seer checked and found no werewolf (the seer is
      a villager);
    * ``"attacked"`` -- a player the witch was told the werewolves attacked: the
      rules never let werewolves attack one of their own (the witch is a villager).

    Returns:
      ``{teammate: how}``; the first way a teammate became known wins.
    """
    me = int(player)
    out: dict[int, str] = {me: "self"}
    for e in events:
        visible = e.get("visible_to")
        if visible is not None and me not in [int(p) for p in visible]:
            continue
        kind = e.get("kind")
        if kind == "partners":
            wolves = [int(p) for p in e["werewolves"]]
            if me in wolves:
                for w in wolves:
                    out.setdefault(w, "partner")
        elif kind == "check" and int(e["player"]) == me and e["result"] != "werewolf":
            out.setdefault(int(e["target"]), "check")
        elif kind == "witch_victim" and e.get("target") is not None:
            out.setdefault(int(e["target"]), "attacked")
    return out


class QualityTally:
    """Raw answer-quality counts of one game, fed its records in order."""

    def __init__(self) -> None:
        self.tallies: dict[str, Counter[str]] = {name: Counter() for name in TALLIES}
        self.listed: dict[str, Counter[str]] = {name: Counter() for name in LISTED.values()}
        self.contradictions: Counter[str] = Counter({k: 0 for k in CONTRADICTIONS})
        self._checks: dict[int, dict[int, bool]] = {}  # seer -> {target: is a werewolf}
        self._team_events: list[Mapping[str, Any]] = []  # what known_teammates reads

    def observe(self, record: Mapping[str, Any]) -> None:
        """Counts what one record shows (records of other types are ignored)."""
        kind = record.get("type")
        if kind == "action" and str(record.get("phase", "")).startswith("night"):
            action = record.get("action") or {}
            if action.get("type") == "Target":
                self.tallies["night_targets"][str(action["player"])] += 1
        elif kind == "offered":
            self._offered(record)
        elif kind == "peer_analysis":
            label = "deceptive" if record.get("deceptive") else "truthful"
            self.tallies["peer_labels"][label] += 1
            answer = f"{label}/{record.get('confidence')}/{record.get('suspicion')}"
            self.tallies["peer_answers"][answer] += 1
        elif kind == "event":
            self._event(record)

    def _offered(self, record: Mapping[str, Any]) -> None:
        """Where the chosen player stood in the list offered (an ``offered`` record)."""
        players = [int(p) for p in record.get("players") or ()]
        choice = record.get("choice")
        if choice is None or int(choice) not in players:
            return
        phase = str(record.get("phase", ""))
        if phase == "day_vote":
            group = "votes"
        elif phase.startswith("night"):
            group = "night_targets"
        else:
            return
        position = players.index(int(choice)) + 1
        self.listed[LISTED[group]][f"{len(players)}:{position}"] += 1

    def _event(self, e: Mapping[str, Any]) -> None:
        kind = e.get("kind")
        if kind in _TEAM_EVENTS:
            self._team_events.append(e)
        if kind == "check":
            seer, target = int(e["player"]), int(e["target"])
            self._checks.setdefault(seer, {})[target] = e["result"] == "werewolf"
        elif kind == "votes":
            self._votes(e["votes"])
        elif kind == "speech":
            act = e.get("act") or {}
            known = self._checks.get(int(e["player"]), {})
            named = act.get("target")
            if named is None or int(named) not in known:
                return
            is_wolf = known[int(named)]
            if act.get("kind") == "defend" and is_wolf:
                self.contradictions["seer_defends_werewolf"] += 1
            elif act.get("kind") == "accuse" and not is_wolf:
                self.contradictions["seer_accuses_cleared"] += 1

    def _votes(self, votes: Mapping[str, Any]) -> None:
        """A day's votes: the tally of targets, and votes for a known teammate."""
        for voter, voted in votes.items():
            if voted is None:
                continue
            v, t = int(voter), int(voted)
            self.tallies["votes"][str(t)] += 1
            how = known_teammates(self._team_events, v).get(t)
            if how is not None:
                self.contradictions[_VOTE_CONTRADICTION[how]] += 1

    def counts(self) -> dict[str, Any]:
        """The raw counts (JSON; :func:`games.engine.quality.pool_counts` adds games up)."""
        out: dict[str, Any] = {name: dict(t) for name, t in self.tallies.items()}
        out.update({name: dict(t) for name, t in self.listed.items()})
        out["contradictions"] = dict(self.contradictions)
        return out


def listed_report(positions: Mapping[str, int]) -> dict[str, Any] | None:
    """First and second places among choices, beside what a uniform choice gives.

    Args:
      positions: ``{"length:position": count}`` (a :class:`QualityTally` tally).

    Returns:
      ``{"choices", "first", "second", "first_share", "second_share",
      "uniform_first", "uniform_second"}``: the uniform shares are the mean of
      1/length over the choices (for second place, over lists of two or more;
      a list of one has no second place); None without choices.
    """
    choices = first = second = 0
    uniform_first = uniform_second = 0.0
    for key, count in positions.items():
        length, position = (int(x) for x in str(key).split(":"))
        n = int(count)
        choices += n
        first += n if position == 1 else 0
        second += n if position == 2 else 0
        uniform_first += n / length
        uniform_second += n / length if length >= 2 else 0.0
    if choices == 0:
        return None
    return {
        "choices": choices,
        "first": first,
        "second": second,
        "first_share": first / choices,
        "second_share": second / choices,
        "uniform_first": uniform_first / choices,
        "uniform_second": uniform_second / choices,
    }


def series_quality(parse: Mapping[str, Any], games: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The answer-quality report of games' pooled parse counts and :meth:`QualityTally.counts`.

    Besides the engine's report it holds ``contradictions`` and ``listed``: per
    group (``night_targets``, ``votes``, and ``all`` of them) the
    :func:`listed_report` of the choices (None without any, e.g. games logged
    before the prompts listed their choices in an order of their own).
    """
    pooled = pool_counts(games)
    tallies = {name: pooled.get(name, {}) for name in TALLIES}
    contradictions = {k: int(pooled.get("contradictions", {}).get(k, 0)) for k in CONTRADICTIONS}
    groups = {group: pooled.get(name, {}) for group, name in LISTED.items()}
    groups["all"] = pool_counts([{"all": g} for g in groups.values()]).get("all", {})
    listed = {group: listed_report(g) for group, g in groups.items()}
    return answer_quality(parse, tallies, {"contradictions": contradictions, "listed": listed})


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def listed_lines(quality: Mapping[str, Any], indent: str = "  ") -> list[str]:
    """The ``listed`` part of a report as a printed line (none without choices)."""
    listed = quality.get("listed")
    if not isinstance(listed, Mapping):
        return []
    parts = [
        f"{group.replace('_', ' ')} {r['first']} / {r['second']} of {r['choices']} "
        f"({_pct(r['first_share'])} / {_pct(r['second_share'])}; uniform "
        f"{_pct(r['uniform_first'])} / {_pct(r['uniform_second'])})"
        for group, r in listed.items()
        if isinstance(r, Mapping)
    ]
    if not parts:
        return []
    return [f"{indent}choices listed first / second: " + "; ".join(parts)]


def quality_lines(quality: Mapping[str, Any], indent: str = "  ") -> list[str]:
    """A Werewolf report as printed lines: the engine's, then :func:`listed_lines`."""
    rest = {k: v for k, v in quality.items() if k != "listed"}
    return engine_quality.quality_lines(rest, indent=indent) + listed_lines(quality, indent)
