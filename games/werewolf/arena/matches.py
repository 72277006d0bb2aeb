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
  ``dirichlet``): at every consultation, the share of the other living players
  whose inferred identity is their true role (``unsure`` counts as wrong), per
  model, observer's team (``village`` / ``werewolf``: a werewolf knows its
  partners), round and true role of the player judged. Baselines infer none
  (null).
* **Deception** — per model and side, statements made and the share that
  contradicts the speaker's knowledge (``rules.is_deceptive_in_truth`` with the
  seer's checks up to that round).

Resuming: every call goes through the SQLite cache (``--cache``, default
``OUT/llm_cache.sqlite``), so re-running a finished or interrupted arena replays
the finished games from the cache (the summary reports new and cached calls).
Each game's log (``OUT/logs/<A>_vs_<B>/game_<i>.jsonl``) holds the rules'
records and the belief providers' evidence (``belief_init``,
``belief_evidence``, ``belief_consult``), from which
:func:`rebuild_trust_graph` rebuilds a seat's GRATR graph at any step.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from games.engine.cli_options import Writer, say
from games.werewolf import rules
from games.werewolf.deception.tracking import DeceptionSummary, pooled_summary
from games.werewolf.play import runner
from games.werewolf.play.runner import Emit
from games.werewolf.players import prompts
from games.werewolf.players.beliefs import (
    BeliefSettings,
    TableBeliefs,
    check_model_name,
    make_seat_beliefs,
)
from games.werewolf.players.table import LLMTable, model_label
from games.werewolf.rules import VILLAGERS, WEREWOLVES, Config, Knowledge

if TYPE_CHECKING:
    from gt_llm.opponents import GratrModel

__all__ = [
    "ACTION_WEIGHTS",
    "ArenaGame",
    "WIN_BONUS",
    "action_scores",
    "add_arena_parser",
    "add_graph_parser",
    "fig_identification",
    "fig_win_rates",
    "game_logs",
    "identification_by_round",
    "load_arena",
    "model_pairs",
    "parse_arena_args",
    "parse_models",
    "play_arena_game",
    "rebuild_trust_graph",
    "run_arena",
    "seat_models",
    "summarize_pair",
    "trust_graph_moments",
    "win_rate_markdown",
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
WOLF = "werewolf"


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


def check_seating(config: Config) -> None:
    """Raises ValueError unless the roles split into two halves as :func:`seat_models` needs."""
    n = config.num_players
    wolves = config.roles.werewolf
    special = n - wolves - config.roles.villager
    if n % 2 or wolves > n // 2 or special > n // 2:
        raise ValueError(
            f"werewolf arena --preset/--roles: {config.roles.as_dict()} cannot be split into two "
            "halves (one model: the werewolves and villagers, the other: the special roles and "
            "villagers); use an even player count with at most half werewolves and half leaders"
        )


def seat_models(
    roles: Sequence[str], wolf_model: str, leader_model: str, rng: np.random.Generator
) -> tuple[str, ...]:
    """Which model plays each seat, given the dealt roles (module docstring).

    The werewolf-side model gets every werewolf and, drawn with ``rng``, as many
    villagers as fill half the table; the leader-side model gets the rest.
    """
    n = len(roles)
    villagers = [p for p, r in enumerate(roles) if r == "villager"]
    need = n // 2 - sum(r == WOLF for r in roles)
    order = [villagers[i] for i in rng.permutation(len(villagers))]
    wolf_villagers = set(order[:need])
    return tuple(
        wolf_model if r == WOLF or p in wolf_villagers else leader_model
        for p, r in enumerate(roles)
    )


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
        correct)`` per judgment made at a consultation.
      statements: ``(round, speaker, deceptive in truth)`` per statement.
      log_path: The game's JSONL log.
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

    @property
    def winning_model(self) -> str | None:
        if self.winner == WEREWOLVES:
            return self.wolf_model
        if self.winner == VILLAGERS:
            return self.leader_model
        return None


class _ArenaTable(LLMTable):
    """The LLM table of one arena game: the seats' models are assigned after the deal.

    An :class:`~games.werewolf.players.table.LLMTable` (batched calls, deception
    analyses, history window, call log) whose belief providers are the seats'
    :class:`~games.werewolf.players.beliefs.TableBeliefs`. Before each decision every
    provider takes the seat's new private facts and announcements; after each
    step the queued statements and votes of all seats are extracted as one
    batch. The providers' records go to the log with the step (``state.num_steps``).
    """

    def __init__(
        self,
        chat: Any,
        config: Config,
        *,
        seed: int,
        wolf_model: str,
        leader_model: str,
        settings: BeliefSettings,
        max_concurrency: int | None,
        log_prompts: bool = False,
    ) -> None:
        super().__init__(
            chat,
            config,
            seed=seed,
            belief_factory=self._provider,
            history_limit=settings.k,
            max_concurrency=max_concurrency,
            log_prompts=log_prompts,
        )
        self.wolf_model = wolf_model
        self.leader_model = leader_model
        self.settings = settings
        self.seat_models: tuple[str, ...] = ()
        self.adapters: dict[int, TableBeliefs] = {}
        self.identification: list[tuple[str, str, int, str, bool]] = []

    def _provider(self, knowledge: Knowledge) -> TableBeliefs:
        return self.adapters[knowledge.player]

    def _assign(self, state: rules.GameState, emit: Emit) -> None:
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 0xA7E]))
        self.seat_models = seat_models(state.roles, self.wolf_model, self.leader_model, rng)
        for p, (name, role) in enumerate(zip(self.seat_models, state.roles, strict=True)):
            sb = make_seat_beliefs(name, self.config, p, role, self.settings, chat=self.model)
            self.adapters[p] = TableBeliefs(sb, self.model)
            emit(
                "belief_init",
                seat=p,
                model=name,
                role=role,
                settings=dataclasses.asdict(self.settings),
            )

    def _sync(self, state: rules.GameState, emit: Emit) -> None:
        self._run([a.flush() for a in self.adapters.values() if a.queue], emit)
        for p, a in self.adapters.items():
            for rec in a.records:
                body = {k: v for k, v in rec.items() if k != "type"}
                emit(rec["type"], seat=p, step=state.num_steps, **body)
            a.records.clear()
            for views in a.consults:
                for v in views:
                    q = int(v["player"].split()[-1]) - 1
                    if state.alive[q]:  # judgments of the living only
                        truth = state.roles[q]
                        team = "werewolf" if state.roles[p] == WOLF else "village"
                        ok = v["identity"] == truth
                        self.identification.append(
                            (self.seat_models[p], team, state.round, truth, ok)
                        )
            a.consults.clear()

    def decide(
        self, state: rules.GameState, requests: Sequence[runner.Request], emit: Emit
    ) -> list[rules.Action]:
        if not self.seat_models:
            self._assign(state, emit)
        for p, a in self.adapters.items():
            a.add_private(rules.knowledge(state, p).events)
        self._sync(state, emit)
        out = super().decide(state, requests, emit)
        self._sync(state, emit)
        return out

    def after_step(
        self,
        before: rules.GameState,
        moves: Sequence[tuple[int, rules.Action]],
        after: rules.GameState,
        emit: Emit,
    ) -> None:
        super().after_step(before, moves, after, emit)
        self._sync(after, emit)


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
) -> tuple[ArenaGame, DeceptionSummary]:
    """Plays one arena game (module docstring).

    Returns:
      What the reports need, and the game's deception summary.
    """
    check_model_name("play_arena_game: wolf_model", wolf_model)
    check_model_name("play_arena_game: leader_model", leader_model)
    check_seating(config)
    table = _ArenaTable(
        chat,
        config,
        seed=seed,
        wolf_model=wolf_model,
        leader_model=leader_model,
        settings=settings or BeliefSettings(),
        max_concurrency=max_concurrency,
        log_prompts=log_prompts,
    )
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
            statements=tuple(
                (s.round, s.speaker, bool(s.deceptive)) for s in table.tracker.statements
            ),
            log_path=str(log) if log is not None else None,
        )
        if glog is not None:
            glog.write("arena", **_game_dict(game))
    finally:
        if glog is not None:
            glog.close()
    return game, table.tracker.summary()


def _game_dict(g: ArenaGame) -> dict[str, Any]:
    d = dataclasses.asdict(g)
    d["winning_model"] = g.winning_model
    return d


# --------------------------------------------------------------------------- scores


def action_scores(game: ArenaGame) -> list[float]:
    """Each seat's action score (module docstring): 5 if its team won, ± per day vote."""
    scores = [WIN_BONUS if game.winner == rules.team_of(r) else 0.0 for r in game.roles]
    for _, voter, target in game.votes:
        role = game.roles[voter]
        wolf_target = game.roles[target] == WOLF
        correct = (not wolf_target) if role == WOLF else wolf_target
        w = ACTION_WEIGHTS[role]
        scores[voter] += w if correct else -w
    return scores


def _rate(k: int, n: int) -> dict[str, Any]:
    if n == 0:
        return {"wins": 0, "games": 0, "rate": None, "ci95": [None, None]}
    lo, hi = runner.wilson_interval(k, n)
    return {"wins": k, "games": n, "rate": k / n, "ci95": [lo, hi]}


def summarize_pair(games: Sequence[ArenaGame], a: str, b: str) -> dict[str, Any]:
    """Win rates, action scores, identification and deception of one pair's games."""
    out: dict[str, Any] = {"pair": [a, b], "games": len(games), "models": {}}
    out["draws"] = sum(g.winner == rules.DRAW for g in games)
    for m in (a, b):
        wolf = [g for g in games if g.wolf_model == m]
        lead = [g for g in games if g.leader_model == m]
        wins = lambda gs, m=m: sum(g.winning_model == m for g in gs)  # noqa: E731
        by_role: dict[str, list[float]] = defaultdict(list)
        for g in games:
            for p, s in enumerate(action_scores(g)):
                if g.seats[p] == m:
                    by_role[g.roles[p]].append(s)
        ident: dict[str, dict[str, dict[str, list[bool]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        for g in games:
            for model, team, rnd, truth, ok in g.identification:
                if model == m:
                    ident[team][str(rnd)][truth].append(ok)
        dec: dict[str, list[bool]] = defaultdict(list)
        for g in games:
            for _rnd, speaker, deceptive in g.statements:
                if g.seats[speaker] == m:
                    side = "werewolf" if g.wolf_model == m else "leader"
                    dec[side].append(deceptive)
        out["models"][m] = {
            "TWR": _rate(wins(games), len(games)),
            "WWR": _rate(wins(wolf), len(wolf)),
            "LWR": _rate(wins(lead), len(lead)),
            "action_scores": {
                r: {"mean": float(np.mean(v)), "n": len(v)} for r, v in sorted(by_role.items())
            },
            "identification": (
                {
                    team: {
                        rnd: {
                            r: {"accuracy": float(np.mean(v)), "n": len(v)}
                            for r, v in sorted(per.items())
                        }
                        for rnd, per in sorted(rounds.items(), key=lambda kv: int(kv[0]))
                    }
                    for team, rounds in sorted(ident.items())
                }
                if ident
                else None
            ),
            "deception": {
                side: {
                    "statements": len(v),
                    "deceptive": int(sum(v)),
                    "rate": float(np.mean(v)) if v else None,
                }
                for side, v in sorted(dec.items())
            },
        }
    return out


# --------------------------------------------------------------------------- the arena


def _check_arena_args(args: argparse.Namespace) -> tuple[Config, tuple[str, ...]]:
    """Every option, before the first model call (one-line errors naming the flag)."""
    from games.engine.cli_options import check_backend

    check_backend(args)
    models = parse_models(args.models)
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
    summary = Path(args.out) / "arena.json"
    if summary.exists() and not args.force:
        raise ValueError(
            f"werewolf arena: {summary} exists; pass --force to overwrite (the cache "
            "replays finished games)"
        )
    return config, models


def run_arena(args: argparse.Namespace, *, write: Writer | None = None) -> int:
    """``gt-llm werewolf arena``: every pair of ``--models``, ``--games`` games each."""
    from tqdm.auto import tqdm

    from games.engine.cli_options import load_model_from_args, open_results_dir
    from solvers.writers import write_csv, write_json

    write = write or say
    config, models = _check_arena_args(args)
    settings = BeliefSettings(k=args.k, top_k=args.top_k, threshold=args.threshold)
    # The manifest (complete: false until the end) and the refusal of a folder holding
    # another arena's results come before the first model call.
    run = open_results_dir(
        args,
        {
            "command": "werewolf arena",
            "preset": args.preset,
            "config": config.as_dict(),
            "models": list(models),
            "games": args.games,
            "seed": args.seed,
            "beliefs": dataclasses.asdict(settings),
        },
    )
    out = run.path
    chat = load_model_from_args(args)
    pairs = model_pairs(models)
    start = time.perf_counter()
    summaries = []
    bar = tqdm(total=len(pairs) * args.games, desc="arena games", disable=args.no_progress)
    try:
        for a, b in pairs:
            games, deception = [], []
            logs = out / "logs" / f"{a}_vs_{b}"
            for i in range(args.games):
                wolf, lead = (a, b) if i % 2 == 0 else (b, a)
                game, dec = play_arena_game(
                    config,
                    chat,
                    wolf_model=wolf,
                    leader_model=lead,
                    seed=args.seed + i,
                    index=i,
                    settings=settings,
                    log=logs / f"game_{i:04d}.jsonl",
                    max_concurrency=args.concurrency,
                    log_prompts=args.log_prompts,
                )
                games.append(game)
                deception.append(dec)
                bar.update(1)
            summary = summarize_pair(games, a, b)
            summary["deception_analyses"] = pooled_summary(deception).to_dict()
            summaries.append(summary)
    finally:
        bar.close()
    cstats = chat.stats() if hasattr(chat, "stats") else None
    report = {
        "backend": chat.spec,
        "stand_in": chat.backend == "scripted",
        "note": model_label(chat),
        "preset": args.preset,
        "config": config.as_dict(),
        "models": list(models),
        "games_per_pair": args.games,
        "seeds": [args.seed, args.seed + args.games - 1],
        "settings": dataclasses.asdict(settings),
        "pairs": summaries,
        "llm_calls": {
            "new": cstats.misses if cstats else None,
            "cached": cstats.hits if cstats else None,
        },
        "seconds": time.perf_counter() - start,
    }
    write_json(out / "arena.json", report)
    write_csv(out / "arena.csv", _csv_rows(summaries))
    # The same chart the notebook shows (with 95 % intervals), written atomically.
    with run.atomic_path("arena.png") as tmp:
        fig_win_rates(report).savefig(tmp, dpi=110)
    run.finish()
    for s in summaries:
        a, b = s["pair"]
        write(f"{a} vs {b}: {s['games']} games ({s['draws']} draws), {model_label(chat)}")
        for m in (a, b):
            row = s["models"][m]
            write(
                f"  {m:11s} " + "  ".join(f"{k} {_fmt_rate(row[k])}" for k in ("TWR", "WWR", "LWR"))
            )
    if cstats is not None:
        write(f"LLM calls: {cstats.misses} new, {cstats.hits} from the cache")
    write(f"results in {out / 'arena.json'}, {out / 'arena.csv'}, {out / 'arena.png'}")
    return 0


def _fmt_rate(r: Mapping[str, Any]) -> str:
    if r["rate"] is None:
        return "n/a"
    lo, hi = r["ci95"]
    return f"{r['rate']:.2f} [{lo:.2f}, {hi:.2f}]"


def _csv_rows(summaries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for s in summaries:
        a, b = s["pair"]
        for m in (a, b):
            row = s["models"][m]
            r: dict[str, Any] = {"pair": f"{a} vs {b}", "model": m, "games": s["games"]}
            for k in ("TWR", "WWR", "LWR"):
                r[k] = row[k]["rate"]
                r[f"{k}_lo"], r[f"{k}_hi"] = row[k]["ci95"]
            for role in ("werewolf", "witch", "guard", "seer", "doctor", "villager"):
                sc = row["action_scores"].get(role)
                r[f"score_{role}"] = sc["mean"] if sc else None
            rows.append(r)
    return rows


def rebuild_trust_graph(records: Sequence[Mapping[str, Any]], player: int, step: int) -> GratrModel:
    """The GRATR model of ``player`` (seat id) after the log's records up to ``step``.

    Replays the seat's ``belief_evidence`` and ``belief_consult`` records with
    ``step <= step`` on a fresh model built from the ``belief_init`` record.

    Raises:
      ValueError: not an arena log, the seat has no GRATR model, or a bad step.
    """
    from gt_llm.opponents import Evidence

    if not records or records[0].get("type") != "header":
        raise ValueError("werewolf graph: the log does not start with a header record")
    config = Config.from_dict(records[0]["config"])
    if not 0 <= player < config.num_players:
        raise ValueError(f"werewolf graph --player: must be a seat in 0..{config.num_players - 1}")
    if step < 0:
        raise ValueError("werewolf graph --step: must be >= 0")
    init = next(
        (r for r in records if r.get("type") == "belief_init" and r["seat"] == player), None
    )
    if init is None:
        raise ValueError(
            "werewolf graph: the log has no belief records; use a log written by "
            "gt-llm werewolf arena"
        )
    if init["model"] != "gratr":
        raise ValueError(
            f"werewolf graph --player: seat {player} used the {init['model']!r} model; "
            "pick a seat that used gratr"
        )
    beliefs = make_seat_beliefs(
        "gratr", config, player, init["role"], BeliefSettings(**init["settings"])
    )
    model = beliefs.model
    for r in records:
        if r.get("seat") != player or int(r.get("step", -1)) > step:
            continue
        if r["type"] == "belief_evidence":
            model = model.observe_all(Evidence(**e) for e in r["evidence"])
        elif r["type"] == "belief_consult":
            model = model.consult(subjects=r["subjects"]).model
    return model


def run_graph(args: argparse.Namespace, *, write: Writer | None = None) -> int:
    """``gt-llm werewolf graph LOG --player P --step S --out FILE`` (.png/.svg/.json/.graphml)."""
    from gt_llm.opponents import draw_trust_graph, write_trust_graph_json
    from gt_llm.opponents.gratr import write_trust_graph_graphml

    write = write or say
    suffix = Path(args.out).suffix.lower()
    if suffix not in (".png", ".svg", ".pdf", ".json", ".graphml"):
        raise ValueError(
            "werewolf graph --out: end the file name in .png, .svg, .pdf, .json or .graphml"
        )
    if not Path(args.log).exists():
        raise ValueError(f"werewolf graph: no such log {args.log}")
    records = runner.read_log(args.log)
    model = rebuild_trust_graph(records, args.player, args.step)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".json":
        write_trust_graph_json(model, args.out)
    elif suffix == ".graphml":
        write_trust_graph_graphml(model, args.out)
    else:
        draw_trust_graph(
            model,
            args.out,
            title=f"{prompts.player_name(args.player)}'s trust graph at step {args.step}",
        )
    write(f"trust graph of seat {args.player} at step {args.step} written to {args.out}")
    return 0


# --------------------------------------------------------------------------- reading results


def parse_arena_args(argv: Sequence[str]) -> argparse.Namespace:
    """The ``arena`` command's options from an argument list (for scripts and notebooks).

    Example: ``run_arena(parse_arena_args(["--games", "2", "--out", "results/a"]))``.
    """
    parser = argparse.ArgumentParser(prog="gt-llm werewolf")
    add_arena_parser(parser.add_subparsers())
    return parser.parse_args(["arena", *argv])


def load_arena(out: str | Path) -> dict[str, Any]:
    """The report (``arena.json``, written last but the CSV and figure) of an arena folder.

    Raises:
      solvers.results.ResultsError: the file is missing or not valid JSON (names the fix).
    """
    from solvers.results import read_json

    return read_json(Path(out) / "arena.json", rerun="gt-llm werewolf arena")


def game_logs(
    out: str | Path, *, model: str | None = None, longest_first: bool = False
) -> list[Path]:
    """The game logs of an arena folder, pair by pair; only pairs with ``model`` if given.

    ``longest_first``: order by rounds played, most first (ties in folder order),
    e.g. to show a trust graph that had time to grow.
    """
    logs = sorted((Path(out) / "logs").glob("*_vs_*/game_*.jsonl"))
    logs = [p for p in logs if model is None or model in p.parent.name.split("_vs_")]
    if longest_first:
        # The arena record (the log's last line) holds the rounds played.
        rounds = {p: int((runner.read_log(p) or [{}])[-1].get("rounds", 0)) for p in logs}
        logs.sort(key=lambda p: -rounds[p])
    return logs


def win_rate_markdown(report: Mapping[str, Any]) -> str:
    """TWR / WWR / LWR of every model of every pair with 95 % Wilson intervals (Markdown)."""
    lines = [
        f"**Werewolf arena win rates** (95 % Wilson intervals), {report['preset']} preset, "
        f"{report['games_per_pair']} games per pair — model: {report['note']}",
        "",
        "| pair | opponent model | games | TWR | WWR | LWR |",
        "|---|---|---|---|---|---|",
    ]
    for s in report["pairs"]:
        a, b = s["pair"]
        for m in (a, b):
            row = s["models"][m]
            rates = " | ".join(_fmt_rate(row[k]) for k in ("TWR", "WWR", "LWR"))
            lines.append(f"| {a} vs {b} | {m} | {s['games']} | {rates} |")
    return "\n".join(lines) + "\n"


def fig_win_rates(report: Mapping[str, Any]) -> Figure:
    """One panel per pair: each model's TWR / WWR / LWR (%) with 95 % Wilson intervals."""
    from solvers.plots import plot_grouped_bars

    summaries = report["pairs"]
    ncols = min(3, len(summaries))
    nrows = -(-len(summaries) // ncols)
    fig = Figure(figsize=(4.4 * ncols, 3.6 * nrows + 0.6))
    axes = np.asarray(fig.subplots(nrows, ncols, squeeze=False))
    for ax in axes.flat[len(summaries) :]:
        ax.set_axis_off()
    kinds = ("TWR", "WWR", "LWR")
    for ax, s in zip(axes.flat, summaries, strict=False):
        a, b = s["pair"]
        series, intervals = {}, {}
        for m in (a, b):
            rows = [s["models"][m][k] for k in kinds]
            # No game on a side: no rate (NaN draws no bar rather than a false 0).
            series[m] = [100 * r["rate"] if r["rate"] is not None else np.nan for r in rows]
            intervals[m] = tuple(
                [100 * r["ci95"][j] if r["ci95"][j] is not None else np.nan for r in rows]
                for j in (0, 1)
            )
        plot_grouped_bars(ax, list(kinds), series, fmt="%.0f", intervals=intervals)
        ax.set_ylim(0, 115)
        ax.set_ylabel("win rate (%)")
        ax.set_title(f"{a} vs {b} ({s['games']} games)", fontsize=9)
    fig.suptitle(
        f"Werewolf arena win rates (95 % Wilson intervals)\nmodel: {report['note']}", fontsize=9
    )
    fig.tight_layout()
    return fig


def identification_by_round(
    report: Mapping[str, Any],
) -> dict[str, list[tuple[int, float, int]]]:
    """Role-identification accuracy per round, per model and observer's team.

    Pools every pair the model played and every true role (weighted by the
    number of judgments). Keys ``"<model>, <team> observers"``; values
    ``(round, accuracy, judgments)`` in round order. Models that infer no
    identities (baselines) are absent.
    """
    pooled: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for s in report["pairs"]:
        for m, row in s["models"].items():
            for team, rounds in (row["identification"] or {}).items():
                for rnd, roles in rounds.items():
                    acc = pooled[f"{m}, {team} observers"][int(rnd)]
                    for cell in roles.values():
                        acc[0] += cell["accuracy"] * cell["n"]
                        acc[1] += cell["n"]
    return {
        key: [(r, ok / n, int(n)) for r, (ok, n) in sorted(by_round.items()) if n]
        for key, by_round in sorted(pooled.items())
    }


def fig_identification(report: Mapping[str, Any]) -> Figure:
    """Role-identification accuracy over the days, per model and observer's team."""
    data = identification_by_round(report)
    fig = Figure(figsize=(7, 4.2))
    ax = fig.subplots()
    styles = ("-", "--", "-.", ":")
    models = list(dict.fromkeys(key.split(",")[0] for key in data))
    for k, (key, points) in enumerate(data.items()):
        model, team = key.split(", ")
        # Equal accuracies would hide one line under another: shift each series a little
        # along x and give every model its own line style, every team its own marker.
        shift = 0.04 * (k - (len(data) - 1) / 2)
        ax.plot(
            [r + shift for r, _, _ in points],
            [100 * a for _, a, _ in points],
            linestyle=styles[models.index(model) % len(styles)],
            marker="o" if team.startswith("village") else "s",
            label=key,
        )
    if data:
        ax.legend(fontsize=8)
        ax.set_xticks(sorted({r for pts in data.values() for r, _, _ in pts}))
    else:
        ax.set_title("no model inferred identities (only gratr and dirichlet do)", fontsize=9)
    ax.set_ylim(-5, 105)
    ax.set_xlabel("day (round)")
    ax.set_ylabel("identities inferred correctly (%)")
    ax.grid(True, alpha=0.3)
    fig.suptitle(
        f"Role identification of the living players at each consultation\nmodel: {report['note']}",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


def trust_graph_moments(
    log: str | Path, out_dir: str | Path, *, player: int | None = None
) -> list[Path]:
    """A GRATR seat's trust graph after day 1's votes and at the end of the game, as PNGs.

    Args:
      log: An arena game log (``OUT/logs/<A>_vs_<B>/game_<i>.jsonl``).
      out_dir: Folder for ``trust_graph_seat<P>_step<S>.png``.
      player: The seat (default: the first village-side GRATR seat, else the first GRATR seat).

    Returns:
      The image paths, earlier moment first (one path if the seat has one step).

    Raises:
      ValueError: the log has no GRATR seat (or as :func:`rebuild_trust_graph`).
    """
    from gt_llm.opponents import draw_trust_graph

    records = runner.read_log(log)
    inits = [r for r in records if r.get("type") == "belief_init" and r["model"] == "gratr"]
    if not inits:
        raise ValueError(f"trust_graph_moments: {log} has no GRATR seat; use a gratr pair's log")
    if player is None:
        village = [r for r in inits if r["role"] != WOLF]
        player = int((village or inits)[0]["seat"])
    role = next((r["role"] for r in inits if r["seat"] == player), "?")
    steps = sorted(
        {
            int(r["step"])
            for r in records
            if r.get("seat") == player and r["type"] in ("belief_evidence", "belief_consult")
        }
    )
    if not steps:
        raise ValueError(f"trust_graph_moments: seat {player} has no belief records in {log}")
    # The round of a step: that of the last action at or before it.
    rounds = {int(r["step"]): int(r["round"]) for r in records if r.get("type") == "action"}

    def round_of(step: int) -> int:
        return max(((s, r) for s, r in rounds.items() if s <= step), default=(0, 1))[1]

    # Day 1's votes reach the graph at the first step of round 2; if that is the
    # game's last step, the moment before it instead.
    later = [s for s in steps if round_of(s) >= 2]
    if later and later[0] != steps[-1]:
        first, when = later[0], "after day 1's votes"
    else:
        first = steps[-2] if len(steps) > 1 else steps[-1]
        when = f"round {round_of(first)}"
    moments = {first: when, steps[-1]: "end of the game"}
    label = records[0].get("model_label", records[0].get("backend", "?"))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for step, when in moments.items():
        path = out_dir / f"trust_graph_seat{player}_step{step}.png"
        draw_trust_graph(
            rebuild_trust_graph(records, player, step),
            path,
            title=f"{prompts.player_name(player)} ({role}, GRATR): step {step}, {when}\n"
            f"model: {label}",
        )
        paths.append(path)
    return paths


# --------------------------------------------------------------------------- CLI


def add_arena_parser(sub: argparse._SubParsersAction) -> None:
    """Adds ``arena`` to the ``werewolf`` command group."""
    from games.engine.cli_options import add_common_options
    from gt_llm.cli import positive_int

    p = sub.add_parser(
        "arena",
        help="opponent models against each other, pairwise (GRATR's experiment)",
        description=__doc__,
    )
    p.add_argument("--preset", choices=sorted(rules.PRESETS), default="gratr")
    p.add_argument(
        "--models",
        default="gratr,none",
        help="comma-separated opponent models; every pair plays (default gratr,none)",
    )
    p.add_argument("--games", type=positive_int, default=50, help="games per pair (default 50)")
    p.add_argument("--roles", default=None, help="role counts, e.g. werewolf:3,seer:1,...")
    p.add_argument("--debate-turns", type=int, default=None, help="speeches per day")
    p.add_argument("--max-rounds", type=positive_int, default=None, help="round limit (draw)")
    p.add_argument("--log-prompts", action="store_true", help="log every call's messages too")
    p.add_argument("--k", type=positive_int, default=15, help="history window K (default 15)")
    p.add_argument("--top-k", type=positive_int, default=5, help="messages RAG retrieves")
    p.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="Dirichlet: minimum judgment confidence (0-1) to count (default 0.5)",
    )
    add_common_options(
        p,
        out="results/werewolf_arena",
        seed_help="seed of game 0 of every pair (game i uses seed+i; default 0)",
    )
    p.set_defaults(func=run_arena)


def add_graph_parser(sub: argparse._SubParsersAction) -> None:
    """Adds ``graph`` to the ``werewolf`` command group."""
    p = sub.add_parser(
        "graph", help="a seat's GRATR trust graph at a step of an arena log (draw or export)"
    )
    p.add_argument("log", help="a JSONL game log written by gt-llm werewolf arena")
    p.add_argument("--player", type=int, required=True, help="seat id (0-based)")
    p.add_argument("--step", type=int, required=True, help="the game step (log 'step')")
    p.add_argument("--out", required=True, help="FILE.png/.svg/.pdf, FILE.json or FILE.graphml")
    p.set_defaults(func=run_graph)
