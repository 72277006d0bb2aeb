"""The Werewolf arena: opponent models played against each other, pairwise, as GRATR does.

Follows the experiment of "GRATR: Zero-Shot Evidence Graph Retrieval-Augmented
Trustworthiness Reasoning" (Zhu, Li, Kong, Yang and Xu; Sect. 4.1): in each game of a pair (A, B) four players use each model; three of
one model's players hold the werewolf roles and three of the other's the
leader roles (witch, guard, seer); each model's fourth player is a villager.
Sides alternate: game i gives A the werewolf side when i is even. The model of
the winning side wins the game (a draw is won by nobody). Every seat asks the
same chat model; the models differ only in the opponent model (belief
provider, :mod:`games.werewolf.players.beliefs`) that fills the seat's prompts.

For another role set (``--preset arena``) the rule generalises: each model gets
half the seats; the werewolf-side model gets the werewolves and villagers to
fill its half, the leader-side model the special roles and the other villagers.

Reported per pair (JSON, CSV, bar chart):

* **TWR / WWR / LWR** — total, werewolf-side and leader-side win rates of each
  model, with 95 % Wilson intervals.
* **Action scores** (GRATR Table 2): each player of the winning team gets 5;
  each day vote is *correct* when a village-side player votes for a werewolf
  or a werewolf votes for a non-werewolf, and scores +w / -w with w = 0.5
  (werewolf), 1.5 (witch, guard, seer; and the doctor, a leader of the
  ``arena`` preset), 1.0 (villager). Averaged per model and role per game.
* **Role identification** — for models that infer identities (``gratr``,
  ``dirichlet``, ``bayes``): at every consultation, the share of the other living players
  whose inferred identity is their true role (``unsure`` counts as wrong), per
  model, observer's team (``village`` / ``werewolf``: a werewolf knows its
  partners), round and true role of the player judged. Baselines infer none
  (null). The label is the likeliest role, or abstains (``unsure``) unless its
  odds grew at least ``IDENTITY_ODDS_RATIO`` (3) times over the model's prior
  with what is ruled out for certain (:func:`gt_llm.opponents.identity_label`).
* **Identification on probabilities** (``identification_scores`` in
  ``arena.json``, ``identification_scores.csv``) — every model, at every
  consultation, per living other player: the Brier score and log-loss of its
  role distribution against the true role, per observer side and true role,
  with Student-t 95 % intervals over games (n beside them), how often the true
  role got probability 0, a calibration table of the uncertain probabilities
  (the certain 0s and 1s counted apart), and the accuracy of the labels that
  named a role (certain facts and inferences apart). When ``--models`` has
  ``bayes``, every score's gap to it (model minus ``bayes``, paired by seed;
  :mod:`games.werewolf.arena.scoring`).
* **Deception** — per model and side, statements made and the share that
  contradicts the speaker's knowledge (``rules.is_deceptive_in_truth`` with the
  seer's checks up to that round).
* **Eq. 8's weight floor** (``eq8_floor``, GRATR seats only) — over the
  decisions of the model's seats: Eq. 8 combinations, how many had a chain
  weight raised to the floor (``bound``), how many of those combined two or
  more chains (``decisive``: only there does the floor change the result), and
  Eq. 9 updates skipped for a zero divisor (``skipped``).

* **Answer quality** (``quality`` per pair and in total in ``arena.json``, and
  the end-of-run lines) — parsed answers that repeat a value their
  prompt names, the largest share of one seat among night targets and votes,
  of one peer-analysis label and answer, the contradictions of a player's
  own knowledge, and how often the chosen player was listed first or second
  beside what a uniform choice gives (:mod:`games.werewolf.play.quality`).
  Results, not gates.

Resuming: every call goes through the SQLite cache (``--cache``, default
``OUT/llm_cache.sqlite``), so re-running a finished or interrupted arena replays
the finished games from the cache (the summary reports new and cached calls).
A game's log replaces the one of an earlier run only when the game finished: a
failed or interrupted game keeps its records as ``game_<i>.jsonl.partial`` and
leaves the old log as it was (:class:`~games.werewolf.play.log.GameLog`).
Each game's log (``OUT/logs/<A>_vs_<B>/game_<i>.jsonl``) holds the rules'
records and the belief providers' evidence (``belief_init``,
``belief_evidence``, ``belief_consult``), from which
:func:`~games.werewolf.arena.graph.rebuild_trust_graph` rebuilds a seat's GRATR graph at any step.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from games.engine.cli_options import Writer, result_settings, say
from games.engine.resources import WorkEstimate
from games.engine.results import model_label
from games.werewolf import rules
from games.werewolf.agents import Agent, distinct_backends, parse_agents
from games.werewolf.arena.matches import (
    ArenaGame,
    games_quality,
    model_pairs,
    play_arena_game,
    reference_judgments,
    summarize_pair,
    with_reference_gaps,
)
from games.werewolf.arena.report import _fmt_rate, fig_win_rates
from games.werewolf.arena.results import ArenaReport, PairSummary
from games.werewolf.arena.rows import csv_rows, score_lines, score_rows
from games.werewolf.arena.scoring import REFERENCE_MODEL
from games.werewolf.arena.table import SeatedAgent, check_seating
from games.werewolf.day.abstraction import Abstraction
from games.werewolf.deception.summary import pooled_summary
from games.werewolf.play.quality import quality_lines
from games.werewolf.players.beliefs import BeliefSettings
from games.werewolf.players.cfr_policy import DayPolicy, load_day_policy, uniform_day_policy
from games.werewolf.rules import Config
from gt_llm.cache import combined_stats
from gt_llm.chat import ChatModel, ChatRequest
from gt_llm.routing import RoutedModel, UnroutedRequest
from runs.results import ResultsDir

__all__ = [
    "add_arena_parser",
    "run_arena",
]


# --------------------------------------------------------------------------- the arena


def _check_arena_args(args: argparse.Namespace) -> tuple[Config, tuple[str, ...]]:
    """Every option, before the first model call (one-line errors naming the flag)."""
    config = check_table_args(args)
    models = tuple(a.name for a in arena_agents(args.models))
    from games.werewolf.estimate import check_games

    # Every pair's games are kept until the report: the size, before any call.
    check_games(len(model_pairs(models)) * args.games, flag="--games")
    return config, models


def arena_agents(text: str, *, flag: str = "--models", minimum: int = 2) -> tuple[Agent, ...]:
    """The agents of ``--models``: opponent-model names, or agents (:mod:`games.werewolf.agents`)."""
    return parse_agents(text, flag=flag, minimum=minimum)


def plain_models(agents: Sequence[Agent]) -> bool:
    """Whether every agent is a bare opponent model on ``--backend`` (GRATR's arena as it was)."""
    return all(
        a.opponent is not None
        and a.name == a.opponent
        and a.backend is None
        and a.policy is None
        and not a.uniform
        for a in agents
    )


def check_table_args(args: argparse.Namespace) -> Config:
    """The rules and belief options of an arena or tournament, checked (ValueError)."""
    from games.engine.cli_options import check_backend

    check_backend(args)
    overrides: dict[str, Any] = {}
    if args.max_rounds is not None:
        overrides["max_rounds"] = args.max_rounds
    if args.debate_turns is not None:
        overrides["debate_turns"] = args.debate_turns
    if args.roles:
        overrides["roles"] = rules.RoleSet.parse(args.roles)
    config = rules.preset(args.preset, **overrides)
    check_seating(config)
    BeliefSettings(k=args.k, top_k=args.top_k, threshold=args.threshold)
    return config


def load_policies(agents: Sequence[Agent], config: Config) -> dict[str, DayPolicy]:
    """Each CFR agent's day policy, read and checked against the game's roles (ValueError).

    A ``+uniform`` agent gets :func:`~games.werewolf.players.cfr_policy.uniform_day_policy`
    over the CFR agents' abstraction (the tones and act tokens they were solved
    with, when they share one; else the default abstraction), so the control
    draws from the same acts as the agents it controls for.
    """
    out: dict[str, DayPolicy] = {}
    for a in agents:
        if a.uniform or a.policy is None or a.opponent is None:
            continue
        policy = load_day_policy(a.policy, a.opponent)
        if dict(policy.roles) != config.roles.as_dict():
            raise ValueError(
                f"agent {a.name}: its policy was solved for roles {dict(policy.roles)}, "
                f"this game has {config.roles.as_dict()}; solve with the same --preset/--roles"
            )
        out[a.name] = policy
    solved = {(p.tones, p.acts) for p in out.values()}
    abstraction = Abstraction(*solved.pop()) if len(solved) == 1 else None
    for a in agents:
        if a.uniform and a.opponent is not None:
            out[a.name] = uniform_day_policy(config.roles.as_dict(), a.opponent, abstraction)
    return out


def prepare_agent_models(args: argparse.Namespace, agents: Sequence[Agent]) -> dict[str, ChatModel]:
    """One model per backend the agents call (default ``--backend``), checked, not yet cached.

    Each is :func:`games.engine.cli_options.prepare_model` of its spec; a failure
    closes the ones already loaded.
    """
    from games.engine.cli_options import prepare_models

    return prepare_models(args, distinct_backends(agents, args.backend))


def seat_agents(
    agents: Sequence[Agent],
    models: Mapping[str, ChatModel],
    policies: Mapping[str, DayPolicy],
    default_backend: str,
) -> dict[str, SeatedAgent]:
    """The agents with their (cached) models and policies, by name."""
    out = {}
    for a in agents:
        spec = a.backend_or(default_backend)
        out[a.name] = SeatedAgent(
            a, models[spec] if spec is not None else None, policies.get(a.name)
        )
    return out


def run_arena(args: argparse.Namespace, *, write: Writer | None = None) -> int:
    """``gt-llm werewolf arena``: every pair of ``--models``, ``--games`` games each."""
    write = write or say
    config, models = _check_arena_args(args)
    agents = arena_agents(args.models)
    from games.werewolf.estimate import pair_seatings
    from games.werewolf.options import show_estimate

    seatings = pair_seatings(config.num_players, [a.opponent for a in agents], args.games)
    total = len(model_pairs(models)) * args.games
    estimate = show_estimate(args, config, games=total, seatings=seatings)
    settings = BeliefSettings(k=args.k, top_k=args.top_k, threshold=args.threshold)
    extra = {} if plain_models(agents) else {"agents": [a.to_json(args.backend) for a in agents]}
    with agent_run(args, agents, config, estimate) as open_run:
        run, chat, seated = open_run(
            {
                "command": "werewolf arena",
                **result_settings(args, also_ignore=("werewolf_command",)),
                "config": config.as_dict(),
                "models": list(models),
                "beliefs": dataclasses.asdict(settings),
                **extra,
            }
        )
        start = time.perf_counter()
        summaries, every_game = play_pairs(args, run, chat, config, models, settings, seated=seated)
        return _report(
            args, run, chat, config, models, settings, summaries, every_game, start, write
        )


def _no_route(request: ChatRequest) -> str:
    raise UnroutedRequest(
        f"the arena's model of record answers nothing (task {request.task!r}); "
        "each game's table routes its seats' calls"
    )


#: ``open_run(settings) -> (results folder, chat, seated agents or None)``.
OpenRun = Callable[[dict[str, Any]], tuple[ResultsDir, ChatModel, "dict[str, SeatedAgent] | None"]]


@contextlib.contextmanager
def agent_run(
    args: argparse.Namespace, agents: Sequence[Agent], config: Config, estimate: WorkEstimate
) -> Iterator[OpenRun]:
    """Policies and models checked and loaded; ``open_run(settings)`` then opens ``--out``.

    Everything is validated before the folder is touched and before the first
    call (policies, backends and keys, the cache file, local workers' memory).
    ``open_run`` writes the manifest (``complete: false`` until the end: an
    identical re-run resumes from the cache, other settings are refused unless
    ``--force``), puts every model behind the cache and returns ``(run, chat,
    seated)``: ``chat`` answers for every seat (a
    :class:`~gt_llm.routing.RoutedModel` per game over the agents' backends, or
    the one ``--backend`` model when the agents are plain opponent models),
    ``seated`` the agents by name (None for plain opponent models). The models
    are closed at the end, and the folder's lock freed (a run that did not
    finish keeps ``complete: false``).
    """
    from games.engine.cli_options import attach_caches, check_local_run, open_results_dir
    from games.werewolf.estimate import CALL_SHAPE

    if all(a.rules for a in agents):
        raise ValueError("give at least one agent that calls a model (not only rules)")
    policies = load_policies(agents, config)
    models = prepare_agent_models(args, agents)
    opened: list[ResultsDir] = []
    try:
        for m in models.values():
            check_local_run(args, m, estimate, CALL_SHAPE)

        def open_run(
            settings: dict[str, Any],
        ) -> tuple[ResultsDir, ChatModel, dict[str, SeatedAgent] | None]:
            first = next(iter(models.values()), None)
            # Game logs go to logs/<A>_vs_<B>/: a link or a file there is refused first.
            run = open_results_dir(args, settings, first, folders=("logs",))
            opened.append(run)
            attach_caches(args, models)
            if plain_models(agents):
                return run, models[args.backend], None
            seated = seat_agents(agents, models, policies, args.backend)
            # Names the backends in reports; each game's table routes its own seats' calls.
            chat = RoutedModel(models, _no_route)
            return run, chat, seated

        yield open_run
    finally:
        for run in opened:
            run.close()
        for m in models.values():
            m.close()


def call_counts(chat: ChatModel) -> tuple[int, int] | None:
    """``(new, cached)`` calls of a cached model, summed over a routed model's backends."""
    stats = combined_stats(chat)
    return None if stats is None else (stats.misses, stats.hits)


def play_pairs(
    args: argparse.Namespace,
    run: ResultsDir,
    chat: ChatModel,
    config: Config,
    models: Sequence[str],
    settings: BeliefSettings,
    *,
    seated: Mapping[str, SeatedAgent] | None = None,
    mirrored: bool = False,
) -> tuple[list[PairSummary], list[ArenaGame]]:
    """Every pair of ``models`` (agent names with ``seated``), ``--games`` games each.

    Game i of a pair gives its first agent the werewolf side when i is even; its
    log is ``logs/<A>_vs_<B>/game_<i>.jsonl``. Game i uses seed ``--seed + i``
    (the arena), or with ``mirrored`` seed ``--seed + i // 2`` (the tournament):
    games 2k and 2k + 1 are then one deal played twice, the sides swapped, and
    ``--games`` must be even.
    When one of ``models`` is the reference model (``bayes``), every model's
    identification scores carry their gap to it
    (:func:`~games.werewolf.arena.matches.with_reference_gaps`).
    On a remote backend several games are played at a time, their calls in
    flight bounded by ``--concurrency`` (:mod:`games.werewolf.side_by_side`);
    the results do not depend on how many.
    """
    from tqdm.auto import tqdm

    from games.werewolf.play.runner import partial_path
    from games.werewolf.side_by_side import games_at_once, run_all

    if mirrored and args.games % 2:
        raise ValueError(f"--games: mirrored deals need an even number, got {args.games}")
    pairs = model_pairs(models)
    # Every log listed (and its folder made) before any game starts: --force clears them.
    items = []
    for a, b in pairs:
        for i in range(args.games):
            name = f"logs/{a}_vs_{b}/game_{i:04d}.jsonl"
            log = run.place(name)
            run.record(partial_path(name).as_posix())
            items.append((a, b, i, log))

    def play(item: tuple[str, str, int, Any]) -> tuple[ArenaGame, Any]:
        a, b, i, log = item
        wolf, lead = (a, b) if i % 2 == 0 else (b, a)
        return play_arena_game(
            config,
            chat,
            wolf_model=wolf,
            leader_model=lead,
            # Mirrored: one deal (its seed) per two games, each side once.
            seed=args.seed + (i // 2 if mirrored else i),
            index=i,
            settings=settings,
            log=log,
            max_concurrency=args.concurrency,
            log_prompts=args.log_prompts,
            structured=args.structured == "on",
            agents=seated,
        )

    jobs = games_at_once(chat, len(items), args.jobs)
    with tqdm(total=len(items), desc="arena games", disable=args.no_progress) as bar:
        played = run_all(play, items, jobs, on_done=lambda: bar.update(1))
    summaries = []
    every_game: list[ArenaGame] = []
    pair_games: list[list[ArenaGame]] = []
    for k, (a, b) in enumerate(pairs):
        part = played[k * args.games : (k + 1) * args.games]
        games = [g for g, _ in part]
        every_game.extend(games)
        pair_games.append(games)
        summary = summarize_pair(games, a, b)
        summaries.append(
            dataclasses.replace(summary, deception_analyses=pooled_summary([d for _, d in part]))
        )
    if REFERENCE_MODEL in models:
        reference = reference_judgments(pair_games)
        summaries = [
            with_reference_gaps(s, games, reference)
            for s, games in zip(summaries, pair_games, strict=True)
        ]
    return summaries, every_game


def _report(args, run, chat, config, models, settings, summaries, every_game, start, write) -> int:
    from runs.atomic import finite_or_none

    out = run.path
    cstats = call_counts(chat)
    report = ArenaReport(
        backend=chat.spec,
        stand_in=not model_label(chat).is_llm,
        note=model_label(chat).label,
        preset=args.preset,
        config=config.as_dict(),
        models=tuple(models),
        games_per_pair=args.games,
        seeds=(args.seed, args.seed + args.games - 1),
        settings=dataclasses.asdict(settings),
        pairs=tuple(summaries),
        llm_calls={
            "new": cstats[0] if cstats else None,
            "cached": cstats[1] if cstats else None,
        },
        seconds=time.perf_counter() - start,
        quality=games_quality(every_game),
    )
    run.write_json("arena.json", finite_or_none(report.to_json()))
    run.write_csv("arena.csv", csv_rows(summaries))
    run.write_csv("identification_scores.csv", score_rows(summaries))
    # The same chart the notebook shows (with 95 % intervals), written atomically.
    with run.atomic_path("arena.png") as tmp:
        fig_win_rates(report).savefig(tmp, dpi=110)
    run.finish()
    for s in summaries:
        a, b = s.pair
        write(f"{a} vs {b}: {s.games} games ({s.draws} draws), {report.note}")
        for m in (a, b):
            row = s.models[m]
            write(f"  {m:11s} " + "  ".join(f"{k} {_fmt_rate(r)}" for k, r in row.rates.items()))
            fl = row.eq8_floor
            if fl:
                write(
                    f"  {'':11s} Eq. 8 floor bound in {fl['bound']} of {fl['combinations']} "
                    f"combinations ({fl['decisive']} with several chains); "
                    f"Eq. 9 skipped {fl['skipped']} times (zero divisor)"
                )
            for side, sc in (row.scores or {}).items():
                for line in score_lines(side, sc.overall):
                    write(f"  {'':11s} {line}")
                cc = sc.calibration_certain
                if cc is not None:
                    write(
                        f"  {'':11s}   certain probabilities (not in the calibration table): "
                        f"p = 1: {cc.ones} ({cc.ones_right} right), "
                        f"p = 0: {cc.zeros} ({cc.zeros_right} right)"
                    )
        if s.quality is not None:  # the pair's answers, beside its results
            for line in quality_lines(s.quality):
                write(line)
    if report.quality is not None and len(summaries) > 1:
        write(f"all {len(summaries)} pairs:")
        for line in quality_lines(report.quality):
            write(line)
    if cstats is not None:
        write(f"LLM calls: {cstats[0]} new, {cstats[1]} from the cache")
    write(
        f"results in {out / 'arena.json'}, {out / 'arena.csv'}, "
        f"{out / 'identification_scores.csv'}, {out / 'arena.png'}"
    )
    return 0


# --------------------------------------------------------------------------- CLI


def add_arena_parser(sub: argparse._SubParsersAction) -> None:
    """Adds ``arena`` to the ``werewolf`` command group."""
    from gt_llm.argtypes import MAX_SIZE, bounded_int, non_empty

    p = sub.add_parser(
        "arena",
        help="opponent models (or agents) against each other, pairwise (GRATR's experiment)",
        description=__doc__,
    )
    p.add_argument("--preset", choices=sorted(rules.PRESETS), default="gratr")
    p.add_argument(
        "--models",
        type=non_empty,
        default="gratr,none",
        help="comma-separated opponent models, or agents [NAME=]MODEL[+cfr:FOLDER|+uniform][@BACKEND] "
        "or rules (see `werewolf tournament --help`); every pair plays, one per side "
        "(default gratr,none)",
    )
    p.add_argument(
        "--games",
        type=bounded_int(1, MAX_SIZE),
        default=50,
        help="games per pair (default 50; refused when they cannot fit in memory)",
    )
    add_table_options(p, out="results/werewolf_arena")
    p.set_defaults(func=run_arena)


def add_table_options(
    p: argparse.ArgumentParser,
    *,
    out: str,
    seed_help: str = "seed of game 0 of every pair (game i uses seed+i; default 0)",
) -> None:
    """The rules, belief and shared options of ``werewolf arena`` and ``tournament``."""
    from games.engine.cli_options import add_common_options
    from games.werewolf.options import MAX_DEBATE_TURNS, MAX_HISTORY, MAX_ROUNDS, roles_arg
    from games.werewolf.side_by_side import add_jobs_option
    from gt_llm.argtypes import bounded_float, bounded_int

    p.add_argument(
        "--roles", type=roles_arg, default=None, help="role counts, e.g. werewolf:3,seer:1,..."
    )
    p.add_argument(
        "--debate-turns",
        type=bounded_int(0, MAX_DEBATE_TURNS),
        default=None,
        help=f"speeches per day (0 to {MAX_DEBATE_TURNS})",
    )
    p.add_argument(
        "--max-rounds",
        type=bounded_int(1, MAX_ROUNDS),
        default=None,
        help=f"round limit, then a draw (1 to {MAX_ROUNDS})",
    )
    p.add_argument("--log-prompts", action="store_true", help="log every call's messages too")
    p.add_argument(
        "--k",
        type=bounded_int(1, MAX_HISTORY),
        default=15,
        help=f"history window K (default 15, at most {MAX_HISTORY})",
    )
    p.add_argument(
        "--top-k",
        type=bounded_int(1, MAX_HISTORY),
        default=5,
        help=f"messages RAG retrieves (default 5, at most {MAX_HISTORY})",
    )
    p.add_argument(
        "--threshold",
        type=bounded_float(0, 1),
        default=0.5,
        help="Dirichlet: minimum judgment confidence (0-1) to count (default 0.5)",
    )
    add_jobs_option(p)
    add_common_options(
        p,
        out=out,
        seed_help=seed_help,
    )
