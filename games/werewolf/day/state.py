"""Settings, root and states of the Werewolf day tree (immutable values).

:mod:`games.werewolf.day.steps` describes the tree and its dynamics.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from games.werewolf import rules
from games.werewolf.day.abstraction import Abstraction
from games.werewolf.players.view import PlayerView, view_from_knowledge
from games.werewolf.rules import ROLES, Config, GameState, SpeechAct
from gt_llm.opponents import OpponentModel

__all__ = [
    "EXTRACTION",
    "SHORT_NAME",
    "DayNode",
    "DayRoot",
    "DaySettings",
    "DealChance",
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
_MAX_DEALS = 64

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
      deals: K, the most deals the root chance node is over (all the consistent
        deals when there are at most K, else K drawn; :mod:`games.werewolf.deals`).
        0 keeps only the seeded game's own deal: a tree for one fixed deal, whose
        payoffs tell the players the roles (clairvoyant; for tests and comparisons).
    """

    config: Config
    day: int = 1
    speakers: int = 2
    order: str = "bids"
    opponent_model: str = "none"
    abstraction: Abstraction = Abstraction()
    num_seeds: int = 2
    structured: bool = True
    deals: int = 4

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
        if not 0 <= self.deals <= _MAX_DEALS:
            raise ValueError(
                f"{where}: deals must be in [0, {_MAX_DEALS}] (0: the seeded game's deal only), "
                f"got {self.deals}"
            )
        self.abstraction.check(self.config)

    @property
    def hypotheses(self) -> tuple[str, ...]:
        """The roles of the preset (what an opponent model may believe a player is)."""
        return tuple(r for r in ROLES if self.config.roles.count(r) > 0)


@dataclasses.dataclass(frozen=True)
class Statement:
    """One statement of the day: speaker, speech act (with tone), LLM seed and text.

    ``action`` is the speaker's action id (tone and act token of the abstraction);
    only the speaker knows it (the token's slot is of its own ranking).
    """

    speaker: int
    act: SpeechAct
    seed: int
    text: str
    action: int = -1


@dataclasses.dataclass(frozen=True, eq=False)
class DayRoot:
    """The start of one day's debate (shared by every state of its tree).

    Attributes:
      settings: The day's settings.
      game_seed: Seed of the rule-based game it comes from.
      start: The rules state at the start of the debate.
      speakers: The speaking order (K seats).
      bids: The first-round bids of the seeded game's day (``order=bids``).
      prefixes: Per seat, the information-state lines of the seeded game it saw
        (under this deal: its role and private events are the deal's).
      deal: The deal's index among the root chance node's deals.
    """

    settings: DaySettings
    game_seed: int
    start: GameState
    speakers: tuple[int, ...]
    bids: tuple[tuple[int, int], ...]
    prefixes: tuple[str, ...]
    deal: int = 0

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

    def deal_label(self) -> str:
        """The deal's name: its index and the werewolves' seats."""
        return (
            f"deal {self.deal} (werewolves " + ", ".join(f"P{p}" for p in self.werewolves()) + ")"
        )

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
            "deal": self.deal,
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
        """What ``player`` knows, keyed by the abstraction (see :func:`information_key`)."""
        return information_key(self.root, self.statements, player)


def information_key(root: DayRoot, statements: Sequence[Statement], player: int) -> str:
    """A seat's information state in the day tree: what it knows, as the abstraction models it.

    Its seat and every event of the seeded game it saw (its role, its private
    knowledge under the deal, the public events), the speaking order, then per
    statement the speaker and the public speech act with its tone (the concrete
    target, role or result: what every listener hears), and for the seat's own
    statements its action (tone and act token). The words are left out: a
    sampled text is unique to its branch, so keying on it would tell the deals
    apart again; the listeners' extracted judgments are left out for the same
    reason (they are read from the words). Nothing here depends on the deal
    beyond what the seat knows (the conformance check
    :func:`games.werewolf.day.infosets.check_deal_blind` proves it on trees).
    """
    ab = root.settings.abstraction
    lines = [root.prefixes[player]]
    lines.append(
        f"day {root.settings.day} debate, speakers: " + ", ".join(f"P{p}" for p in root.speakers)
    )
    for s in statements:
        line = f"P{s.speaker} {rules.action_to_string(s.act)}"
        if s.speaker == player:
            tone, token = ab.decode(s.action)
            line += f" (my choice: {tone} {token})"
        lines.append(line)
    return "\n".join(lines)


@dataclasses.dataclass(frozen=True, eq=False)
class DealChance:
    """The root of a day tree: a chance node over the deals (:mod:`games.werewolf.deals`).

    Every deal is consistent with the public history of the seeded game; each
    has probability ``1 / len(deals)`` (the prior is uniform over deals).

    Attributes:
      deals: The root state of each kept deal (``deals[k].root.deal == k``).
      consistent: How many deals are consistent with the public history.
      enumerated: Every consistent deal is kept (else ``len(deals)`` were drawn).
      skipped: Drawn deals dropped because no hidden night moves reproduce the history.
      fixed: The one deal is the seeded game's own (``deals=0``: clairvoyant).
    """

    deals: tuple[DayState, ...]
    consistent: int
    enumerated: bool
    skipped: int = 0
    fixed: bool = False

    def __post_init__(self) -> None:
        if not self.deals:
            raise ValueError("DealChance: give at least one deal")

    def __deepcopy__(self, memo: dict) -> DealChance:
        return self  # immutable, as DayState

    def is_terminal(self) -> bool:
        return False

    @property
    def public(self) -> DayRoot:
        """The first deal's root, for what every deal shares (seed, day, who lives, speakers)."""
        return self.deals[0].root

    @property
    def settings(self) -> DaySettings:
        return self.public.settings

    @property
    def game_seed(self) -> int:
        return self.public.game_seed

    @property
    def speakers(self) -> tuple[int, ...]:
        return self.public.speakers

    def label(self) -> str:
        return self.public.label()

    def probabilities(self) -> list[tuple[int, float]]:
        k = len(self.deals)
        return [(i, 1.0 / k) for i in range(k)]

    def wolf_speaker_share(self) -> float:
        """The probability that a werewolf is among the speakers (over the deals)."""
        hits = sum(any(d.root.role(p) == "werewolf" for p in self.speakers) for d in self.deals)
        return hits / len(self.deals)

    def to_dict(self) -> dict[str, Any]:
        """What every deal shares, and the deals (each seat's role per deal)."""
        root = self.public
        return {
            "game_seed": root.game_seed,
            "day": root.settings.day,
            "alive": [int(a) for a in root.start.alive],
            "speakers": list(root.speakers),
            "bids": {str(p): b for p, b in root.bids},
            "deals": {
                "kept": len(self.deals),
                "consistent": self.consistent,
                "enumerated": self.enumerated,
                "skipped": self.skipped,
                "fixed": self.fixed,
                "roles": [list(d.root.start.roles) for d in self.deals],
            },
            "werewolf_speaker_share": self.wolf_speaker_share(),
        }


#: A state of the day tree: the deals' chance node at the root, else a debate state.
DayNode = DealChance | DayState
