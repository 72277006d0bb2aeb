"""The typed results of a Werewolf day solve (``summary.json``), and their reader.

Frozen dataclasses with ``to_json`` / ``from_json``: what :mod:`games.werewolf.day.summary`
computes and the report, the figures and the notebooks read by attribute.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from games.engine.quality import answer_quality
from games.engine.results import ModelLabel
from games.werewolf.play.quality import listed_report

__all__ = [
    "DaySolveSummary",
    "GainQuestion",
    "MeanStd",
    "ModelResult",
    "Questions",
    "SideGains",
    "StrategyAnswer",
    "StrategyQuestion",
    "load_summary",
]


# --- the summary's values --------------------------------------------------------

#: A reach-weighted distribution: ``{"tones": {tone: p}, "acts": {token: p}}`` (None: never reached).
Distribution = Mapping[str, Mapping[str, float | None]]
#: Per role group (``werewolf`` / ``village``), per decisions (``all`` / ``decisive``).
Strategies = Mapping[str, Mapping[str, Distribution]]


def _pair(value: Any) -> tuple[float | None, float | None]:
    """An interval read back from JSON (a two-item list, or nothing)."""
    lo, hi = value if value else (None, None)
    return lo, hi


@dataclasses.dataclass(frozen=True)
class MeanStd:
    """Mean, standard deviation and Student-t 95 % interval of ``n`` values.

    None for all when ``n`` is 0; the interval is ``(None, None)`` for ``n`` < 2
    (:func:`runs.intervals.mean_ci95`).
    """

    n: int
    mean: float | None
    std: float | None
    ci95: tuple[float | None, float | None] = (None, None)

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "mean": self.mean, "std": self.std, "ci95": list(self.ci95)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> MeanStd:
        return cls(n=int(d["n"]), mean=d["mean"], std=d["std"], ci95=_pair(d.get("ci95")))

    def text(self) -> str:
        """``mean [lo, hi] (n=N)``: the mean beside its interval."""
        if self.mean is None:
            return "n/a (n=0)"
        lo, hi = self.ci95
        ci = f"[{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else "[no interval]"
        return f"{self.mean:.3f} {ci} (n={self.n})"


@dataclasses.dataclass(frozen=True)
class SideGains:
    """The summed per-player CFR-Gain of each side, over days."""

    werewolf: MeanStd
    village: MeanStd

    def to_json(self) -> dict[str, Any]:
        return {"werewolf": self.werewolf.to_json(), "village": self.village.to_json()}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SideGains:
        return cls(
            werewolf=MeanStd.from_json(d["werewolf"]), village=MeanStd.from_json(d["village"])
        )


@dataclasses.dataclass(frozen=True)
class ModelResult:
    """The solved days of one listeners' opponent model.

    Attributes:
      final: The metrics at the last iteration (:func:`solvers.studies.final_metrics`).
      ess_first_iteration: Per day, the first iteration at which CFR-Gain exceeds
        NashConv (None: never).
      ess_days: Days on which it did.
      side_gain_all_days: Each side's CFR-Gain over all days.
      side_gain_werewolf_days: The same over the days on which a werewolf speaks.
      strategies: The CFR strategies per role group (:func:`strategy_by_role`).
      trees: Per day, its root (``DayRoot.to_dict``) and tree sizes.
      parse: Parse counters (``ParseStats.to_dict``); the JSON adds their answer
        quality (:func:`games.engine.quality.answer_quality`).
      noise: Each day's CFR-Gain and NashConv beside their noise
        (:meth:`solvers.noise.StudyNoise.to_dict`; None when the checks were off).
      listed_votes: Over the trees' votes, ``{"length:position": count}`` of where
        the chosen player stood in the list the vote prompt offered.
    """

    final: Mapping[str, Any]
    ess_first_iteration: tuple[int | None, ...]
    ess_days: int
    side_gain_all_days: SideGains
    side_gain_werewolf_days: SideGains
    strategies: Strategies
    trees: tuple[Mapping[str, Any], ...]
    parse: Mapping[str, Any]
    noise: Mapping[str, Any] | None = None
    listed_votes: Mapping[str, int] = dataclasses.field(default_factory=dict)

    def quality(self) -> dict[str, Any]:
        """Answer quality: the parse counts' report and the votes' listed positions."""
        return answer_quality(
            self.parse, counts={"listed": {"votes": listed_report(self.listed_votes)}}
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "final": dict(self.final),
            "noise": self.noise,
            "ess_first_iteration": list(self.ess_first_iteration),
            "ess_days": self.ess_days,
            "side_gain": {
                "all_days": self.side_gain_all_days.to_json(),
                "days_with_werewolf_speaker": self.side_gain_werewolf_days.to_json(),
            },
            "strategies": self.strategies,
            "trees": list(self.trees),
            "parse": self.parse,
            "listed_votes": dict(self.listed_votes),
            # Answer quality beside the parse counts; derived, so not read back.
            "quality": self.quality(),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ModelResult:
        return cls(
            final=d["final"],
            ess_first_iteration=tuple(d["ess_first_iteration"]),
            ess_days=int(d["ess_days"]),
            side_gain_all_days=SideGains.from_json(d["side_gain"]["all_days"]),
            side_gain_werewolf_days=SideGains.from_json(
                d["side_gain"]["days_with_werewolf_speaker"]
            ),
            strategies=d["strategies"],
            trees=tuple(d["trees"]),
            parse=d["parse"],
            noise=d.get("noise"),
            listed_votes=d.get("listed_votes", {}),
        )


@dataclasses.dataclass(frozen=True)
class StrategyAnswer:
    """Question 1 for one model: do the werewolves' and the villagers' strategies differ?

    Attributes:
      differs: Whether the act or tone distance on decisive decisions reaches
        :data:`games.werewolf.day.summary.DIFFERENCE_TV` (None: no decisive decision of one group).
      answer: ``yes`` / ``no`` or why there is no answer.
      tv_acts: Total-variation distance of the act distributions (decisive decisions).
      tv_tones: The same for tones.
      tv_acts_all_decisions: The act distance over all decisions.
      werewolf: The werewolves' strategies (``all`` / ``decisive``).
      village: The village's.
    """

    differs: bool | None
    answer: str
    tv_acts: float | None
    tv_tones: float | None
    tv_acts_all_decisions: float | None
    werewolf: Mapping[str, Distribution]
    village: Mapping[str, Distribution]

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> StrategyAnswer:
        return cls(**{f.name: d[f.name] for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class StrategyQuestion:
    """Question 1 over every model (JSON ``werewolf_vs_village_strategy``)."""

    label: str
    threshold_tv: float
    decided_on: str
    per_model: Mapping[str, StrategyAnswer]

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "threshold_tv": self.threshold_tv,
            "decided_on": self.decided_on,
            "per_model": {m: a.to_json() for m, a in self.per_model.items()},
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> StrategyQuestion:
        return cls(
            label=d["label"],
            threshold_tv=float(d["threshold_tv"]),
            decided_on=d["decided_on"],
            per_model={m: StrategyAnswer.from_json(a) for m, a in d["per_model"].items()},
        )


@dataclasses.dataclass(frozen=True)
class GainQuestion:
    """Question 2 (JSON ``werewolf_gain_none_vs_gratr``): does the werewolf side's CFR-Gain
    fall with GRATR listeners instead of none?

    Attributes:
      label: The model's label.
      per_model: The werewolf side's CFR-Gain over the days a werewolf speaks.
      falls: The answer as a value (None: no answer).
      answer: ``yes`` / ``no`` or why there is no answer.
      difference_gratr_minus_none: The difference of the means, when both exist.
      difference_ci95: Its Welch 95 % interval (unpaired, so wider than a paired
        one over the same days); ``falls`` is True only when the interval lies below 0.
    """

    label: str
    per_model: Mapping[str, MeanStd]
    falls: bool | None
    answer: str
    difference_gratr_minus_none: float | None = None
    difference_ci95: tuple[float | None, float | None] = (None, None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "label": self.label,
            "per_model": {m: v.to_json() for m, v in self.per_model.items()},
            "falls": self.falls,
        }
        if self.difference_gratr_minus_none is not None:
            out["difference_gratr_minus_none"] = self.difference_gratr_minus_none
            out["difference_ci95"] = list(self.difference_ci95)
        out["answer"] = self.answer
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> GainQuestion:
        return cls(
            label=d["label"],
            per_model={m: MeanStd.from_json(v) for m, v in d["per_model"].items()},
            falls=d["falls"],
            answer=d["answer"],
            difference_gratr_minus_none=d.get("difference_gratr_minus_none"),
            difference_ci95=_pair(d.get("difference_ci95")),
        )


@dataclasses.dataclass(frozen=True)
class Questions:
    """The two questions of the study (module docstring of :mod:`games.werewolf.day.solve`)."""

    strategy: StrategyQuestion
    gain: GainQuestion

    def to_json(self) -> dict[str, Any]:
        return {
            "werewolf_vs_village_strategy": self.strategy.to_json(),
            "werewolf_gain_none_vs_gratr": self.gain.to_json(),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Questions:
        return cls(
            strategy=StrategyQuestion.from_json(d["werewolf_vs_village_strategy"]),
            gain=GainQuestion.from_json(d["werewolf_gain_none_vs_gratr"]),
        )


@dataclasses.dataclass(frozen=True)
class DaySolveSummary:
    """``summary.json`` of ``gt-llm werewolf solve``.

    Attributes:
      label: The model that produced the answers (its five fields head the JSON).
      settings: The run's settings (``SolveSettings`` without ``progress``).
      baseline: The baseline CFR-Gain is measured against.
      belief_reading: How each opponent model's beliefs become a role distribution.
      game_seeds: The seeds of the rule-based games the days come from.
      models: Per listeners' opponent model, its results.
      questions: The two questions, answered.
      llm_calls: The call cache's counters (None without a cache).
      timings: Seconds per phase.
    """

    label: ModelLabel
    settings: Mapping[str, Any]
    baseline: str
    belief_reading: str
    game_seeds: tuple[int, ...]
    models: Mapping[str, ModelResult]
    questions: Questions
    llm_calls: Mapping[str, Any] | None
    timings: Mapping[str, float]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            **self.label.to_json(),
            "settings": dict(self.settings),
            "baseline": self.baseline,
            "belief_reading": self.belief_reading,
            "game_seeds": list(self.game_seeds),
            "models": {m: r.to_json() for m, r in self.models.items()},
            "questions": self.questions.to_json(),
        }
        if self.llm_calls is not None:
            out["llm_calls"] = dict(self.llm_calls)
        out["timings"] = dict(self.timings)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DaySolveSummary:
        return cls(
            label=ModelLabel.from_json(d),
            settings=d["settings"],
            baseline=d["baseline"],
            belief_reading=d["belief_reading"],
            game_seeds=tuple(d["game_seeds"]),
            models={m: ModelResult.from_json(r) for m, r in d["models"].items()},
            questions=Questions.from_json(d["questions"]),
            llm_calls=d.get("llm_calls"),
            timings=d["timings"],
        )


def load_summary(out: str | Path) -> DaySolveSummary:
    """The summary (``summary.json``) of a solve folder.

    Raises:
      runs.atomic.ResultsError: the file is missing, not valid JSON, or lacks a
        field of the summary (names the fix).
    """
    from runs.atomic import read_json_as

    return read_json_as(
        Path(out) / "summary.json",
        DaySolveSummary.from_json,
        what="a werewolf solve summary",
        rerun="gt-llm werewolf solve",
    )
