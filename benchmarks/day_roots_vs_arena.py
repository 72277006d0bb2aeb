"""The day study's roots against the arena: each seat's opponent model at the start of every day.

Plays the arena on the scripted stand-in (rule-based answers, not an LLM), as
``gt-llm werewolf arena --preset gratr --models gratr,dirichlet,none --games 30
--backend scripted`` does: every pair of models, ``--games`` games each, game
i with seed ``--seed + i`` and the pair's first model on the werewolf side
when i is even (3 pairs x 30 = 90 games by default). During each game the
arena's own per-seat models are kept at the start of every day's debate
(:class:`~games.werewolf.arena.table.ArenaTable` after the seats took the
day's facts, before the first bid).

What is compared. The day study does not build its roots from an arena log:
``werewolf solve`` replays a *seeded rule-based game* to the day and builds
every living seat's model as an arena seat's
(:func:`games.werewolf.day.roots.root_step`). The honest equivalent is the
same root builder applied to the arena game's own records
(:func:`games.werewolf.day.roots.records_deal_step`: the game's chance and
action records, the statements' words from its ``deception_statement``
records), for every day the game reached and every model of the game (a root
has one model for all seats; each seat is compared under its own model).
Both sides then run the same model code on the same evidence and the same
decisions, so every (seat, subject) distribution and identity label must be
equal, exactly.

Prints per model: the (living seat, other seat) beliefs compared on day 1 and
on later days, how many distributions differ (``!=``) with the largest
difference of one probability, and how many identity labels
(``model.identity``) change — for the roots, and for reference for the former
roots, which fed each seat the evidence only (every event it saw, none of its
decisions). Exits with status 1 when a root differs.

Usage::

    python -m benchmarks.day_roots_vs_arena [--preset gratr] \
        [--models gratr,dirichlet,none] [--games 30] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import gt_llm
from games.engine.calls import run_sync
from games.werewolf import rules
from games.werewolf.arena.matches import model_pairs, parse_models
from games.werewolf.arena.table import DayStartTable
from games.werewolf.day.roots import records_deal_step
from games.werewolf.day.state import DayRoot, DaySettings
from games.werewolf.play.runner import play_game
from games.werewolf.players.beliefs import BeliefSettings, make_seat_beliefs, seat_events
from games.werewolf.players.table_replay import statement_texts
from gt_llm.chat import ChatModel
from gt_llm.opponents import OpponentModel

#: The two kinds of root compared with the arena.
ROOTS = ("roots", "evidence only")


class Tally:
    """Comparisons of one model's roots with the arena's models.

    Attributes:
      day1, later: Beliefs compared on day 1 and on later days.
      differ1, differ_later: Of those, the distributions that differ.
      labels: Identity labels that differ.
      largest: The largest difference of one role's probability.
    """

    def __init__(self) -> None:
        self.day1 = self.later = self.differ1 = self.differ_later = self.labels = 0
        self.largest = 0.0

    def add(self, day: int, want: OpponentModel, got: OpponentModel, subject: str) -> None:
        a, b = dict(want.belief(subject).distribution), dict(got.belief(subject).distribution)
        differ = a != b
        if day == 1:
            self.day1 += 1
            self.differ1 += differ
        else:
            self.later += 1
            self.differ_later += differ
        self.labels += want.identity(subject) != got.identity(subject)
        self.largest = max(self.largest, _largest_gap(a, b))


def _largest_gap(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """The largest difference of one role's probability between two distributions."""
    return max((abs(a.get(h, 0.0) - b.get(h, 0.0)) for h in {*a, *b}), default=0.0)


def arena_game(
    config: rules.Config, chat: ChatModel, wolf: str, leader: str, seed: int
) -> tuple[DayStartTable, list[dict[str, Any]]]:
    """One arena game (``play_arena_game``'s table and settings): its table and records."""
    table = DayStartTable(
        chat,
        config,
        seed=seed,
        wolf_model=wolf,
        leader_model=leader,
        settings=BeliefSettings(),
        max_concurrency=None,
        structured=True,
    )
    records: list[dict[str, Any]] = []
    play_game(config, seed=seed, table=table, on_record=records.append)
    return table, records


def evidence_only(
    root: DayRoot, p: int, name: str, texts: Mapping[int, str], chat: ChatModel
) -> OpponentModel:
    """The seat's model fed every event it saw before the day, none of its decisions."""
    config = root.settings.config
    fed = make_seat_beliefs(name, config, p, root.role(p), BeliefSettings(structured=True))
    fed = run_sync(fed.observe(seat_events(root.start.events, p), texts), chat)
    return fed.model


def compare_game(
    config: rules.Config,
    chat: ChatModel,
    table: DayStartTable,
    records: Sequence[Mapping[str, Any]],
    seed: int,
    tallies: dict[tuple[str, str], Tally],
) -> None:
    """Adds one game's comparisons, every day and every model of the game, to ``tallies``."""
    texts = statement_texts(records)
    for day, arena in sorted(table.day_models.items()):
        for name in sorted(set(table.seat_models)):
            settings = DaySettings(config=config, day=day, opponent_model=name, speakers=1)
            state = run_sync(records_deal_step(settings, seed, records, texts=texts), chat)
            for p in state.root.living:
                if table.seat_models[p] != name:
                    continue
                root_model = state.models[p]
                assert root_model is not None  # every living seat has a model
                former = evidence_only(state.root, p, name, texts, chat)
                for q in range(config.num_players):
                    if q == p:
                        continue
                    subject = f"Player {q + 1}"
                    tallies[name, ROOTS[0]].add(day, arena[p], root_model, subject)
                    tallies[name, ROOTS[1]].add(day, arena[p], former, subject)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=sorted(rules.PRESETS), default="gratr")
    parser.add_argument("--models", default="gratr,dirichlet,none", help="opponent models")
    parser.add_argument("--games", type=int, default=30, help="games per pair")
    parser.add_argument("--seed", type=int, default=0, help="seed of game 0 of every pair")
    args = parser.parse_args()
    config = rules.preset(args.preset)
    models = parse_models(args.models)
    chat = gt_llm.load_model("scripted")
    tallies = {(m, kind): Tally() for m in models for kind in ROOTS}
    start = time.perf_counter()
    games = 0
    for a, b in model_pairs(models):
        for i in range(args.games):
            wolf, leader = (a, b) if i % 2 == 0 else (b, a)
            table, records = arena_game(config, chat, wolf, leader, args.seed + i)
            compare_game(config, chat, table, records, args.seed + i, tallies)
            games += 1
    seconds = time.perf_counter() - start
    print(
        f"{games} arena games, preset {args.preset}, scripted stand-in (not an LLM), "
        f"{seconds:.1f} s"
    )
    header = (
        f"{'model':<10} {'root':<14} {'day 1':>6} {'differ':>6} {'day>=2':>7} {'differ':>6} "
        f"{'max |d|':>8} {'labels':>6}"
    )
    print(header)
    print("-" * len(header))
    for (name, kind), t in tallies.items():
        print(
            f"{name:<10} {kind:<14} {t.day1:>6} {t.differ1:>6} {t.later:>7} "
            f"{t.differ_later:>6} {t.largest:>8.4f} {t.labels:>6}"
        )
    bad = sum(
        t.differ1 + t.differ_later + t.labels for (_, k), t in tallies.items() if k == "roots"
    )
    print(f"roots that differ from the arena's models: {bad} (must be 0)")
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
