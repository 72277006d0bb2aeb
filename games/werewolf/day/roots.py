"""The roots of the Werewolf day tree: a seeded rule-based game replayed to day ``day``.

A rule-based game (:func:`games.werewolf.play.runner.play_game` with the
seed) is replayed to the start of day ``day``'s debate (:func:`day_start`):
roles, who lives, every event each player saw, the day's first bids (the
speaking order). Each living player's opponent model is built and fed as an
arena seat's, from every event it saw (:func:`seat_model_step`: statements,
votes, facts; :func:`root_step` runs all seats' extractions as one batch); :func:`day_roots` finds the seeds whose game reaches the
day. :mod:`games.werewolf.day.steps` describes the tree.
"""

from __future__ import annotations

from typing import Any

from games.engine.calls import Step
from games.werewolf import rules
from games.werewolf.day.ranking import speech_options
from games.werewolf.day.state import DayRoot, DaySettings, DayState
from games.werewolf.players.beliefs import BeliefSettings, make_seat_beliefs, seat_events
from games.werewolf.rules import Config, GameState
from gt_llm.opponents import OpponentModel

__all__ = ["day_roots", "day_start", "root_step", "seat_model_step"]

#: Seeds tried per wanted day before giving up (games may end before the day).
_SCAN_FACTOR = 20


def day_start(
    config: Config, seed: int, day: int
) -> tuple[GameState, tuple[tuple[int, int], ...]] | None:
    """The rules state at the start of day ``day``'s debate in the seeded rule-based game.

    Plays the game with the rule-based players (:func:`games.werewolf.play.runner.play_game`)
    and replays its records up to that point. Returns the state and the day's
    first-round bids ``(seat, bid)``, or None when the game ended before.
    """
    from games.werewolf.play.runner import play_game

    if config.debate_turns < 1:
        raise ValueError("day_start: the preset must have a debate (debate_turns >= 1)")
    records: list[dict[str, Any]] = []
    play_game(config, seed=seed, on_record=records.append)
    state = rules.initial_state(config)
    start = None
    for rec in records:
        if start is None and (
            state.phase == "day_bid" and state.round == day and state.debate_turn == 0
        ):
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


def _root_without_models(settings: DaySettings, seed: int) -> DayRoot | None:
    found = day_start(settings.config, seed, settings.day)
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


def seat_model_step(root: DayRoot, p: int) -> Step[OpponentModel]:
    """A living player's model at the start of the day, from everything it saw before.

    Built and fed exactly as an arena seat's (one evidence stream):
    :func:`~games.werewolf.players.beliefs.make_seat_beliefs` and
    :meth:`~games.werewolf.players.beliefs.SeatBeliefs.observe` over the seat's
    events of the seeded game (:func:`~games.werewolf.players.beliefs.seat_events`:
    statements — GRATR's extraction calls —, votes as Attack intents, its
    partners, checks and the roles revealed at deaths and exiles as facts), with
    the rounds as time steps.
    """
    s = root.settings
    settings = BeliefSettings(structured=s.structured)  # the arena's, JSON answers as the day's
    sb = make_seat_beliefs(s.opponent_model, s.config, p, root.role(p), settings)
    sb = yield from sb.observe(seat_events(root.start.events, p), {})
    return sb.model


def root_step(settings: DaySettings, seed: int) -> Step[DayState]:
    """The root state of one day: every living seat's model from what it saw before."""
    root = _root_without_models(settings, seed)
    if root is None:
        raise ValueError(
            f"python_werewolf_day: the rule-based game of seed {seed} ends before day "
            f"{settings.day}; choose another game_seed or an earlier day"
        )
    n = settings.config.num_players
    living = [p for p in range(n) if root.start.alive[p]]
    built = yield from _together([seat_model_step(root, p) for p in living])
    by_seat = dict(zip(living, built, strict=True))
    models: tuple[OpponentModel | None, ...] = tuple(by_seat.get(p) for p in range(n))
    return DayState(root=root, models=models, options=speech_options(root, models, ()))


def _together(steps: list[Step[OpponentModel]]) -> Step[list[OpponentModel]]:
    """Runs several one-batch steps as one batch (each yields at most one list of calls)."""
    pending: list[tuple[int, Any, list[Any]]] = []
    out: list[Any] = [None] * len(steps)
    for i, g in enumerate(steps):
        try:
            calls = next(g)
        except StopIteration as stop:
            out[i] = stop.value
            continue
        pending.append((i, g, calls if isinstance(calls, list) else [calls]))
    if pending:
        answers = yield [c for _, _, cs in pending for c in cs]
        k = 0
        for i, g, cs in pending:
            part = answers[k : k + len(cs)]
            k += len(cs)
            try:
                g.send(part)
            except StopIteration as stop:
                out[i] = stop.value
            else:  # pragma: no cover - SeatBeliefs.observe yields once
                raise RuntimeError("root_step: a seat's observe step yielded twice")
    return out


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
