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
    "CertainProbabilities",
    "DeceptionRate",
    "MeanScore",
    "ModelSummary",
    "PairSummary",
    "ProbabilityScore",
    "ScoreGap",
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


def _ci(d: Mapping[str, Any], key: str) -> tuple[float | None, float | None]:
    lo, hi = d[key]
    return lo, hi


def _opt_int(x: Any) -> int | None:
    return None if x is None else int(x)


@dataclasses.dataclass(frozen=True)
class ScoreGap:
    """A model's score minus the reference model's, with a Student-t 95 % interval.

    :func:`games.werewolf.arena.scoring.score_gap` computes it (its module
    docstring defines the pairing).

    Attributes:
      reference: The reference model (``bayes``).
      gap: Model minus reference; negative: the model scores better (lower).
      ci95: Its 95 % Student-t interval (None with too few games).
      method: ``"paired"`` (the mean of per-seed differences over the seeds where
        both have judgments) or ``"welch"`` (the difference of the two means over
        all their games, Welch's interval).
      n: Paired: the seeds in common; Welch: the model's games.
      n_reference: Paired: the same seeds; Welch: the reference's games.
      df: The t quantile's degrees of freedom (None without an interval).
    """

    reference: str
    gap: float
    ci95: tuple[float | None, float | None]
    method: str
    n: int
    n_reference: int
    df: float | None

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["ci95"] = list(self.ci95)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ScoreGap:
        return cls(
            reference=str(d["reference"]),
            gap=float(d["gap"]),
            ci95=_ci(d, "ci95"),
            method=str(d["method"]),
            n=int(d["n"]),
            n_reference=int(d["n_reference"]),
            df=None if d.get("df") is None else float(d["df"]),
        )


@dataclasses.dataclass(frozen=True)
class ProbabilityScore:
    """Proper scores of role readings against the true roles, and the abstaining label.

    Every game weighs the same: ``brier`` and ``log_loss`` are means over the
    games of each game's mean, with a Student-t 95 % interval over the
    ``ci95_n`` games (None with fewer than two).
    :mod:`games.werewolf.arena.scoring` computes it. A file written before
    these intervals were Student-t reads with ``ci95_kind`` ``"normal"``
    (mean +- 1.96 sd / sqrt(games)) and None for the label split.

    Attributes:
      n: Judgments scored (a living player at a consultation).
      games: Games they came from.
      brier: Multi-class Brier score, sum over roles of (p - [role is true])^2, in [0, 2].
      brier_ci95: Its interval.
      log_loss: -ln p(true role), p floored at ``scoring.PROB_FLOOR``.
      log_loss_ci95: Its interval.
      zero_truth: Judgments that gave the true role probability exactly 0 (or
        left it out), whose log-loss the floor hides.
      labelled: Judgments whose label named a role (not ``unsure``).
      label_accuracy: Share of those that named the true role (None without one).
      ci95_n: The games both intervals run over (t with ``ci95_n - 1`` degrees
        of freedom).
      ci95_kind: ``"student_t"``; ``"normal"`` in a file written before.
      labelled_facts: Labels whose role the reading gave probability exactly 1
        (a certain fact of the seat).
      label_accuracy_facts: Share of those that were right (None without one).
      labelled_inferences: Every other label.
      label_accuracy_inferences: Share of those that were right (None without one).
      brier_gap: The Brier score minus the reference model's (None: no
        reference in the run, or no judgment of the reference here).
      log_loss_gap: The log-loss minus the reference model's.
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
    ci95_n: int
    ci95_kind: str
    labelled_facts: int | None
    label_accuracy_facts: float | None
    labelled_inferences: int | None
    label_accuracy_inferences: float | None
    brier_gap: ScoreGap | None = None
    log_loss_gap: ScoreGap | None = None

    def to_json(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["brier_ci95"], d["log_loss_ci95"] = list(self.brier_ci95), list(self.log_loss_ci95)
        for key in ("brier_gap", "log_loss_gap"):
            gap = d.pop(key)
            if gap is not None:  # written only when the run had the reference model
                d[key] = gap.to_json()
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ProbabilityScore:
        gaps = {
            k: ScoreGap.from_json(d[k]) if d.get(k) is not None else None
            for k in ("brier_gap", "log_loss_gap")
        }
        return cls(
            n=int(d["n"]),
            games=int(d["games"]),
            brier=float(d["brier"]),
            brier_ci95=_ci(d, "brier_ci95"),
            log_loss=float(d["log_loss"]),
            log_loss_ci95=_ci(d, "log_loss_ci95"),
            zero_truth=int(d["zero_truth"]),
            labelled=int(d["labelled"]),
            label_accuracy=d["label_accuracy"],
            # Older files: normal intervals over the games, no label split.
            ci95_n=int(d.get("ci95_n", d["games"])),
            ci95_kind=str(d.get("ci95_kind", "normal")),
            labelled_facts=_opt_int(d.get("labelled_facts")),
            label_accuracy_facts=d.get("label_accuracy_facts"),
            labelled_inferences=_opt_int(d.get("labelled_inferences")),
            label_accuracy_inferences=d.get("label_accuracy_inferences"),
            brier_gap=gaps["brier_gap"],
            log_loss_gap=gaps["log_loss_gap"],
        )


@dataclasses.dataclass(frozen=True)
class CertainProbabilities:
    """The role probabilities of exactly 1 and exactly 0 (a seat's certain facts).

    Attributes:
      ones: Probabilities exactly 1.
      ones_right: Of those, the ones on the true role.
      zeros: Probabilities exactly 0.
      zeros_right: Of those, the ones on a role that was not true.
    """

    ones: int
    ones_right: int
    zeros: int
    zeros_right: int

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CertainProbabilities:
        return cls(**{f.name: int(d[f.name]) for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class SideScores:
    """One observer side's scores: overall, per true role, and a calibration table.

    Attributes:
      overall: Every judgment of the side.
      by_role: Per true role of the judged player.
      calibration: ``(bin low, bin high, mean predicted p, observed frequency, n)`` over
        the uncertain role probabilities (0 < p < 1) of every judgment, in ten
        equal bins of p (in a file written before ``calibration_certain``:
        over every role probability, 0 and 1 included).
      calibration_certain: The probabilities exactly 0 or 1, left out of the
        table, and how many were right (None in a file written before).
    """

    overall: ProbabilityScore
    by_role: Mapping[str, ProbabilityScore]
    calibration: tuple[tuple[float, float, float, float, int], ...]
    calibration_certain: CertainProbabilities | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "overall": self.overall.to_json(),
            "by_role": {r: s.to_json() for r, s in self.by_role.items()},
            "calibration": [list(b) for b in self.calibration],
        }
        if self.calibration_certain is not None:
            out["calibration_certain"] = self.calibration_certain.to_json()
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SideScores:
        certain = d.get("calibration_certain")
        return cls(
            overall=ProbabilityScore.from_json(d["overall"]),
            by_role={r: ProbabilityScore.from_json(s) for r, s in d["by_role"].items()},
            calibration=tuple(
                (float(a), float(b), float(m), float(f), int(n))
                for a, b, m, f, n in d["calibration"]
            ),
            calibration_certain=(
                CertainProbabilities.from_json(certain) if certain is not None else None
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
        log-loss of the model's role readings against the true roles, with
        Student-t 95 % intervals over games, per true role, with a calibration
        table of the uncertain probabilities and the certain ones apart, the
        accuracy of its abstaining label (facts and inferences apart), and,
        when the run had the ``bayes`` reference model, the gap to it (JSON
        ``identification_scores``; None in a file written before them).
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
        largest share of one night target, vote and peer label, contradictions,
        the first / second places of the chosen players in the offered lists);
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
