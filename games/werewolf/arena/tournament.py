"""``gt-llm werewolf tournament``: a round-robin of agents, rated and analysed as a meta-game.

Every pair of ``--agents`` (:mod:`games.werewolf.agents`: a backend, an opponent
model and a day policy, or rule-based players) plays ``--games`` arena games
(:func:`games.werewolf.arena.runner.play_pairs`): each agent gets half the seats,
sides alternate (game i gives the pair's first agent the werewolf side when i is
even) and game i uses seed ``--seed + i``, so both agents of every pair meet the
same deals from both sides. The agent of the winning side wins; a draw scores
one half to each.

From the games (:mod:`solvers.ratings`, :mod:`solvers.metagame`):

* **Ratings** — a Bradley–Terry fit on the Elo scale with bootstrap intervals
  (games resampled within each pair), rank intervals, and the pairs whose rating
  difference the intervals cannot separate; sequential Elo beside it, in game
  order and over random orders (it depends on the order).
* **Win rates** per pair (TWR / WWR / LWR with Wilson intervals, as the arena),
  and per agent, side and role.
* **The empirical meta-game** — the agents are its strategies, the mean score of
  row against column its payoff (with standard errors); its α-Rank stationary
  distribution (OpenSpiel's ``alpharank``, α swept and the chosen α reported)
  and a Nash equilibrium (linear programming).
* **CFR agents** — per agent with a day policy, its speeches that followed the
  policy and those where no solved state matched (the model chose instead), and
  against the agent with the same model and backend that chooses its own tones
  and acts, the win rate with its interval and the rating difference.

Written to ``--out``: ``tournament.json``, ``pairs.csv``, ``ratings.csv``,
``metagame.csv``, ``win_rates.csv``, ``fig_ratings.png``, ``fig_metagame.png``,
``fig_response_graph.png``, the games' logs, and ``view/index.html`` from
``werewolf view OUT``. Every call goes through the cache (``OUT/llm_cache.sqlite``):
re-running makes no new call and writes identical results files (wall time and
call counts are printed, not written).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from games.engine.cli_options import Writer, result_settings, say
from games.engine.results import model_label
from games.werewolf import rules
from games.werewolf.agents import Agent
from games.werewolf.arena.matches import ArenaGame, games_quality, model_pairs
from games.werewolf.arena.report import _fmt_rate
from games.werewolf.arena.results import PairSummary
from games.werewolf.arena.runner import (
    add_table_options,
    agent_run,
    arena_agents,
    call_counts,
    check_table_args,
    csv_rows,
    play_pairs,
)
from games.werewolf.play.quality import quality_lines
from games.werewolf.play.runner import wilson_interval
from games.werewolf.players.beliefs import BeliefSettings
from runs.atomic import finite_or_none
from runs.results import ResultsDir

__all__ = [
    "FORMAT",
    "Analysis",
    "add_tournament_parser",
    "analyse",
    "game_outcomes",
    "parse_tournament_args",
    "run_tournament",
]

FORMAT = "gt-llm.werewolf.tournament/1"
#: Games per pair below which the end lines warn that bootstrap intervals understate uncertainty.
FEW_GAMES = 10
MAX_AGENTS = 16


def game_outcomes(games: Sequence[ArenaGame]) -> list[tuple[str, str, float]]:
    """``(werewolf-side agent, leader-side agent, the first's score)`` per game, in order."""
    out = []
    for g in games:
        score = 0.5 if g.winning_model is None else float(g.winning_model == g.wolf_model)
        out.append((g.wolf_model, g.leader_model, score))
    return out


def _rate_json(wins: int, n: int) -> dict[str, Any]:
    lo, hi = wilson_interval(wins, n) if n else (None, None)
    return {"wins": wins, "games": n, "rate": wins / n if n else None, "ci95": [lo, hi]}


def side_and_role_rates(games: Sequence[ArenaGame]) -> dict[str, dict[str, Any]]:
    """Per agent: win rates on each side and in each role (its seats' team won)."""
    side: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    role: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for g in games:
        for agent, s in ((g.wolf_model, "werewolf"), (g.leader_model, "leader")):
            side[agent][s][0] += g.winning_model == agent
            side[agent][s][1] += 1
        for agent, r in zip(g.seats, g.roles, strict=True):
            role[agent][r][0] += g.winner == rules.team_of(r)
            role[agent][r][1] += 1
    return {
        a: {
            "side": {s: _rate_json(*side[a][s]) for s in sorted(side[a])},
            "role": {r: _rate_json(*role[a][r]) for r in sorted(role[a])},
        }
        for a in sorted(set(side) | set(role))
    }


def policy_report(
    agents: Sequence[Agent], games: Sequence[ArenaGame], pairs: Sequence[PairSummary], ratings
) -> list[dict[str, Any]]:
    """Per CFR agent: how often its policy matched, and how it fared against its own-choice twin.

    The twin is the agent with the same opponent model and backend and no policy.
    """
    out = []
    for a in agents:
        if a.policy is None:
            continue
        counts: dict[str, int] = defaultdict(int)
        for g in games:
            for name, c in g.policy_counts:
                if name == a.name:
                    for k, v in c:
                        counts[k] += v
        twin = next(
            (
                b
                for b in agents
                if b.policy is None and b.opponent == a.opponent and b.backend == a.backend
            ),
            None,
        )
        row: dict[str, Any] = {
            "agent": a.name,
            "policy_folder": a.policy,
            "speeches": dict(sorted(counts.items())),
            "matched_share": counts["matched"] / sum(counts.values()) if counts else None,
            "twin": twin.name if twin else None,
        }
        if twin is not None:
            pair = next(p for p in pairs if set(p.pair) == {a.name, twin.name})
            wins = pair.models[a.name].twr
            row["against_twin"] = {
                "games": pair.games,
                "draws": pair.draws,
                "win_rate": wins.rate,
                "ci95": list(wins.ci95),
                "rating_difference": dataclasses.asdict(ratings.pair(a.name, twin.name)),
            }
        out.append(row)
    return out


def run_tournament(args: argparse.Namespace, *, write: Writer | None = None) -> int:
    """``gt-llm werewolf tournament``: see the module docstring."""
    write = write or say
    config = check_table_args(args)
    agents = arena_agents(args.agents, flag="--agents")
    if len(agents) > MAX_AGENTS:
        raise ValueError(f"--agents: at most {MAX_AGENTS} agents, got {len(agents)}")
    names = tuple(a.name for a in agents)
    from games.werewolf.estimate import check_games
    from games.werewolf.options import show_estimate

    check_games(len(model_pairs(names)) * args.games, flag="--games")
    estimate = show_estimate(args, config, games=len(model_pairs(names)) * args.games)
    settings = BeliefSettings(k=args.k, top_k=args.top_k, threshold=args.threshold)
    with agent_run(args, agents, config, estimate) as open_run:
        run, chat, seated = open_run(
            {
                "command": "werewolf tournament",
                **result_settings(args, also_ignore=("werewolf_command",)),
                "config": config.as_dict(),
                "agents": [a.to_json(args.backend) for a in agents],
                "beliefs": dataclasses.asdict(settings),
            }
        )
        if seated is None:  # plain opponent models: the same table, every seat on --backend
            from games.werewolf.arena.runner import seat_agents

            seated = seat_agents(agents, {args.backend: chat}, {}, args.backend)
        start = time.perf_counter()
        summaries, games = play_pairs(args, run, chat, config, names, settings, seated=seated)
        analysis = analyse(args, agents, chat, config, summaries, games)
        _write(run, analysis, summaries)
        doc = analysis.document
        run.finish()
        _print(write, doc, chat, time.perf_counter() - start, run)
    return 0


@dataclasses.dataclass(frozen=True)
class Analysis:
    """A tournament's results: the document of ``tournament.json`` and the objects drawn.

    Attributes:
      document: Everything ``tournament.json`` holds (no wall time, no call
        counts: a re-run writes identical files).
      ratings: The Bradley–Terry table (:class:`solvers.ratings.RatingTable`).
      metagame: The empirical meta-game (:class:`solvers.metagame.MetaGame`).
      alpharank: Its α-Rank (:class:`solvers.metagame.AlphaRankResult`).
    """

    document: dict[str, Any]
    ratings: Any
    metagame: Any
    alpharank: Any


def analyse(
    args: argparse.Namespace,
    agents: Sequence[Agent],
    chat: Any,
    config: rules.Config,
    summaries: Sequence[PairSummary],
    games: Sequence[ArenaGame],
) -> Analysis:
    """Ratings, meta-game, α-Rank, Nash and the CFR agents' report of the played games."""
    from solvers.metagame import alpha_rank, empirical_metagame, nash
    from solvers.ratings import elo_spread, rate

    names = [a.name for a in agents]
    outcomes = game_outcomes(games)
    ratings = rate(names, outcomes, bootstrap=args.bootstrap, seed=args.seed)
    metagame = empirical_metagame(names, outcomes)
    alpharank = alpha_rank(metagame)
    label = model_label(chat)
    spread = elo_spread(names, outcomes, seed=args.seed)
    doc = {
        "format": FORMAT,
        "label": label.label,
        "is_llm": label.is_llm,
        "agents": [a.to_json(args.backend) for a in agents],
        "preset": args.preset,
        "config": config.as_dict(),
        "games_per_pair": args.games,
        "seeds": [args.seed, args.seed + args.games - 1],
        "games": len(games),
        "pairs": [s.to_json() for s in summaries],
        "ratings": ratings.to_json(),
        "elo_random_orders": {a: dataclasses.asdict(e) for a, e in spread.items()},
        "win_rates": side_and_role_rates(games),
        "metagame": metagame.to_json(),
        "alpha_rank": alpharank.to_json(),
        "nash": nash(metagame).to_json(),
        "cfr_agents": policy_report(agents, games, summaries, ratings),
        "quality": games_quality(games),
    }
    return Analysis(finite_or_none(doc), ratings, metagame, alpharank)


def _write(run: ResultsDir, analysis: Analysis, summaries: Sequence[PairSummary]) -> None:
    from solvers.tournament_figures import fig_metagame, fig_ratings, fig_response_graph

    doc = analysis.document
    run.write_json("tournament.json", doc)
    run.write_csv("pairs.csv", csv_rows(summaries))
    run.write_csv("ratings.csv", doc["ratings"]["agents"])
    mg = doc["metagame"]
    run.write_csv(
        "metagame.csv",
        [
            {
                "row": a,
                "column": b,
                "payoff": mg["payoff"][i][j],
                "stderr": mg["stderr"][i][j],
                "games": mg["games"][i][j],
            }
            for i, a in enumerate(mg["agents"])
            for j, b in enumerate(mg["agents"])
        ],
    )
    run.write_csv(
        "win_rates.csv",
        [
            {"agent": a, "kind": kind, "name": k, **{x: r[x] for x in ("wins", "games", "rate")}}
            for a, per in doc["win_rates"].items()
            for kind in ("side", "role")
            for k, r in per[kind].items()
        ],
    )
    title = f"Werewolf tournament — {doc['label']}"
    figures = {
        "fig_ratings.png": fig_ratings(analysis.ratings, title=title),
        "fig_metagame.png": fig_metagame(analysis.metagame, title=title),
        "fig_response_graph.png": fig_response_graph(
            analysis.metagame, analysis.alpharank, title=title
        ),
    }
    for name, fig in figures.items():
        with run.atomic_path(name) as tmp:
            fig.savefig(tmp, dpi=110)


def _print(write: Writer, doc: Mapping[str, Any], chat: Any, seconds: float, run) -> None:
    write(f"tournament of {len(doc['agents'])} agents, {doc['games']} games, {doc['label']}")
    for s in doc["pairs"]:
        a, b = s["pair"]
        rates = {m: PairSummary.from_json(s).models[m].twr for m in (a, b)}
        write(f"  {a} vs {b}: {a} {_fmt_rate(rates[a])}, {b} {_fmt_rate(rates[b])}")
    write("ratings (Bradley-Terry, Elo scale, 95% bootstrap intervals):")
    for row in doc["ratings"]["agents"]:
        write(
            f"  {row['agent']:24s} {row['rating']:7.1f} [{row['low']:7.1f}, {row['high']:7.1f}]"
            f"  rank {row['rank_low']}-{row['rank_high']}  (Elo in game order {row['elo']:.0f})"
        )
    if doc["games_per_pair"] < FEW_GAMES:
        write(
            f"  only {doc['games_per_pair']} games per pair: where a pair's games all went one "
            "way, resampling them cannot show its uncertainty; read the pairs' Wilson intervals"
        )
    if doc["ratings"]["inseparable"]:
        write(
            "  not separated by the intervals: "
            + "; ".join(f"{a} ~ {b}" for a, b in doc["ratings"]["inseparable"])
        )
    ar = doc["alpha_rank"]
    write(
        f"alpha-Rank (alpha {ar['alpha']:g}): "
        + ", ".join(f"{a} {p:.3f}" for a, p in zip(ar["agents"], ar["pi"], strict=True))
    )
    ne = doc["nash"]
    write(
        "Nash of the meta-game: "
        + ", ".join(
            f"{a} {p:.3f}" for a, p in zip(ne["agents"], ne["strategy"], strict=True) if p > 1e-9
        )
    )
    for c in doc["cfr_agents"]:
        sp = c["speeches"]
        write(
            f"  {c['agent']}: {sp.get('matched', 0)} of {sum(sp.values())} day speeches "
            "followed its CFR policy (the rest: no solved state matched, the model chose)"
        )
        t = c.get("against_twin")
        if t:
            lo, hi = t["ci95"]
            write(
                f"  {c['agent']} vs {c['twin']}: won {t['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] "
                f"of {t['games']} games"
            )
    if doc["quality"] is not None:
        for line in quality_lines(doc["quality"]):
            write(line)
    counts = call_counts(chat)
    if counts is not None:
        write(f"LLM calls: {counts[0]} new, {counts[1]} from the cache; {seconds:.1f} s")
    write(f"results in {run.path / 'tournament.json'} (see `gt-llm werewolf view {run.path}`)")


def parse_tournament_args(argv: Sequence[str]) -> argparse.Namespace:
    """The ``tournament`` command's options from an argument list (scripts and notebooks).

    Example: ``run_tournament(parse_tournament_args(["--agents", "gratr,none", "--out", "t"]))``.
    """
    parser = argparse.ArgumentParser(prog="gt-llm werewolf")
    add_tournament_parser(parser.add_subparsers())
    return parser.parse_args(["tournament", *argv])


def add_tournament_parser(sub: argparse._SubParsersAction) -> None:
    """Adds ``tournament`` to the ``werewolf`` command group."""
    from gt_llm.argtypes import MAX_SIZE, bounded_int, non_empty

    p = sub.add_parser(
        "tournament",
        help="a round-robin of agents: ratings with intervals, meta-game, alpha-Rank, Nash",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--preset", choices=sorted(rules.PRESETS), default="arena")
    p.add_argument(
        "--agents",
        type=non_empty,
        required=True,
        help="comma-separated agents [NAME=]MODEL[+cfr:FOLDER][@BACKEND] or rules: MODEL an "
        "opponent model (none, dirichlet, gratr, ...), FOLDER a `werewolf solve` results "
        "folder whose CFR day policy picks the agent's tones and acts, BACKEND its model "
        "(default --backend)",
    )
    p.add_argument(
        "--games",
        type=bounded_int(2, MAX_SIZE),
        default=20,
        help="games per pair, both sides alternately (default 20)",
    )
    p.add_argument(
        "--bootstrap",
        type=bounded_int(1, 100_000),
        default=1000,
        help="bootstrap resamples of the rating intervals (default 1000)",
    )
    add_table_options(p, out="results/werewolf_tournament")
    p.set_defaults(func=run_tournament)
