"""The roots of the Werewolf day tree: a seeded rule-based game replayed to day ``day``.

A rule-based game (:func:`games.werewolf.play.runner.play_game` with the
seed, :func:`game_records`) is replayed to the start of day ``day``'s debate
(:func:`day_start`): roles, who lives, every event each player saw, the day's
first bids (the speaking order). Each living player's opponent model is the
arena seat's: built, fed and consulted as the arena's table does, step by step
(:func:`~games.werewolf.players.table_replay.day_start_beliefs`: statements,
votes and facts as evidence, and every decision of the seat — bids, speeches,
votes, night actions, the scratchpads — as a consultation,
:func:`~games.werewolf.players.table_beliefs.seat_decision`, which adds
GRATR's Eq. 9 feedback); every step's extraction calls of all seats go out
as one batch. :func:`records_deal_step` builds that first debate state for
the records' own deal.

The day's root (:func:`root_step`, :func:`records_root_step` from any game's
records, e.g. an arena game's log) is a chance node over the deals consistent
with the public history up to the day's first bids
(:class:`~games.werewolf.day.state.DealChance`,
:func:`games.werewolf.deals.public_deals`): each deal's history is the
records' replayed on it, and gives one :func:`records_deal_step` state, all
deals' calls batched together. :func:`day_roots` finds the seeds whose game
reaches the day. :mod:`games.werewolf.day.steps` describes the tree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.engine.calls import Step
from games.engine.gather import gather
from games.werewolf import rules
from games.werewolf.day.ranking import speech_options
from games.werewolf.day.state import DayRoot, DaySettings, DayState, DealChance
from games.werewolf.deals import (
    consistent_deals,
    history_records,
    public_deals,
    public_knowledge,
    records_history,
)
from games.werewolf.players.beliefs import BeliefSettings
from games.werewolf.players.table_replay import day_start_beliefs, is_debate_start
from games.werewolf.rules import Config, GameState
from gt_llm.opponents import OpponentModel

__all__ = [
    "day_roots",
    "day_start",
    "game_records",
    "records_day_start",
    "records_deal_step",
    "records_root_step",
    "root_step",
    "seat_model_step",
]

#: Seeds tried per wanted day before giving up (games may end before the day).
_SCAN_FACTOR = 20


def game_records(config: Config, seed: int) -> list[dict[str, Any]]:
    """The log records of the seeded rule-based game (:func:`games.werewolf.play.runner.play_game`)."""
    from games.werewolf.play.runner import play_game

    records: list[dict[str, Any]] = []
    play_game(config, seed=seed, on_record=records.append)
    return records


def _day_start_and_bids(
    config: Config, records: Sequence[Mapping[str, Any]], day: int
) -> tuple[GameState, GameState] | None:
    """The states at the start of day ``day``'s debate and after its first bids, or None."""
    if config.debate_turns < 1:
        raise ValueError("day_start: the preset must have a debate (debate_turns >= 1)")
    state = rules.initial_state(config)
    start = None
    for rec in records:
        if start is None and is_debate_start(state) and state.round == day:
            start = state
        if start is not None and state.phase != "day_bid":
            break
        if rec["type"] == "chance":
            state = rules.apply(state, rules.CHANCE, rec["outcome"])
        elif rec["type"] == "action":
            state = rules.apply(state, rec["player"], rules.action_from_json(rec["action"]))
    if start is None or not any(e.kind == "bids" and e.round == day for e in state.events):
        return None
    return start, state


def records_day_start(
    config: Config, records: Sequence[Mapping[str, Any]], day: int
) -> tuple[GameState, tuple[tuple[int, int], ...]] | None:
    """The rules state at the start of day ``day``'s debate in a game's records.

    Replays the ``chance`` and ``action`` records up to that point. Returns the
    state and the day's first-round bids ``(seat, bid)``, or None when the game
    ended before.
    """
    found = _day_start_and_bids(config, records, day)
    if found is None:
        return None
    start, after = found
    first = next(e for e in after.events if e.kind == "bids" and e.round == day).data["bids"]
    return start, tuple(sorted((int(p), int(b)) for p, b in first.items()))


def day_start(
    config: Config, seed: int, day: int
) -> tuple[GameState, tuple[tuple[int, int], ...]] | None:
    """The rules state at the start of day ``day``'s debate in the seeded rule-based game.

    :func:`records_day_start` of :func:`game_records`: the state and the day's
    first-round bids ``(seat, bid)``, or None when the game ended before.
    """
    return records_day_start(config, game_records(config, seed), day)


def _root_of(
    settings: DaySettings, seed: int, records: Sequence[Mapping[str, Any]], deal: int = 0
) -> DayRoot | None:
    found = records_day_start(settings.config, records, settings.day)
    if found is None:
        return None
    start, bids = found
    living = start.living()
    if settings.speakers > len(living):
        raise ValueError(
            f"python_werewolf_day: speakers={settings.speakers} but only {len(living)} players "
            f"live on day {settings.day} (seed {seed}); use fewer speakers (--speakers)"
        )
    if settings.order == "bids":
        order = sorted(living, key=lambda p: (-dict(bids)[p], p))
    else:
        order = list(living)
    n = settings.config.num_players
    prefixes = tuple(
        "\n".join([f"P{p}"] + [str(e) for e in start.events if e.seen_by(p)]) for p in range(n)
    )
    return DayRoot(
        settings=settings,
        game_seed=seed,
        start=start,
        speakers=tuple(order[: settings.speakers]),
        bids=bids,
        prefixes=prefixes,
        deal=deal,
    )


def _root_without_models(settings: DaySettings, seed: int) -> DayRoot | None:
    return _root_of(settings, seed, game_records(settings.config, seed))


def _models_step(
    root: DayRoot,
    records: Sequence[Mapping[str, Any]],
    seats: Sequence[int],
    texts: Mapping[int, str] | None,
) -> Step[tuple[OpponentModel | None, ...]]:
    """The models of ``seats`` at the start of the root's day, as the arena's (module doc)."""
    s = root.settings
    settings = BeliefSettings(structured=s.structured)  # the arena's, JSON answers as the day's
    names = [s.opponent_model if p in seats else None for p in range(s.config.num_players)]
    fed = yield from day_start_beliefs(
        s.config, records, names, settings=settings, texts=texts, last_day=s.day
    )
    if s.day not in fed:  # pragma: no cover - the root says the game reaches the day
        raise RuntimeError(f"records_root_step: the replay did not reach day {s.day}")
    day = fed[s.day]
    return tuple(day[p].model if p in day else None for p in range(s.config.num_players))


def seat_model_step(root: DayRoot, p: int) -> Step[OpponentModel]:
    """A living player's model at the start of the day in the root's seeded rule-based game.

    The arena seat's model (one evidence stream, the seat's decisions
    included): :func:`~games.werewolf.players.table_replay.day_start_beliefs`
    over :func:`game_records` of ``root.game_seed``, with the rounds as time steps.
    """
    records = game_records(root.settings.config, root.game_seed)
    models = yield from _models_step(root, records, [p], None)
    model = models[p]
    assert model is not None  # the seat was given a model
    return model


def records_deal_step(
    settings: DaySettings,
    game_seed: int,
    records: Sequence[Mapping[str, Any]],
    *,
    texts: Mapping[int, str] | None = None,
    deal: int = 0,
) -> Step[DayState]:
    """The debate's first state of one day of a game's records, under the records' own deal.

    Every living seat's model is the arena seat's at the start of the day's
    debate (module doc); ``texts`` are the statements' words by statement id
    (:func:`~games.werewolf.players.table_replay.statement_texts`; missing: the
    act's plain rendering, as in a rule-based game); ``deal`` is the index the
    root gets.

    Raises:
      ValueError: the game ends before the day.
    """
    root = _root_of(settings, game_seed, records, deal)
    if root is None:
        raise ValueError(
            f"python_werewolf_day: the game of seed {game_seed} ends before day "
            f"{settings.day}; choose another game_seed or an earlier day"
        )
    models = yield from _models_step(root, records, root.living, texts)
    return DayState(root=root, models=models, options=speech_options(root, models, ()))


def records_root_step(
    settings: DaySettings,
    game_seed: int,
    records: Sequence[Mapping[str, Any]],
    *,
    texts: Mapping[int, str] | None = None,
) -> Step[DealChance]:
    """The root of one day of a game's records: a chance node over the deals.

    The deals are those consistent with the public history up to the day's
    first bids (:func:`games.werewolf.deals.public_deals`, at most
    ``settings.deals``); each deal's history is the records' replayed on it and
    gives one :func:`records_deal_step` root (every deal's extraction calls in
    one batch per step).

    Raises:
      ValueError: the game ends before the day.
    """
    config = settings.config
    found = _day_start_and_bids(config, records, settings.day)
    if found is None:
        raise ValueError(
            f"python_werewolf_day: the game of seed {game_seed} ends before day "
            f"{settings.day}; choose another game_seed or an earlier day"
        )
    if settings.deals == 0:  # the seeded game's own deal only (clairvoyant)
        state = yield from records_deal_step(settings, game_seed, records, texts=texts)
        known = public_knowledge(config, records_history(config, records, found[1]))
        consistent = len(consistent_deals(config, known))
        return DealChance(deals=(state,), consistent=consistent, enumerated=False, fixed=True)
    history = records_history(config, records, found[1])
    deals = public_deals(config, history, settings.deals, game_seed)
    states = yield from gather(
        [
            records_deal_step(settings, game_seed, history_records(config, h), texts=texts, deal=k)
            for k, h in enumerate(deals.histories)
        ]
    )
    return DealChance(
        deals=tuple(states),
        consistent=deals.consistent,
        enumerated=deals.enumerated,
        skipped=deals.skipped,
    )


def root_step(settings: DaySettings, seed: int) -> Step[DealChance]:
    """The root of one day: the deals' chance node, every living seat's model per deal."""
    root = yield from records_root_step(settings, seed, game_records(settings.config, seed))
    return root


def day_roots(settings: DaySettings, num_games: int, *, first_seed: int = 0) -> list[int]:
    """The seeds of the first ``num_games`` rule-based games that reach day ``settings.day``.

    Raises:
      ValueError: too few games reach the day among ``_SCAN_FACTOR * num_games`` seeds.
    """
    seeds: list[int] = []
    seed = first_seed
    while len(seeds) < num_games:
        if seed - first_seed >= _SCAN_FACTOR * num_games:
            raise ValueError(
                f"day_roots: only {len(seeds)} of {seed - first_seed} rule-based games reach day "
                f"{settings.day}; choose an earlier day (--day) or fewer days (--days)"
            )
        if day_start(settings.config, seed, settings.day) is not None:
            seeds.append(seed)
        seed += 1
    return seeds
