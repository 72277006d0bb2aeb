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
GRATR's Eq. 9 feedback); :func:`root_step` runs every step's extraction calls
of all seats as one batch. :func:`records_root_step` builds the same root from
any game's records (an arena game's log); :func:`day_roots` finds the seeds
whose game reaches the day. :mod:`games.werewolf.day.steps` describes the tree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.engine.calls import Step
from games.werewolf import rules
from games.werewolf.day.ranking import speech_options
from games.werewolf.day.state import DayRoot, DaySettings, DayState
from games.werewolf.players.beliefs import BeliefSettings
from games.werewolf.players.table_replay import day_start_beliefs, is_debate_start
from games.werewolf.rules import Config, GameState
from gt_llm.opponents import OpponentModel

__all__ = [
    "day_roots",
    "day_start",
    "game_records",
    "records_day_start",
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


def records_day_start(
    config: Config, records: Sequence[Mapping[str, Any]], day: int
) -> tuple[GameState, tuple[tuple[int, int], ...]] | None:
    """The rules state at the start of day ``day``'s debate in a game's records.

    Replays the ``chance`` and ``action`` records up to that point. Returns the
    state and the day's first-round bids ``(seat, bid)``, or None when the game
    ended before.
    """
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
    if start is None:
        return None
    bids = [e for e in state.events if e.kind == "bids" and e.round == day]
    if not bids:
        return None
    first = bids[0].data["bids"]
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
    settings: DaySettings, seed: int, records: Sequence[Mapping[str, Any]]
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


def records_root_step(
    settings: DaySettings,
    game_seed: int,
    records: Sequence[Mapping[str, Any]],
    *,
    texts: Mapping[int, str] | None = None,
) -> Step[DayState]:
    """The root state of one day of a game's records (an arena game's log, or :func:`game_records`).

    Every living seat's model is the arena seat's at the start of the day's
    debate (module doc); ``texts`` are the statements' words by statement id
    (:func:`~games.werewolf.players.table_replay.statement_texts`; missing: the
    act's plain rendering, as in a rule-based game).

    Raises:
      ValueError: the game ends before the day.
    """
    root = _root_of(settings, game_seed, records)
    if root is None:
        raise ValueError(
            f"python_werewolf_day: the game of seed {game_seed} ends before day "
            f"{settings.day}; choose another game_seed or an earlier day"
        )
    models = yield from _models_step(root, records, root.living, texts)
    return DayState(root=root, models=models, options=speech_options(root, models, ()))


def root_step(settings: DaySettings, seed: int) -> Step[DayState]:
    """The root state of one day: every living seat's model from what it saw and decided before."""
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
