"""Settings, root and states of the Werewolf day tree (immutable values).

:mod:`games.werewolf.day.steps` describes the tree and its dynamics.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from games.werewolf import rules
from games.werewolf.day.abstraction import Abstraction
from games.werewolf.players.view import PlayerView, view_from_knowledge
from games.werewolf.rules import ROLES, Config, GameState, SpeechAct
from gt_llm.opponents import OpponentModel

__all__ = [
    "EXTRACTION",
    "SHORT_NAME",
    "DayRoot",
    "DaySettings",
    "DayState",
    "Statement",
]


SHORT_NAME = "python_werewolf_day"

#: What each opponent model extracts from a statement (besides the message itself).
EXTRACTION: dict[str, tuple[str, ...]] = {
    "none": (),
    "dirichlet": ("identity",),
    "gratr": ("identity", "intent"),
    "bayes": ("identity", "intent"),
}
ORDERS = ("bids", "seats")
_MAX_SPEAKERS = 6
_MAX_SEEDS = 16

# --- settings, root and state --------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DaySettings:
    """Everything that defines one day tree but the seed of its rule-based game.

    Attributes:
      config: The rules config (from the preset).
      day: The day (the rules' round) whose debate is played, >= 1.
      speakers: K, the number of speaking turns.
      order: ``bids`` or ``seats`` (:mod:`games.werewolf.day.steps`).
      opponent_model: ``none``, ``dirichlet`` or ``gratr``.
      abstraction: Tones and act tokens.
      num_seeds: LLM seeds per statement.
      structured: The players' calls ask for JSON answers under each task's schema.
    """

    config: Config
    day: int = 1
    speakers: int = 2
    order: str = "bids"
    opponent_model: str = "none"
    abstraction: Abstraction = Abstraction()
    num_seeds: int = 2
    structured: bool = True

    def __post_init__(self) -> None:
        where = "python_werewolf_day"
        if self.day < 1 or self.day > self.config.max_rounds:
            raise ValueError(
                f"{where}: day must be in [1, {self.config.max_rounds}], got {self.day}"
            )
        if not 1 <= self.speakers <= _MAX_SPEAKERS:
            raise ValueError(
                f"{where}: speakers must be in [1, {_MAX_SPEAKERS}], got {self.speakers}"
            )
        if self.order not in ORDERS:
            raise ValueError(f"{where}: order must be one of {ORDERS}, got {self.order!r}")
        if self.opponent_model not in EXTRACTION:
            raise ValueError(
                f"{where}: opponent_model must be one of {sorted(EXTRACTION)}, "
                f"got {self.opponent_model!r}"
            )
        if not 1 <= self.num_seeds <= _MAX_SEEDS:
            raise ValueError(
                f"{where}: num_seeds must be in [1, {_MAX_SEEDS}], got {self.num_seeds}"
            )
        self.abstraction.check(self.config)

    @property
    def hypotheses(self) -> tuple[str, ...]:
        """The roles of the preset (what an opponent model may believe a player is)."""
        return tuple(r for r in ROLES if self.config.roles.count(r) > 0)


@dataclasses.dataclass(frozen=True)
class Statement:
    """One statement of the day: speaker, speech act (with tone), LLM seed and text."""

    speaker: int
    act: SpeechAct
    seed: int
    text: str


@dataclasses.dataclass(frozen=True, eq=False)
class DayRoot:
    """The start of one day's debate (shared by every state of its tree).

    Attributes:
      settings: The day's settings.
      game_seed: Seed of the rule-based game it comes from.
      start: The rules state at the start of the debate.
      speakers: The speaking order (K seats).
      bids: The first-round bids of the seeded game's day (``order=bids``).
      prefixes: Per seat, the information-state lines of the seeded game it saw.
    """

    settings: DaySettings
    game_seed: int
    start: GameState
    speakers: tuple[int, ...]
    bids: tuple[tuple[int, int], ...]
    prefixes: tuple[str, ...]

    @property
    def living(self) -> tuple[int, ...]:
        return self.start.living()

    @property
    def round(self) -> int:
        return self.start.round

    def role(self, seat: int) -> str:
        return self.start.roles[seat]

    def werewolves(self) -> tuple[int, ...]:
        return self.start.holders("werewolf")

    def label(self) -> str:
        return f"seed={self.game_seed} day={self.settings.day}"

    @functools.cached_property
    def past_acts(self) -> tuple[tuple[int, SpeechAct], ...]:
        """``(speaker, act)`` of every statement before the day's debate."""
        return tuple(
            (int(e.data["player"]), rules.speech_act_from_json(e.data["act"]))
            for e in self.start.events
            if e.kind == "speech"
        )

    @functools.cached_property
    def base_views(self) -> tuple[PlayerView | None, ...]:
        """Each living seat's prompt view of the seeded game so far (None for the dead)."""
        return tuple(
            view_from_knowledge(rules.knowledge(self.start, p), structured=self.settings.structured)
            if alive
            else None
            for p, alive in enumerate(self.start.alive)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_seed": self.game_seed,
            "day": self.settings.day,
            "roles": list(self.start.roles),
            "alive": [int(a) for a in self.start.alive],
            "speakers": list(self.speakers),
            "speaker_roles": [self.role(p) for p in self.speakers],
            "bids": {str(p): b for p, b in self.bids},
        }


@dataclasses.dataclass(frozen=True, eq=False)
class DayState:
    """A state of the day tree (immutable; ``eq=False``: opponent models compare by identity).

    Attributes:
      root: The day's root.
      models: Each seat's opponent model (None for the dead).
      statements: The day's statements so far.
      options: For the next speaker, the concrete speech act of each action id
        (None: not legal).
      votes: ``(voter, target)`` once the votes are cast (then the state is terminal).
      exiled: The exiled seat, or None.
      vote_listed: Per vote (in ``votes``' order), how many players its prompt listed
        and where the model's choice stood among them (1 = first; None when the
        answer fell back): answer quality's listed-position counts.
    """

    root: DayRoot
    models: tuple[OpponentModel | None, ...]
    statements: tuple[Statement, ...] = ()
    options: tuple[SpeechAct | None, ...] = ()
    votes: tuple[tuple[int, int], ...] | None = None
    exiled: int | None = None
    vote_listed: tuple[tuple[int, int | None], ...] = ()

    def __deepcopy__(self, memo: dict) -> DayState:
        # Immutable: OpenSpiel's state cloning may share it.
        return self

    def is_terminal(self) -> bool:
        return self.votes is not None

    def speaker(self) -> int:
        return self.root.speakers[len(self.statements)]

    def returns(self) -> tuple[float, ...]:
        """+1 / -1 per team member by the exiled player's team; 0 when nobody went."""
        n = self.root.settings.config.num_players
        if self.exiled is None:
            return (0.0,) * n
        wolf_out = self.root.role(self.exiled) == "werewolf"
        return tuple(
            (1.0 if (r == "werewolf") != wolf_out else -1.0) for r in self.root.start.roles
        )

    def information_state(self, player: int) -> str:
        lines = [self.root.prefixes[player]]
        lines.append(
            f"day {self.root.settings.day} debate, speakers: "
            + ", ".join(f"P{p}" for p in self.root.speakers)
        )
        for s in self.statements:
            lines.append(f"P{s.speaker} {rules.action_to_string(s.act)}: {s.text}")
        return "\n".join(lines)
