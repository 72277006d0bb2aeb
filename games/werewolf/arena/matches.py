"""Arena matches: seating two opponent models, one arena game, and a pair's scores.

:mod:`games.werewolf.arena.runner` describes the experiment.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from games.werewolf import rules
from games.werewolf.arena.results import (
    Accuracy,
    DeceptionRate,
    MeanScore,
    ModelSummary,
    PairSummary,
    SideScores,
    WinRate,
)
from games.werewolf.arena.scoring import REFERENCE_MODEL, Judgment, side_scores
from games.werewolf.arena.table import WOLF, ArenaTable, SeatedAgent, check_seating, seat_models
from games.werewolf.deception.summary import DeceptionSummary
from games.werewolf.play import runner
from games.werewolf.players.beliefs import BeliefSettings, check_model_name
from games.werewolf.rules import VILLAGERS, WEREWOLVES, Config

__all__ = [
    "ACTION_WEIGHTS",
    "ArenaGame",
    "SeatedAgent",
    "WIN_BONUS",
    "action_scores",
    "games_quality",
    "model_pairs",
    "parse_models",
    "play_arena_game",
    "reference_judgments",
    "seat_models",
    "summarize_pair",
    "with_reference_gaps",
]


WIN_BONUS = 5.0
#: Per-vote score of a role (GRATR Table 2; the doctor is scored as a leader).
ACTION_WEIGHTS: dict[str, float] = {
    "werewolf": 0.5,
    "witch": 1.5,
    "guard": 1.5,
    "seer": 1.5,
    "doctor": 1.5,
    "villager": 1.0,
}


# --------------------------------------------------------------------------- seats


def parse_models(text: str) -> tuple[str, ...]:
    """``"gratr,none"`` -> ``("gratr", "none")``; at least two distinct registered names.

    Raises:
      ValueError: naming ``--models`` and the fix.
    """
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for n in names:
        check_model_name("werewolf arena --models", n)
    if len(names) < 2 or len(set(names)) != len(names):
        raise ValueError(
            "werewolf arena --models: give at least two distinct models, e.g. gratr,none"
        )
    return names


def model_pairs(models: Sequence[str]) -> list[tuple[str, str]]:
    """Every unordered pair of the list, in list order (A before B)."""
    return list(itertools.combinations(models, 2))


# --------------------------------------------------------------------------- one game


@dataclasses.dataclass(frozen=True)
class ArenaGame:
    """What the arena keeps of one game.

    Attributes:
      index: Game number within its pair.
      seed: The game's seed.
      wolf_model: The model on the werewolf side.
      leader_model: The model on the leader side.
      seats: The model of each seat.
      roles: The dealt roles.
      winner: ``"werewolves"``, ``"villagers"`` or ``"draw"``.
      rounds: Rounds played.
      votes: Day votes ``(round, voter, target)``.
      identification: ``(model, observer's team, round, true role of the judged,
        correct)`` per judgment made at a consultation (models that infer
        identities; an ``unsure`` label is not correct).
      judgments: ``(model, observer's team, round, true role, label, distribution)``
        per living player at every consultation of every model: the label
        (a role or ``unsure``) and the reading as ``((role, p), ...)``, scored
        by :mod:`games.werewolf.arena.scoring`.
      statements: ``(round, speaker, deceptive in truth)`` per statement.
      log_path: The game's JSONL log.
      floor_counts: ``(model, FloorCount as a dict)`` per seat whose model counts
        GRATR's Eq. 8 floor and Eq. 9 skips, at the end of the game.
      parse: The table's parse counts (``ParseStats.to_dict``, with ``copied``).
      quality_counts: The game's raw answer-quality counts
        (:meth:`games.werewolf.play.quality.QualityTally.counts`).
      policy_counts: Per agent with a CFR day policy, its day speeches by outcome
        (``matched``; or ``no_group``, ``no_slot``, ``illegal``: no solved state
        matched and the model chose, :mod:`games.werewolf.players.cfr_policy`).
    """

    index: int
    seed: int
    wolf_model: str
    leader_model: str
    seats: tuple[str, ...]
    roles: tuple[str, ...]
    winner: str
    rounds: int
    votes: tuple[tuple[int, int, int], ...]
    identification: tuple[tuple[str, str, int, str, bool], ...]
    statements: tuple[tuple[int, int, bool], ...]
    log_path: str | None = None
    floor_counts: tuple[tuple[str, Mapping[str, int]], ...] = ()
    judgments: tuple[tuple[str, str, int, str, str, tuple[tuple[str, float], ...]], ...] = ()
    parse: Mapping[str, Any] | None = None
    quality_counts: Mapping[str, Any] | None = None
    policy_counts: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()

    @property
    def winning_model(self) -> str | None:
        if self.winner == WEREWOLVES:
            return self.wolf_model
        if self.winner == VILLAGERS:
            return self.leader_model
        return None


def play_arena_game(
    config: Config,
    chat: Any,
    *,
    wolf_model: str,
    leader_model: str,
    seed: int,
    index: int = 0,
    settings: BeliefSettings | None = None,
    log: str | Path | None = None,
    max_concurrency: int | None = None,
    log_prompts: bool = False,
    structured: bool = True,
    agents: Mapping[str, SeatedAgent] | None = None,
) -> tuple[ArenaGame, DeceptionSummary]:
    """Plays one arena game (:mod:`games.werewolf.arena.runner`).

    ``structured`` asks every LLM call for its JSON answer under the task's schema.
    With ``agents``, ``wolf_model`` and ``leader_model`` name two of them (their
    seats call their own models; ``chat`` is then unused); without, they name
    opponent models and every seat calls ``chat``.

    Returns:
      What the reports need, and the game's deception summary.
    """
    for what, name in (("wolf_model", wolf_model), ("leader_model", leader_model)):
        if agents is None:
            check_model_name(f"play_arena_game: {what}", name)
        elif name not in agents:
            raise ValueError(
                f"play_arena_game: {what} {name!r} is not among the agents {sorted(agents)}"
            )
    check_seating(config)
    table = ArenaTable(
        chat,
        config,
        seed=seed,
        wolf_model=wolf_model,
        leader_model=leader_model,
        settings=settings or BeliefSettings(),
        max_concurrency=max_concurrency,
        log_prompts=log_prompts,
        structured=structured,
        agents=agents,
    )
    # Written beside as a temporary file: only a finished game replaces the log under its
    # name; a failed or interrupted one is kept as its .partial and any old log is untouched.
    glog = runner.GameLog(log) if log is not None else None
    try:
        result = runner.play_game(config, seed=seed, log=glog, table=table)
        votes = []
        for e in result.final.events:
            if e.kind == "votes":
                votes += [(e.round, int(v), int(t)) for v, t in e.data["votes"].items()]
        game = ArenaGame(
            index=index,
            seed=seed,
            wolf_model=wolf_model,
            leader_model=leader_model,
            seats=table.seat_models,
            roles=tuple(result.roles),
            winner=str(result.winner),
            rounds=result.rounds,
            votes=tuple(sorted(votes)),
            identification=tuple(table.identification),
            judgments=tuple(table.judgments),
            statements=tuple(
                (s.round, s.speaker, bool(s.deceptive)) for s in table.tracker.statements
            ),
            log_path=str(log) if log is not None else None,
            floor_counts=tuple(
                (table.seat_models[p], fc)
                for p, a in sorted(table.adapters.items())
                if (fc := a.floor_count()) is not None
            ),
            parse=(result.extra or {}).get("parse_stats"),
            quality_counts=(result.extra or {}).get("quality"),
            policy_counts=tuple(
                (name, tuple(sorted(c.items()))) for name, c in sorted(table.policy_counts.items())
            ),
        )
        if glog is not None:
            glog.write("arena", **_game_dict(game))
    except BaseException:
        if glog is not None:
            glog.abort()
        raise
    if glog is not None:
        glog.close()
    return game, table.tracker.summary()


def _game_dict(g: ArenaGame) -> dict[str, Any]:
    d = dataclasses.asdict(g)
    # The log's result record holds them already.
    del d["parse"], d["quality_counts"]
    d["winning_model"] = g.winning_model
    return d


def games_quality(games: Sequence[ArenaGame]) -> dict[str, Any] | None:
    """The answer-quality report of arena games, their counts pooled.

    :func:`games.werewolf.play.quality.series_quality` of the games' pooled parse
    counts and quality tallies; None when no game carries them.
    """
    from games.werewolf.play.quality import series_quality
    from gt_llm.parsing import ParseStats

    parses = [dict(g.parse) for g in games if g.parse is not None]
    if not parses:
        return None
    parse = ParseStats.pooled(parses).to_dict()
    return series_quality(parse, [g.quality_counts or {} for g in games])


# --------------------------------------------------------------------------- scores


def action_scores(game: ArenaGame) -> list[float]:
    """Each seat's action score: 5 if its team won, ± per day vote (see the arena runner)."""
    scores = [WIN_BONUS if game.winner == rules.team_of(r) else 0.0 for r in game.roles]
    for _, voter, target in game.votes:
        role = game.roles[voter]
        wolf_target = game.roles[target] == WOLF
        correct = (not wolf_target) if role == WOLF else wolf_target
        w = ACTION_WEIGHTS[role]
        scores[voter] += w if correct else -w
    return scores


def _rate(k: int, n: int) -> WinRate:
    if n == 0:
        return WinRate(wins=0, games=0, rate=None, ci95=(None, None))
    lo, hi = runner.wilson_interval(k, n)
    return WinRate(wins=k, games=n, rate=k / n, ci95=(lo, hi))


def summarize_pair(games: Sequence[ArenaGame], a: str, b: str) -> PairSummary:
    """Win rates, action scores, identification and deception of one pair's games."""
    models: dict[str, ModelSummary] = {}
    for m in (a, b):
        wolf = [g for g in games if g.wolf_model == m]
        lead = [g for g in games if g.leader_model == m]
        wins = lambda gs, m=m: sum(g.winning_model == m for g in gs)  # noqa: E731
        by_role: dict[str, list[float]] = defaultdict(list)
        for g in games:
            for p, s in enumerate(action_scores(g)):
                if g.seats[p] == m:
                    by_role[g.roles[p]].append(s)
        ident: dict[str, dict[int, dict[str, list[bool]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        for g in games:
            for model, team, rnd, truth, ok in g.identification:
                if model == m:
                    ident[team][int(rnd)][truth].append(ok)
        dec: dict[str, list[bool]] = defaultdict(list)
        for g in games:
            for _rnd, speaker, deceptive in g.statements:
                if g.seats[speaker] == m:
                    side = "werewolf" if g.wolf_model == m else "leader"
                    dec[side].append(deceptive)
        models[m] = ModelSummary(
            twr=_rate(wins(games), len(games)),
            wwr=_rate(wins(wolf), len(wolf)),
            lwr=_rate(wins(lead), len(lead)),
            action_scores={
                r: MeanScore(mean=float(np.mean(v)), n=len(v)) for r, v in sorted(by_role.items())
            },
            identification=(
                {
                    team: {
                        rnd: {
                            r: Accuracy(accuracy=float(np.mean(v)), n=len(v))
                            for r, v in sorted(per.items())
                        }
                        for rnd, per in sorted(rounds.items())
                    }
                    for team, rounds in sorted(ident.items())
                }
                if ident
                else None
            ),
            deception={
                side: DeceptionRate(
                    statements=len(v),
                    deceptive=int(sum(v)),
                    rate=float(np.mean(v)) if v else None,
                )
                for side, v in sorted(dec.items())
            },
            eq8_floor=_floor_totals(games, m),
            scores=_scores(games, m),
        )
    return PairSummary(
        pair=(a, b),
        games=len(games),
        draws=sum(g.winner == rules.DRAW for g in games),
        models=models,
        quality=games_quality(games),
    )


def _judgments(games: Sequence[ArenaGame], model: str) -> dict[str, list[Judgment]]:
    """``model``'s judgments per observer side, keyed by game seed (sides in name order)."""
    by_side: dict[str, list[Judgment]] = defaultdict(list)
    for g in games:
        for m, team, _rnd, truth, label, dist in g.judgments:
            if m == model:
                by_side[team].append((g.seed, truth, label, dict(dist)))
    return dict(sorted(by_side.items()))


def reference_judgments(
    pairs: Sequence[Sequence[ArenaGame]], model: str = REFERENCE_MODEL
) -> dict[str, list[list[Judgment]]]:
    """The reference model's judgments per observer side, one list per pair it played.

    Args:
      pairs: Every pair's games.
      model: The reference model (default ``bayes``).

    Returns:
      Empty when no pair has the model's judgments.
    """
    out: dict[str, list[list[Judgment]]] = defaultdict(list)
    for games in pairs:
        for side, js in _judgments(games, model).items():
            out[side].append(js)
    return dict(out)


def _scores(
    games: Sequence[ArenaGame],
    model: str,
    reference: Mapping[str, Sequence[Sequence[Judgment]]] | None = None,
) -> dict[str, SideScores] | None:
    """Per observer side, the proper scores of ``model``'s readings (None: no judgments).

    With ``reference`` (:func:`reference_judgments`), each score carries its gap to
    the reference model's judgments of the same side.
    """
    by_side = _judgments(games, model)
    if not by_side:
        return None
    if reference is None:
        return {side: side_scores(js) for side, js in by_side.items()}
    return {side: side_scores(js, reference.get(side, [])) for side, js in by_side.items()}


def with_reference_gaps(
    summary: PairSummary,
    games: Sequence[ArenaGame],
    reference: Mapping[str, Sequence[Sequence[Judgment]]],
) -> PairSummary:
    """The pair's summary with every model's identification scores gapped to the reference.

    Args:
      summary: :func:`summarize_pair` of ``games``.
      games: The pair's games.
      reference: :func:`reference_judgments` of every pair of the run.
    """
    models = {
        m: dataclasses.replace(row, scores=_scores(games, m, reference))
        for m, row in summary.models.items()
    }
    return dataclasses.replace(summary, models=models)


def _floor_totals(games: Sequence[ArenaGame], model: str) -> dict[str, int] | None:
    """GRATR's Eq. 8 floor and Eq. 9 counts summed over ``model``'s seats (None: not GRATR)."""
    counts = [fc for g in games for m, fc in g.floor_counts if m == model]
    if not counts:
        return None
    return {k: int(sum(c[k] for c in counts)) for k in counts[0]}
