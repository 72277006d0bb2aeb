"""Werewolf answer quality: what a game's records say about its players' answers.

:class:`QualityTally` reads a game's records as they are written (the
runner's ``emit``) and keeps raw, poolable counts; the shares come from
:mod:`games.engine.quality`, shared by every game:

* ``night_targets`` / ``votes`` -- how often each seat was the target of a
  night action (kill, protect, check) or a day vote;
* ``peer_labels`` / ``peer_answers`` -- each peer analysis's label, and its
  whole answer (label, confidence, suspicion): all alike means no information;
* ``contradictions`` -- actions against the actor's own certain knowledge: a
  seer defending a player it checked as a werewolf (``seer_defends_werewolf``)
  or accusing one it cleared (``seer_accuses_cleared``), a werewolf voting for
  a partner (``wolf_votes_partner``), a vote for oneself (``self_vote``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from games.engine.quality import answer_quality, pool_counts

__all__ = ["CONTRADICTIONS", "QualityTally", "series_quality"]

#: The contradiction counts, in report order.
CONTRADICTIONS = (
    "seer_defends_werewolf",
    "seer_accuses_cleared",
    "wolf_votes_partner",
    "self_vote",
)
#: The tallies reported by their largest share.
TALLIES = ("night_targets", "votes", "peer_labels", "peer_answers")


class QualityTally:
    """Raw answer-quality counts of one game, fed its records in order."""

    def __init__(self) -> None:
        self.tallies: dict[str, Counter[str]] = {name: Counter() for name in TALLIES}
        self.contradictions: Counter[str] = Counter({k: 0 for k in CONTRADICTIONS})
        self._wolves: set[int] = set()
        self._checks: dict[int, dict[int, bool]] = {}  # seer -> {target: is a werewolf}

    def observe(self, record: Mapping[str, Any]) -> None:
        """Counts what one record shows (records of other types are ignored)."""
        kind = record.get("type")
        if kind == "action" and str(record.get("phase", "")).startswith("night"):
            action = record.get("action") or {}
            if action.get("type") == "Target":
                self.tallies["night_targets"][str(action["player"])] += 1
        elif kind == "peer_analysis":
            label = "deceptive" if record.get("deceptive") else "truthful"
            self.tallies["peer_labels"][label] += 1
            answer = f"{label}/{record.get('confidence')}/{record.get('suspicion')}"
            self.tallies["peer_answers"][answer] += 1
        elif kind == "event":
            self._event(record)

    def _event(self, e: Mapping[str, Any]) -> None:
        kind = e.get("kind")
        if kind == "partners":
            self._wolves.update(int(p) for p in e["werewolves"])
        elif kind == "check":
            seer, target = int(e["player"]), int(e["target"])
            self._checks.setdefault(seer, {})[target] = e["result"] == "werewolf"
        elif kind == "votes":
            for voter, voted in e["votes"].items():
                if voted is None:
                    continue
                v, t = int(voter), int(voted)
                self.tallies["votes"][str(t)] += 1
                if v == t:
                    self.contradictions["self_vote"] += 1
                elif v in self._wolves and t in self._wolves:
                    self.contradictions["wolf_votes_partner"] += 1
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

    def counts(self) -> dict[str, Any]:
        """The raw counts (JSON; :func:`games.engine.quality.pool_counts` adds games up)."""
        out: dict[str, Any] = {name: dict(t) for name, t in self.tallies.items()}
        out["contradictions"] = dict(self.contradictions)
        return out


def series_quality(parse: Mapping[str, Any], games: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The answer-quality report of games' pooled parse counts and :meth:`QualityTally.counts`."""
    pooled = pool_counts(games)
    tallies = {name: pooled.get(name, {}) for name in TALLIES}
    contradictions = {k: int(pooled.get("contradictions", {}).get(k, 0)) for k in CONTRADICTIONS}
    return answer_quality(parse, tallies, {"contradictions": contradictions})
