"""The roots of the Werewolf day tree: a seeded rule-based game replayed to day ``day``.

A rule-based game (:func:`games.werewolf.play.runner.play_game` with the
seed) is replayed to the start of day ``day``'s debate (:func:`day_start`):
roles, who lives, every event each player saw, the day's first bids (the
speaking order). Each living player's opponent model is built from its
facts (:func:`_initial_model`) and has heard every earlier statement
(:func:`root_step`); :func:`day_roots` finds the seeds whose game reaches the
day. :mod:`games.werewolf.day.steps` describes the tree.
"""

from __future__ import annotations

from typing import Any

from games.engine.calls import Step
from games.werewolf import rules
from games.werewolf.day.listening import listen
from games.werewolf.day.ranking import speech_options
from games.werewolf.day.state import DayRoot, DaySettings, DayState
from games.werewolf.players import prompts
from games.werewolf.players.seat_models import make_seat_model
from games.werewolf.players.view import act_dict
from games.werewolf.rules import Config, GameState
from gt_llm.opponents import Evidence, OpponentModel

__all__ = ["day_roots", "day_start", "root_step"]

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


def _initial_model(root: DayRoot, p: int) -> OpponentModel:
    """A living player's model from its facts: itself, its partners, its checks, revealed roles.

    Built like an arena seat's (:func:`make_seat_model`), with the same facts:
    a werewolf knows its partners and that every other player is not a
    werewolf; the seer knows its checks (a team check's "not a werewolf" as
    exactly that); anyone knows the roles revealed at deaths and exiles it saw.
    """
    s = root.settings
    role = root.role(p)
    model = make_seat_model(s.opponent_model, s.config, p, role)
    facts: dict[int, tuple[str, bool]] = {}  # seat -> (role, negated)
    if role == "werewolf":
        wolves = set(root.werewolves())
        facts |= {q: ("werewolf", q not in wolves) for q in range(s.config.num_players) if q != p}
    if role == "seer":
        for _, t, r in root.start.checks:
            facts[t] = (r, False) if r in s.hypotheses else ("werewolf", True)
    for e in root.start.events:
        if e.seen_by(p) and "roles" in e.data and e.kind in ("deaths", "exile"):
            facts |= {int(q): (str(r), False) for q, r in e.data["roles"].items() if int(q) != p}
    return model.observe_all(
        Evidence(
            subject=prompts.player_name(q),
            value=r,
            source="fact",
            step=0,
            certain=True,
            negated=neg,
        )
        for q, (r, neg) in sorted(facts.items())
    )


def root_step(settings: DaySettings, seed: int) -> Step[DayState]:
    """The root state of one day: models from facts, then every earlier statement heard."""
    root = _root_without_models(settings, seed)
    if root is None:
        raise ValueError(
            f"python_werewolf_day: the rule-based game of seed {seed} ends before day "
            f"{settings.day}; choose another game_seed or an earlier day"
        )
    n = settings.config.num_players
    models: tuple[OpponentModel | None, ...] = tuple(
        _initial_model(root, p) if root.start.alive[p] else None for p in range(n)
    )
    for i, (speaker, act) in enumerate(root.past_acts):
        text = prompts.plain_statement(act_dict(act))
        models = yield from listen(root, models, speaker, act, text, i)
    return DayState(root=root, models=models, options=speech_options(root, models, ()))


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
