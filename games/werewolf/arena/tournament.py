"""``gt-llm werewolf tournament``: a round-robin of agents, rated and analysed as a meta-game.

Every pair of ``--agents`` (:mod:`games.werewolf.agents`: a backend, an opponent
model and a day policy — the model's own, a CFR-solved one or the uniform
control — or rule-based players) plays ``--games`` arena games
(:func:`games.werewolf.arena.runner.play_pairs`, mirrored): each agent gets half
the seats. ``--games`` counts the games of a pair and must be even: they are
``--games / 2`` deals, each played twice. Deal k uses seed ``--seed + k`` (the
same roles, seats and seat draws) and is game 2k, with the pair's first-listed
agent on the werewolf side, and game 2k + 1, with the other agent on it. Every
pair plays the same deals. So each agent meets every deal from both sides, and
neither a deal nor the list order favours one agent of a pair. The agent of the
winning side wins; a draw scores one half to each.

Games that share a deal are not independent (every pair plays it, from both
sides), so every interval below comes from a **seed bootstrap**: the deals are
resampled with replacement, each drawn deal bringing all its games (both sides,
every pair) as often as it was drawn; the resamples are seeded by ``--seed``.

From the games (:mod:`solvers.ratings`, :mod:`solvers.metagame`):

* **Ratings** — a Bradley–Terry fit on the Elo scale with seed-bootstrap
  intervals (``--bootstrap`` resamples), rank intervals, and the pairs whose
  rating difference the intervals cannot separate; sequential Elo beside it, in
  game order and over random orders (it depends on the order).
* **Win rates** per pair (TWR / WWR / LWR with Wilson intervals, as the arena),
  and per agent, side and role.
* **The empirical meta-game** — the agents are its strategies, the mean score of
  row against column its payoff (with standard errors); its α-Rank stationary
  distribution (OpenSpiel's ``alpharank``, α swept; the chosen α and whether the
  sweep settled are printed) and its Nash equilibria (linear programming):
  whether the equilibrium is unique (each agent's weight maximised and minimised
  over the equilibrium set), each weight's range, the agents some equilibrium
  plays, and the equilibrium reported (the unique one, else the maximum-entropy
  one). From ``--metagame-bootstrap`` seed-bootstrap resamples: per agent, its
  α-Rank mass's 95 % interval and how often it is on top, its Nash weight's
  interval and how often it is in the support.
* **CFR agents** — per agent with a day policy, its speeches that followed the
  policy and those where no solved state matched (the model chose instead), and
  against the agent with the same model and backend that chooses its own tones
  and acts (its twin), and against the uniform control (``MODEL+uniform``, same
  model and backend) when it plays, the win rate with its interval and the
  rating difference. Uniform agents get the same counts and twin (``uniform_agents``).

Written to ``--out``: ``tournament.json`` (with the ``schedule``: every game's
pair, index, seed and werewolf-side agent), ``pairs.csv``, ``ratings.csv``,
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
from games.werewolf.arena.rows import csv_rows
from games.werewolf.arena.runner import (
    add_table_options,
    agent_run,
    arena_agents,
    call_counts,
    check_table_args,
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
    "check_even_games",
    "game_outcomes",
    "parse_tournament_args",
    "run_tournament",
]

FORMAT = "gt-llm.werewolf.tournament/2"
#: Deals (seeds) below which the end lines warn that bootstrap intervals understate uncertainty.
FEW_SEEDS = 10
MAX_AGENTS = 16
#: Default seed-bootstrap resamples of α-Rank and Nash (each recomputes both: slower
#: than a Bradley–Terry refit, hence fewer than ``--bootstrap``'s default).
METAGAME_BOOTSTRAP = 200


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


def _same_model(a: Agent, b: Agent) -> bool:
    return a.opponent == b.opponent and a.backend == b.backend


def _against(a: Agent, other: Agent, pairs: Sequence[PairSummary], ratings: Any) -> dict[str, Any]:
    """``a``'s win rate (Wilson interval) and rating difference against ``other``."""
    pair = next(p for p in pairs if set(p.pair) == {a.name, other.name})
    wins = pair.models[a.name].twr
    return {
        "games": pair.games,
        "draws": pair.draws,
        "win_rate": wins.rate,
        "ci95": list(wins.ci95),
        "rating_difference": dataclasses.asdict(ratings.pair(a.name, other.name)),
    }


def policy_report(
    agents: Sequence[Agent],
    games: Sequence[ArenaGame],
    pairs: Sequence[PairSummary],
    ratings: Any,
    *,
    kind: str = "cfr",
) -> list[dict[str, Any]]:
    """Per agent whose day policy is ``kind`` (``cfr`` or ``uniform``): its speeches and rivals.

    How often its policy matched, and how it fared against its own-choice twin
    (the agent with the same opponent model and backend and no policy) and, for a
    CFR agent, against its uniform control (same opponent model and backend,
    ``+uniform``).
    """
    out = []
    for a in agents:
        if a.day_policy != kind:
            continue
        counts: dict[str, int] = defaultdict(int)
        for g in games:
            for name, c in g.policy_counts:
                if name == a.name:
                    for k, v in c:
                        counts[k] += v
        twin = next((b for b in agents if b.day_policy == "own" and _same_model(a, b)), None)
        row: dict[str, Any] = {
            "agent": a.name,
            "policy_folder": a.policy,
            "speeches": dict(sorted(counts.items())),
            "matched_share": counts["matched"] / sum(counts.values()) if counts else None,
            "twin": twin.name if twin else None,
        }
        if twin is not None:
            row["against_twin"] = _against(a, twin, pairs, ratings)
        if kind == "cfr":
            control = next(
                (b for b in agents if b.day_policy == "uniform" and _same_model(a, b)), None
            )
            row["uniform_control"] = control.name if control else None
            if control is not None:
                row["against_uniform"] = _against(a, control, pairs, ratings)
        out.append(row)
    return out


def check_even_games(games: int) -> None:
    """Refuses an odd ``--games`` before any call (ValueError naming the flag and the fix)."""
    if games < 2 or games % 2:
        raise ValueError(
            f"--games: must be an even number >= 2 (each deal is played twice, the sides "
            f"swapped), got {games}; e.g. --games {max(2, games + games % 2)}"
        )


def run_tournament(args: argparse.Namespace, *, write: Writer | None = None) -> int:
    """``gt-llm werewolf tournament``: see the module docstring."""
    write = write or say
    check_even_games(args.games)
    config = check_table_args(args)
    agents = arena_agents(args.agents, flag="--agents")
    if len(agents) > MAX_AGENTS:
        raise ValueError(f"--agents: at most {MAX_AGENTS} agents, got {len(agents)}")
    names = tuple(a.name for a in agents)
    from games.werewolf.estimate import check_games, pair_seatings
    from games.werewolf.options import show_estimate

    check_games(len(model_pairs(names)) * args.games, flag="--games")
    seatings = pair_seatings(config.num_players, [a.opponent for a in agents], args.games)
    total = len(model_pairs(names)) * args.games
    estimate = show_estimate(args, config, games=total, seatings=seatings)
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
        summaries, games = play_pairs(
            args, run, chat, config, names, settings, seated=seated, mirrored=True
        )
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
      nash: Its Nash equilibria (:class:`solvers.metagame.NashResult`).
      uncertainty: The seed bootstrap of α-Rank and Nash
        (:class:`solvers.metagame.MetaGameBootstrap`).
    """

    document: dict[str, Any]
    ratings: Any
    metagame: Any
    alpharank: Any
    nash: Any = None
    uncertainty: Any = None


def analyse(
    args: argparse.Namespace,
    agents: Sequence[Agent],
    chat: Any,
    config: rules.Config,
    summaries: Sequence[PairSummary],
    games: Sequence[ArenaGame],
) -> Analysis:
    """Ratings, meta-game, α-Rank, Nash and the CFR agents' report of the played games.

    Every bootstrap resamples the games' seeds (deals), each with all its games.
    """
    from solvers.metagame import alpha_rank, bootstrap_metagame, empirical_metagame, nash
    from solvers.ratings import elo_spread, rate

    names = [a.name for a in agents]
    outcomes = game_outcomes(games)
    # Deals are shared by every pair and played from both sides: resampled as units.
    seeds = [g.seed for g in games]
    ratings = rate(names, outcomes, bootstrap=args.bootstrap, seed=args.seed, clusters=seeds)
    metagame = empirical_metagame(names, outcomes)
    alpharank = alpha_rank(metagame)
    equilibria = nash(metagame)
    uncertainty = bootstrap_metagame(
        names, outcomes, seeds, replicates=args.metagame_bootstrap, seed=args.seed
    )
    label = model_label(chat)
    spread = elo_spread(names, outcomes, seed=args.seed)
    deals = args.games // 2
    doc = {
        "format": FORMAT,
        "label": label.label,
        "is_llm": label.is_llm,
        "agents": [a.to_json(args.backend) for a in agents],
        "preset": args.preset,
        "config": config.as_dict(),
        "games_per_pair": args.games,
        "mirrored": True,
        "seeds_per_pair": deals,
        "seeds": [args.seed, args.seed + deals - 1],
        "games": len(games),
        "schedule": [
            {
                # The pair as listed: its first agent is on the werewolf side in even games.
                "pair": [g.wolf_model, g.leader_model][:: 1 if g.index % 2 == 0 else -1],
                "game": g.index,
                "seed": g.seed,
                "werewolf_side": g.wolf_model,
            }
            for g in games
        ],
        "pairs": [s.to_json() for s in summaries],
        "ratings": ratings.to_json(),
        "elo_random_orders": {a: dataclasses.asdict(e) for a, e in spread.items()},
        "win_rates": side_and_role_rates(games),
        "metagame": metagame.to_json(),
        "alpha_rank": alpharank.to_json(),
        "nash": equilibria.to_json(),
        "metagame_bootstrap": uncertainty.to_json(),
        "cfr_agents": policy_report(agents, games, summaries, ratings),
        "uniform_agents": policy_report(agents, games, summaries, ratings, kind="uniform"),
        "quality": games_quality(games),
    }
    return Analysis(finite_or_none(doc), ratings, metagame, alpharank, equilibria, uncertainty)


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
    deals = doc["seeds_per_pair"]
    write(
        f"tournament of {len(doc['agents'])} agents, {doc['games']} games "
        f"({deals} deals per pair, each played from both sides), {doc['label']}"
    )
    for s in doc["pairs"]:
        a, b = s["pair"]
        rates = {m: PairSummary.from_json(s).models[m].twr for m in (a, b)}
        write(f"  {a} vs {b}: {a} {_fmt_rate(rates[a])}, {b} {_fmt_rate(rates[b])}")
    rt = doc["ratings"]
    write(
        f"ratings (Bradley-Terry, Elo scale, 95% seed-bootstrap intervals: {rt['bootstrap']} "
        f"resamples of the {rt['clusters']} deals):"
    )
    for row in rt["agents"]:
        write(
            f"  {row['agent']:24s} {row['rating']:7.1f} [{row['low']:7.1f}, {row['high']:7.1f}]"
            f"  rank {row['rank_low']}-{row['rank_high']}  (Elo in game order {row['elo']:.0f})"
        )
    if deals < FEW_SEEDS:
        write(
            f"  only {deals} deal(s) per pair: the bootstrap resamples deals, and with few "
            "of them it cannot show the uncertainty; read the pairs' Wilson intervals"
        )
    if rt["inseparable"]:
        write(
            "  not separated by the intervals: "
            + "; ".join(f"{a} ~ {b}" for a, b in rt["inseparable"])
        )
    boot = doc["metagame_bootstrap"]
    rows = {r["agent"]: r for r in boot["agents"]}
    resamples = f"{boot['replicates']} seed-bootstrap resamples"
    ar = doc["alpha_rank"]
    settled = (
        "the sweep settled"
        if ar["converged"]
        else "the sweep did NOT settle: the masses still change with alpha"
    )
    low, high = boot["alphas"]
    write(
        f"alpha-Rank (alpha {ar['alpha']:g}: {settled}; over {resamples}: settled in "
        f"{100 * boot['alpha_rank_settled']:.0f} %, alpha {low:g} to {high:g}):"
    )
    for a, p in zip(ar["agents"], ar["pi"], strict=True):
        r = rows[a]
        write(
            f"  {a:24s} {p:.3f} [{r['alpha_rank_low']:.3f}, {r['alpha_rank_high']:.3f}]"
            f"  on top in {100 * r['alpha_rank_top']:.0f} % of resamples"
        )
    ne = doc["nash"]
    if ne["unique"]:
        head = "Nash of the meta-game (unique):"
    else:
        head = (
            "Nash of the meta-game: NOT unique; agents in some equilibrium: "
            + ", ".join(ne["support"])
            + "; the maximum-entropy one"
            + ("" if ne["selection"] == "maximum entropy" else f" ({ne['selection']})")
            + ":"
        )
    write(f"{head} exploitability {ne['exploitability']:.2g}")
    for x, (a, p) in enumerate(zip(ne["agents"], ne["strategy"], strict=True)):
        r = rows[a]
        lo, hi = ne["weight_low"][x], ne["weight_high"][x]
        span = "" if ne["unique"] else f"  (from {lo:.3f} to {hi:.3f} across equilibria)"
        write(
            f"  {a:24s} {p:.3f} [{r['nash_low']:.3f}, {r['nash_high']:.3f}]"
            f"  in the support in {100 * r['nash_support']:.0f} % of resamples{span}"
        )
    write(
        f"  (intervals: 95 % over {resamples}; the Nash equilibrium was unique in "
        f"{100 * boot['nash_unique']:.0f} % of them)"
    )
    why = {
        "CFR": "no solved state matched",
        "uniform": "the drawn act named no player or was not allowed",
    }
    for kind, c in [("CFR", c) for c in doc["cfr_agents"]] + [
        ("uniform", c) for c in doc["uniform_agents"]
    ]:
        sp = c["speeches"]
        write(
            f"  {c['agent']}: {sp.get('matched', 0)} of {sum(sp.values())} day speeches "
            f"followed its {kind} policy (the rest: {why[kind]}, the model chose)"
        )
        for rival, key in (("twin", "against_twin"), ("uniform_control", "against_uniform")):
            t = c.get(key)
            if t and t["win_rate"] is not None:
                lo, hi = t["ci95"]
                write(
                    f"  {c['agent']} vs {c[rival]}: won {t['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] "
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
        help="comma-separated agents [NAME=]MODEL[+cfr:FOLDER|+uniform][@BACKEND] or rules: "
        "MODEL an opponent model (none, dirichlet, gratr, ...), FOLDER a `werewolf solve` "
        "results folder whose CFR day policy picks the agent's tones and acts, +uniform "
        "picks them uniformly at random (the control), BACKEND its model (default --backend)",
    )
    p.add_argument(
        "--games",
        type=bounded_int(2, MAX_SIZE),
        default=20,
        help="games per pair, an even number: --games/2 deals (seeds), each played twice "
        "with the sides swapped (default 20)",
    )
    p.add_argument(
        "--bootstrap",
        type=bounded_int(1, 100_000),
        default=1000,
        help="seed-bootstrap resamples of the rating intervals (default 1000)",
    )
    p.add_argument(
        "--metagame-bootstrap",
        type=bounded_int(1, 100_000),
        default=METAGAME_BOOTSTRAP,
        help="seed-bootstrap resamples of the alpha-Rank and Nash intervals (default "
        f"{METAGAME_BOOTSTRAP})",
    )
    add_table_options(
        p,
        out="results/werewolf_tournament",
        seed_help="seed of deal 0 (deal k, games 2k and 2k+1 of every pair, uses seed+k) and "
        "of the bootstraps (default 0)",
    )
    p.set_defaults(func=run_tournament)
