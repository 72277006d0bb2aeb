"""Deception summaries of Werewolf games: per-player counts, the detection of deceptive
statements against the truth, and the pooling of several games.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "DeceptionSummary",
    "Detection",
    "PlayerDeception",
    "pooled_summary",
]


@dataclasses.dataclass(frozen=True)
class PlayerDeception:
    """Per-player statistics of a deception summary.

    Attributes:
      player: The player.
      statements: Statements the player made.
      self_reported: Of those, how many the player itself reported deceptive.
      peer_analyses: Peer analyses of the player's statements.
      peer_flags: Of those, how many labelled the statement deceptive.
      peer_detected: The player's statements labelled deceptive by a strict
        majority of the peers that analysed them.
      average_suspicion: Mean suspicion score over the peer analyses of the
        player's statements (``None`` without any).
    """

    player: int
    statements: int
    self_reported: int
    peer_analyses: int
    peer_flags: int
    peer_detected: int
    average_suspicion: float | None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PlayerDeception:
        """The inverse of :meth:`to_dict`."""
        return cls(**{f.name: d[f.name] for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class Detection:
    """A confusion matrix of deceptive labels against the truth, with precision and recall.

    Precision is ``tp / (tp + fp)`` and recall ``tp / (tp + fn)``; each is
    ``None`` when its denominator is 0. Labels of statements whose truth is
    unknown are not counted.
    """

    true_positives: int = 0
    false_positives: int = 0
    false_negatives: int = 0
    true_negatives: int = 0

    @property
    def precision(self) -> float | None:
        d = self.true_positives + self.false_positives
        return self.true_positives / d if d else None

    @property
    def recall(self) -> float | None:
        d = self.true_positives + self.false_negatives
        return self.true_positives / d if d else None

    def add(self, label: bool, truth: bool) -> Detection:
        key = {
            (True, True): "true_positives",
            (True, False): "false_positives",
            (False, True): "false_negatives",
            (False, False): "true_negatives",
        }[(bool(label), bool(truth))]
        return dataclasses.replace(self, **{key: getattr(self, key) + 1})

    def __add__(self, other: Detection) -> Detection:
        return Detection(*(a + b for a, b in zip(_counts(self), _counts(other), strict=True)))

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["precision"] = self.precision
        d["recall"] = self.recall
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Detection:
        """The inverse of :meth:`to_dict` (precision and recall are recomputed)."""
        return cls(**{f.name: int(d[f.name]) for f in dataclasses.fields(cls)})


def _counts(d: Detection) -> tuple[int, int, int, int]:
    return (d.true_positives, d.false_positives, d.false_negatives, d.true_negatives)


@dataclasses.dataclass(frozen=True)
class DeceptionSummary:
    """The end-of-game deception summary.

    Attributes:
      total_statements: Statements with at least one analysis (self or peer).
      players: Per-player statistics, in player order.
      score_matrix: ``score_matrix[observer][speaker]``: the observer's final
        deception score of the speaker (``None`` when it never analysed one of
        the speaker's statements). ``None`` for a pooled summary of several games.
      peer_detection: The peers' deceptive labels against the truth.
      self_detection: The speakers' self-reports against the truth.
    """

    total_statements: int
    players: tuple[PlayerDeception, ...]
    score_matrix: tuple[tuple[float | None, ...], ...] | None
    peer_detection: Detection
    self_detection: Detection

    def to_dict(self) -> dict[str, Any]:
        return {
            "total_statements": self.total_statements,
            "players": [p.to_dict() for p in self.players],
            "score_matrix": (
                [list(row) for row in self.score_matrix] if self.score_matrix is not None else None
            ),
            "peer_detection": self.peer_detection.to_dict(),
            "self_detection": self.self_detection.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DeceptionSummary:
        """The inverse of :meth:`to_dict`."""
        matrix = d["score_matrix"]
        return cls(
            total_statements=int(d["total_statements"]),
            players=tuple(PlayerDeception.from_dict(p) for p in d["players"]),
            score_matrix=tuple(tuple(row) for row in matrix) if matrix is not None else None,
            peer_detection=Detection.from_dict(d["peer_detection"]),
            self_detection=Detection.from_dict(d["self_detection"]),
        )


def pooled_summary(summaries: Sequence[DeceptionSummary]) -> DeceptionSummary:
    """Sums the counts of several games' summaries (same number of players).

    Per-player rows are by seat; the average suspicion is the mean over all
    the seat's peer analyses in all games. The score matrix is dropped
    (``None``): seats change roles from game to game.
    """
    if not summaries:
        raise ValueError("pooled_summary: no summaries given")
    n = len(summaries[0].players)
    if any(len(s.players) != n for s in summaries):
        raise ValueError("pooled_summary: the summaries have different numbers of players")
    players = []
    for p in range(n):
        rows = [s.players[p] for s in summaries]
        analyses = sum(r.peer_analyses for r in rows)
        total = sum(
            r.average_suspicion * r.peer_analyses
            for r in rows
            if r.peer_analyses and r.average_suspicion is not None  # None: no analyses
        )
        players.append(
            PlayerDeception(
                player=p,
                statements=sum(r.statements for r in rows),
                self_reported=sum(r.self_reported for r in rows),
                peer_analyses=analyses,
                peer_flags=sum(r.peer_flags for r in rows),
                peer_detected=sum(r.peer_detected for r in rows),
                average_suspicion=total / analyses if analyses else None,
            )
        )
    peer = Detection()
    own = Detection()
    for s in summaries:
        peer = peer + s.peer_detection
        own = own + s.self_detection
    return DeceptionSummary(
        total_statements=sum(s.total_statements for s in summaries),
        players=tuple(players),
        score_matrix=None,
        peer_detection=peer,
        self_detection=own,
    )
