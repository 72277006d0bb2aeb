"""Typed results of the arena: win rates, per-model scores, a pair's summary, the report.

Each value is frozen and converts to and from the JSON of ``arena.json`` with
``to_json`` / ``from_json`` (the keys of the file are unchanged: ``TWR``,
``WWR``, ``LWR``, ``ci95``, ...). Reports and figures read the attributes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from games.werewolf.deception.summary import DeceptionSummary

__all__ = [
    "Accuracy",
    "ArenaReport",
    "DeceptionRate",
    "MeanScore",
    "ModelSummary",
    "PairSummary",
    "ProbabilityScore",
    "SideScores",
    "WinRate",
]


@dataclasses.dataclass(frozen=True)
class WinRate:
    """``wins`` of ``games`` with its 95 % Wilson interval; no rate without a game."""

    wins: int
    games: int
    rate: float | None
    ci95: tuple[float | None, float | None]

    def to_json(self) -> dict[str, Any]:
        return {"wins": self.wins, "games": self.games, "rate": self.rate, "ci95": list(self.ci95)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> WinRate:
        lo, hi = d["ci95"]
        return cls(wins=int(d["wins"]), games=int(d["games"]), rate=d["rate"], ci95=(lo, hi))


@dataclasses.dataclass(frozen=True)
class MeanScore:
    """The mean action score of ``n`` seats."""

    mean: float
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"mean": self.mean, "n": self.n}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> MeanScore:
        return cls(mean=float(d["mean"]), n=int(d["n"]))


@dataclasses.dataclass(frozen=True)
class Accuracy:
    """The share of ``n`` identity judgments that named the true role."""

    accuracy: float
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"accuracy": self.accuracy, "n": self.n}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Accuracy:
        return cls(accuracy=float(d["accuracy"]), n=int(d["n"]))


@dataclasses.dataclass(frozen=True)
class DeceptionRate:
    """Statements made on one side and how many contradict the speaker's knowledge."""

    statements: int
    deceptive: int
    rate: float | None

    def to_json(self) -> dict[str, Any]:
        return {"statements": self.statements, "deceptive": self.deceptive, "rate": self.rate}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DeceptionRate:
        return cls(statements=int(d["statements"]), deceptive=int(d["deceptive"]), rate=d["rate"])


@dataclasses.dataclass(frozen=True)
class ProbabilityScore:
    """Proper scores of role readings against the true roles, and the abstaining label.

    Every game weighs the same: ``brier`` and ``log_loss`` are means over the
    games of each game's mean, with a normal 95 % interval over the games
    (None with fewer than two). :mod:`games.werewolf.arena.scoring` computes it.

    Attributes:
      n: Judgments scored (a living player at a consultation).
      games: Games they came from.
      brier: Multi-class Brier score, sum over roles of (p - [role is true])^2, in [0, 2].
      brier_ci95: Its interval.
      log_loss: -ln p(true role), p floored at ``scoring.PROB_FLOOR``.
      log_loss_ci95: Its interval.
      zero_truth: Judgments that gave the true role probability 0.
      labelled: Judgments whose label named a role (not ``unsure``).
      label_accuracy: Share of those that named the true role (None without one).
    """

    n: int
    games: int
    brier: float
    brier_ci95: tuple[float | None, float | None]
    log_loss: float
    log_loss_ci95: tuple[float | None, float | None]
    zero_truth: int
    labelled: int
    label_accuracy: float | None

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["brier_ci95"], d["log_loss_ci95"] = list(self.brier_ci95), list(self.log_loss_ci95)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ProbabilityScore:
        b_lo, b_hi = d["brier_ci95"]
        l_lo, l_hi = d["log_loss_ci95"]
        return cls(
            n=int(d["n"]),
            games=int(d["games"]),
            brier=float(d["brier"]),
            brier_ci95=(b_lo, b_hi),
            log_loss=float(d["log_loss"]),
            log_loss_ci95=(l_lo, l_hi),
            zero_truth=int(d["zero_truth"]),
            labelled=int(d["labelled"]),
            label_accuracy=d["label_accuracy"],
        )


@dataclasses.dataclass(frozen=True)
class SideScores:
    """One observer side's scores: overall, per true role, and a calibration table.

    Attributes:
      overall: Every judgment of the side.
      by_role: Per true role of the judged player.
      calibration: ``(bin low, bin high, mean predicted p, observed frequency, n)`` over
        every role probability of every judgment, in ten equal bins of p.
    """

    overall: ProbabilityScore
    by_role: Mapping[str, ProbabilityScore]
    calibration: tuple[tuple[float, float, float, float, int], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "overall": self.overall.to_json(),
            "by_role": {r: s.to_json() for r, s in self.by_role.items()},
            "calibration": [list(b) for b in self.calibration],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SideScores:
        return cls(
            overall=ProbabilityScore.from_json(d["overall"]),
            by_role={r: ProbabilityScore.from_json(s) for r, s in d["by_role"].items()},
            calibration=tuple(
                (float(a), float(b), float(m), float(f), int(n))
                for a, b, m, f, n in d["calibration"]
            ),
        )


#: Identification accuracy by observer's team, round and true role of the player judged.
Identification = Mapping[str, Mapping[int, Mapping[str, Accuracy]]]


@dataclasses.dataclass(frozen=True)
class ModelSummary:
    """One model's results in a pair.

    Attributes:
      twr: Total win rate (JSON ``TWR``).
      wwr: Win rate on the werewolf side (``WWR``).
      lwr: Win rate on the leader side (``LWR``).
      action_scores: Mean action score per role.
      identification: Role-identification accuracy by observer's team, round and
        true role; None for a model that infers no identities.
      deception: Per side (``werewolf`` / ``leader``), its statements' deception.
      eq8_floor: For GRATR, how often Eq. 8's weight floor bound and Eq. 9 was
        skipped for a zero divisor, summed over the model's seats (JSON
        ``eq8_floor``: ``bound``, ``combinations``, ``decisive``, ``skipped``);
        None for the other models.
      scores: Per observer side (``village`` / ``werewolf``), the Brier score and
        log-loss of the model's role readings against the true roles, with 95 %
        intervals over games, per true role and with a calibration table, and
        the accuracy of its abstaining label (JSON ``identification_scores``;
        None in a file written before them).
    """

    twr: WinRate
    wwr: WinRate
    lwr: WinRate
    action_scores: Mapping[str, MeanScore]
    identification: Identification | None
    deception: Mapping[str, DeceptionRate]
    eq8_floor: Mapping[str, int] | None = None
    scores: Mapping[str, SideScores] | None = None

    @property
    def rates(self) -> dict[str, WinRate]:
        """``{"TWR": ..., "WWR": ..., "LWR": ...}``, in that order."""
        return {"TWR": self.twr, "WWR": self.wwr, "LWR": self.lwr}

    def to_json(self) -> dict[str, Any]:
        ident = self.identification
        return {
            **{k: r.to_json() for k, r in self.rates.items()},
            "action_scores": {r: s.to_json() for r, s in self.action_scores.items()},
            "identification": (
                {
                    team: {
                        str(rnd): {r: a.to_json() for r, a in per.items()}
                        for rnd, per in rounds.items()
                    }
                    for team, rounds in ident.items()
                }
                if ident is not None
                else None
            ),
            "deception": {side: d.to_json() for side, d in self.deception.items()},
            "eq8_floor": dict(self.eq8_floor) if self.eq8_floor is not None else None,
            "identification_scores": (
                {side: sc.to_json() for side, sc in self.scores.items()}
                if self.scores is not None
                else None
            ),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ModelSummary:
        ident = d["identification"]
        return cls(
            twr=WinRate.from_json(d["TWR"]),
            wwr=WinRate.from_json(d["WWR"]),
            lwr=WinRate.from_json(d["LWR"]),
            action_scores={r: MeanScore.from_json(s) for r, s in d["action_scores"].items()},
            identification=(
                {
                    team: {
                        int(rnd): {r: Accuracy.from_json(a) for r, a in per.items()}
                        for rnd, per in rounds.items()
                    }
                    for team, rounds in ident.items()
                }
                if ident is not None
                else None
            ),
            deception={side: DeceptionRate.from_json(x) for side, x in d["deception"].items()},
            eq8_floor=(
                {k: int(v) for k, v in d["eq8_floor"].items()}
                if d.get("eq8_floor") is not None
                else None
            ),
            scores=(
                {side: SideScores.from_json(x) for side, x in d["identification_scores"].items()}
                if d.get("identification_scores") is not None
                else None
            ),
        )


@dataclasses.dataclass(frozen=True)
class PairSummary:
    """The games of one pair of models.

    Attributes:
      pair: ``(A, B)``; game i gives A the werewolf side when i is even.
      games: Games played.
      draws: Games won by nobody.
      models: Each model's results.
      deception_analyses: The pooled deception summary of the pair's games (the
        LLM seats' self and peer analyses), when the arena recorded it.
      quality: The answer quality of the pair's games (
        :func:`games.werewolf.play.quality.series_quality`: copied answers, the
        largest share of one night target, vote and peer label, contradictions);
        None in a file written before it.
    """

    pair: tuple[str, str]
    games: int
    draws: int
    models: Mapping[str, ModelSummary]
    deception_analyses: DeceptionSummary | None = None
    quality: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pair": list(self.pair),
            "games": self.games,
            "models": {m: s.to_json() for m, s in self.models.items()},
            "draws": self.draws,
        }
        if self.deception_analyses is not None:
            out["deception_analyses"] = self.deception_analyses.to_dict()
        if self.quality is not None:
            out["quality"] = dict(self.quality)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PairSummary:
        a, b = d["pair"]
        dec = d.get("deception_analyses")
        return cls(
            pair=(a, b),
            games=int(d["games"]),
            draws=int(d["draws"]),
            models={m: ModelSummary.from_json(s) for m, s in d["models"].items()},
            deception_analyses=DeceptionSummary.from_dict(dec) if dec is not None else None,
            quality=d.get("quality"),
        )


@dataclasses.dataclass(frozen=True)
class ArenaReport:
    """The arena's report (``arena.json``).

    Attributes:
      backend: The chat model's spec.
      stand_in: True when the answers came from the scripted stand-in.
      note: The model's display label (the stand-in's says it is not an LLM).
      preset: The rules preset.
      config: The rules config (``Config.as_dict``).
      models: The opponent models compared.
      games_per_pair: Games per pair.
      seeds: First and last seed of every pair.
      settings: The belief providers' settings.
      pairs: One summary per pair.
      llm_calls: ``{"new": ..., "cached": ...}`` (None when the model keeps no counts).
      seconds: Wall time of the run.
      quality: The answer quality of every game of every pair, pooled (as
        :attr:`PairSummary.quality`); None in a file written before it.
    """

    backend: str
    stand_in: bool
    note: str
    preset: str
    config: Mapping[str, Any]
    models: tuple[str, ...]
    games_per_pair: int
    seeds: tuple[int, int]
    settings: Mapping[str, Any]
    pairs: tuple[PairSummary, ...]
    llm_calls: Mapping[str, int | None]
    seconds: float
    quality: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "backend": self.backend,
            "stand_in": self.stand_in,
            "note": self.note,
            "preset": self.preset,
            "config": dict(self.config),
            "models": list(self.models),
            "games_per_pair": self.games_per_pair,
            "seeds": list(self.seeds),
            "settings": dict(self.settings),
            "pairs": [p.to_json() for p in self.pairs],
            "llm_calls": dict(self.llm_calls),
            "seconds": self.seconds,
        }
        if self.quality is not None:
            out["quality"] = dict(self.quality)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ArenaReport:
        """The report of ``arena.json``'s content.

        Raises:
          KeyError: a key is missing (a file of another program or version).
        """
        first, last = d["seeds"]
        return cls(
            backend=d["backend"],
            stand_in=bool(d["stand_in"]),
            note=d["note"],
            preset=d["preset"],
            config=d["config"],
            models=tuple(d["models"]),
            games_per_pair=int(d["games_per_pair"]),
            seeds=(int(first), int(last)),
            settings=d["settings"],
            pairs=tuple(PairSummary.from_json(p) for p in d["pairs"]),
            llm_calls=d["llm_calls"],
            seconds=float(d["seconds"]),
            quality=d.get("quality"),
        )
