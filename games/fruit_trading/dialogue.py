"""The fruit-trading dialogue as pure state plus LLM-call steps.

A :class:`DialogueState` is an immutable value: the scenario, the messages so
far (with the tone and seed that produced each), each player's belief about
the other, and the records the experiment reports (guesses, agreements,
payoffs). One step of the game — the speaker's message in a tone with a seed,
the termination check, the payoff calls on agreement, and the receiver's
belief update — is a step generator of the engine (:mod:`games.engine.calls`):
it yields :class:`~games.engine.calls.Call` objects (or lists of them, which
are independent) and receives their parsed values; the engine's drivers
``run_sync`` and ``run_batched`` run it.

LLM calls per message (after Lindström et al., Sect. 3.1 and Fig. 3): the
message; once both players have spoken, the agreement judge, which reads the
dialogue itself and is asked twice, with its two labels offered in both orders
(the players agreed only when both answers say so, so the verdict cannot follow
the labels' order); on a verdict of agreement, the trade summary, also asked in
both orders of its two cases (the accepted trade, or no trade), then the paper's
two payoff calls (compute each player's payoff from its private information,
extract the number). The payoff calls run only when both summaries give the same
trade, it is a real exchange (:meth:`~games.fruit_trading.rules.Trade.is_exchange`:
each side gives what the other receives, something each way, within the
endowments) and the dialogue states it (one message names every quantity of it,
:func:`~games.fruit_trading.rules.trade_stated`) -- otherwise the negotiation
goes on and the verdict is counted (``DialogueState.not_exchanges``). The verdict
and the trade are read by :mod:`games.fruit_trading.judge`, which the judge's
check on a labelled set (``gt-llm fruit-trading judge-check``) shares. With
beliefs, one guess by the receiver of what the sender wants. (A summary that
could not say "no trade" was an exchange by construction; SmolLM2-135M's summaries
then named trades that appear nowhere in the dialogue in 23 of 24 accepted
dialogues. Formerly the judge was asked after every message, the opening
included, with the labels in one order, from an LLM summary of the dialogue.)
Each request's parser, fallback and JSON reading are in
:mod:`games.fruit_trading.parsing`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from games.engine.calls import Step
from games.fruit_trading import judge, prompts
from games.fruit_trading.parsing import call
from games.fruit_trading.rules import (
    FRUITS,
    NAMINGS,
    PAYOFF_BOUND,
    POOLINGS,
    TONES,
    Scenario,
    make_scenario,
)
from gt_llm.chat import ChatRequest
from gt_llm.opponents import Evidence, OpponentContext, OpponentModel, make_opponent_model

logger = logging.getLogger(__name__)


# --- state -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Config:
    """Game settings.

    Attributes:
      max_messages: Messages after which the game ends (the opening included).
      num_seeds: LLM seeds per message (outcomes of each chance node).
      beliefs: Players keep an opponent model (the ``tone+<model>`` variants).
      scenario_seed: Master seed of the initialisations.
      opponent_model: Registered opponent model used when ``beliefs`` is set
        (``dirichlet``: the paper's belief revision; ``gratr``: the trust graph).
      eval_seed: Seed of the evaluation calls (summaries, agreement, payoffs, guesses).
      payoff_source: ``"llm"`` (the paper: payoffs from the three LLM calls) or
        ``"exact"`` (computed from the parsed trade).
      names: ``"random"`` (the paper: names drawn per initialisation) or
        ``"fixed"`` (the same two names everywhere, so that a player's
        information state is its own private information, its own tones and
        the dialogue, and can recur across initialisations).
      pools: ``"per_init"`` or ``"shared"`` endowment and valuation pools
        (:data:`games.fruit_trading.rules.POOLINGS`).
      structured: Ask for the tasks' JSON answers (the request carries the schema;
        backends that can constrain decoding do); else free-text answers.
    """

    max_messages: int = 4
    num_seeds: int = 2
    beliefs: bool = False
    scenario_seed: int = 0
    opponent_model: str = "dirichlet"
    eval_seed: int = 0
    payoff_source: str = "llm"
    names: str = "random"
    pools: str = "per_init"
    structured: bool = True

    def __post_init__(self) -> None:
        if self.names not in NAMINGS:
            raise ValueError(f"Config: names must be one of {NAMINGS}, got {self.names!r}")
        if self.pools not in POOLINGS:
            raise ValueError(f"Config: pools must be one of {POOLINGS}, got {self.pools!r}")
        if self.max_messages < 2:
            raise ValueError(f"Config: max_messages must be >= 2, got {self.max_messages}")
        if self.num_seeds < 1:
            raise ValueError(f"Config: num_seeds must be >= 1, got {self.num_seeds}")
        if self.payoff_source not in ("llm", "exact"):
            raise ValueError(
                f"Config: payoff_source must be 'llm' or 'exact', got {self.payoff_source!r}"
            )

    def scenario(self, init: int) -> Scenario:
        """Initialisation ``init`` under this config's seed and naming."""
        return make_scenario(init, seed=self.scenario_seed, names=self.names, pools=self.pools)


@dataclasses.dataclass(frozen=True)
class Turn:
    """One message: who sent it, the tone asked for, the seed, and the text."""

    sender: int
    tone: str
    seed: int
    text: str


@dataclasses.dataclass(frozen=True)
class GuessRecord:
    """A receiver's guess of what the sender wants, after message ``message``."""

    message: int
    observer: int
    guess: str | None
    truth: tuple[str, ...]

    @property
    def correct(self) -> bool:
        return self.guess is not None and self.guess in self.truth


@dataclasses.dataclass(frozen=True)
class PayoffRecord:
    """Payoffs on agreement: from the LLM calls and computed exactly from the trade."""

    message: int
    llm: tuple[float, float]
    exact: tuple[int, int] | None
    trade_text: str
    feasible: bool | None

    @property
    def disagrees(self) -> bool:
        """True when the LLM payoff differs from the exact one (or no trade parsed)."""
        return self.exact is None or tuple(float(x) for x in self.exact) != self.llm


def history_information(names: Sequence[str], turns: Sequence[Turn], player: int) -> str:
    """The part of ``player``'s information state after its private information.

    Its own tones so far and the dialogue text: what the exported policy's keys
    end with, so a viewer can find a decision's policy row from a leaf record.
    """
    own = [t.tone for t in turns if t.sender == player]
    dialogue = prompts.render_dialogue(
        [
            {"sender": names[t.sender], "receiver": names[1 - t.sender], "text": t.text}
            for t in turns
        ]
    )
    return f"Your tones so far: {', '.join(own) if own else '(none)'}\n\nDialogue:\n{dialogue}"


@dataclasses.dataclass(frozen=True)
class DialogueState:
    """Everything that has happened in one negotiation (immutable)."""

    scenario: Scenario
    config: Config
    turns: tuple[Turn, ...] = ()
    beliefs: tuple[OpponentModel, OpponentModel] | None = None
    agreement: bool = False
    payoff: PayoffRecord | None = None
    guesses: tuple[GuessRecord, ...] = ()
    #: Messages after which the judge saw an agreement but the summaries gave no trade the
    #: game pays for (no trade, the two orders' trades differ, no real exchange, or one
    #: the dialogue does not state: :func:`games.fruit_trading.judge.read_trade`), so the
    #: negotiation went on.
    not_exchanges: tuple[int, ...] = ()

    @property
    def names(self) -> tuple[str, str]:
        return (self.scenario.players[0].name, self.scenario.players[1].name)

    @property
    def num_messages(self) -> int:
        return len(self.turns)

    def is_terminal(self) -> bool:
        return self.agreement or self.num_messages >= self.config.max_messages

    def next_speaker(self) -> int:
        return self.num_messages % 2

    def __deepcopy__(self, memo: dict) -> DialogueState:
        # Immutable: OpenSpiel's state cloning may share it.
        return self

    def returns(self) -> tuple[float, float]:
        """Payoffs: from the agreed trade, else 0 for both.

        An LLM-computed payoff outside what any trade can pay
        (:data:`~games.fruit_trading.rules.PAYOFF_BOUND`) is clipped to it, so
        that the game's utility bounds hold whatever the model answers.
        """
        if not self.agreement or self.payoff is None:
            return (0.0, 0.0)
        if self.config.payoff_source == "exact":
            if self.payoff.exact is None:
                return (0.0, 0.0)
            return (float(self.payoff.exact[0]), float(self.payoff.exact[1]))
        b = float(PAYOFF_BOUND)
        return (
            min(b, max(-b, float(self.payoff.llm[0]))),
            min(b, max(-b, float(self.payoff.llm[1]))),
        )

    def turn_dicts(self) -> list[dict[str, Any]]:
        n = self.names
        return [
            {"sender": n[t.sender], "receiver": n[1 - t.sender], "text": t.text} for t in self.turns
        ]

    def dialogue_text(self) -> str:
        return prompts.render_dialogue(self.turn_dicts())

    def information_state(self, player: int) -> str:
        """Own private information, own past tones, and the dialogue text.

        Not the opponent's tones or the seeds: those are hidden. Own tones are
        included so that perfect recall holds even when two tones give the
        same text.
        """
        info = self.scenario.players[player]
        return (
            f"You are {info.name} (player {player + 1}).\n{info.describe()}\n\n"
            + history_information(self.names, self.turns, player)
        )

    def belief_view(self, speaker: int) -> BeliefView:
        """What ``speaker``'s opponent model puts in its prompt about the opponent.

        Built from the model's :meth:`~gt_llm.opponents.OpponentModel.prompt_fields`
        (the same fields for every registered model): the most likely fruit(s)
        (ties kept) and, for a model that keeps trust (GRATR), the trust and
        stance towards the opponent.
        """
        if self.beliefs is None:
            return BeliefView()
        opponent = self.names[1 - speaker]
        views = self.beliefs[speaker].prompt_fields(subjects=[opponent])["players"]
        if not views:
            return BeliefView()
        view = views[0]
        probs = view["probabilities"]
        fruits: tuple[str, ...] = ()
        if probs:
            top = max(probs.values())
            fruits = tuple(f for f in FRUITS if probs.get(f, -1.0) >= top - 1e-12)
        trust = view["trust"]
        return BeliefView(fruits, None if trust is None else float(trust), str(view["stance"]))

    def public_information(self) -> str:
        """What every player and an onlooker see: the names and the dialogue text.

        Neither player's private information nor any tone (the ``iig_obs_type``
        with ``private_info=NONE``).
        """
        return f"Players: {self.names[0]} and {self.names[1]}\n\nDialogue:\n{self.dialogue_text()}"

    def private_information(self, player: int) -> str:
        """What only ``player`` knows: its private information and its own tones."""
        info = self.scenario.players[player]
        own = [t.tone for t in self.turns if t.sender == player]
        return (
            f"You are {info.name} (player {player + 1}).\n{info.describe()}\n\n"
            f"Your tones so far: {', '.join(own) if own else '(none)'}"
        )

    def believed_fruits(self, speaker: int) -> tuple[str, ...]:
        return self.belief_view(speaker).fruits


@dataclasses.dataclass(frozen=True)
class BeliefView:
    """The belief a message prompt states: fruits wanted, and trust where kept."""

    fruits: tuple[str, ...] = ()
    trust: float | None = None
    stance: str = "unsure"


#: Credibility the receiver gives a message whose asked-for fruit confirms (or
#: contradicts) its previous guess about the sender: GRATR's trust in the
#: opponent's claims grows with consistent claims and falls with changed ones.
CONSISTENT_CLAIM, CHANGED_CLAIM = 0.5, -0.5


def initial_state(scenario: Scenario, config: Config) -> DialogueState:
    """The state before the opening message (one opponent model per player)."""
    beliefs = None
    if config.beliefs:
        names = (scenario.players[0].name, scenario.players[1].name)
        m0, m1 = (
            make_opponent_model(
                config.opponent_model,
                OpponentContext(players=names, self_id=names[p], hypotheses=FRUITS),
            )
            for p in range(2)
        )
        beliefs = (m0, m1)
    return DialogueState(scenario=scenario, config=config, beliefs=beliefs)


# --- one step ------------------------------------------------------------------------


def _message_request(state: DialogueState, speaker: int, tone: str, seed: int) -> ChatRequest:
    info = state.scenario.players[speaker]
    opponent = state.names[1 - speaker]
    # The opening is generated without a belief (the paper); "any" never gets one,
    # to keep the baseline uninformed.
    view = state.belief_view(speaker) if (state.turns and tone != "any") else BeliefView()
    believed = view.fruits
    fields: dict[str, Any] = {
        "player": speaker,  # whose message: routes it to that player's backend (seats.py)
        "speaker": info.name,
        "opponent": opponent,
        "private_info": info.describe(),
        "endowment": list(info.endowment),
        "valuation": list(info.valuation),
        "tone": tone,
        "believed_fruits": list(believed),
        "belief_trust": view.trust if believed else None,
        "steering": prompts.steering_text(tone, opponent, believed, view.trust, view.stance),
    }
    structured = state.config.structured
    if not state.turns:
        return prompts.OPENING.render(fields, seed=seed, structured=structured)
    fields["dialogue"] = state.dialogue_text()
    fields["turns"] = state.turn_dicts()
    return prompts.MESSAGE.render(fields, seed=seed, structured=structured)


def step(state: DialogueState, tone: str, seed: int) -> Step[DialogueState]:
    """The next message in ``tone`` with LLM seed ``seed``, and all that follows it.

    Yields :class:`Call` or lists of them; receives parsed values (lists for lists).
    Returns the new state.
    """
    if state.is_terminal():
        raise ValueError("step: the negotiation is over; no further message")
    if tone not in TONES:
        raise ValueError(f"step: unknown tone {tone!r}; expected one of {TONES}")
    cfg = state.config
    ask: dict[str, Any] = {"seed": cfg.eval_seed, "structured": cfg.structured}
    speaker = state.next_speaker()
    text = yield call(_message_request(state, speaker, tone, seed))
    state = dataclasses.replace(state, turns=state.turns + (Turn(speaker, tone, seed, text),))
    m = state.num_messages
    turns = state.turn_dicts()
    dialogue = state.dialogue_text()

    agreed = False
    if {t.sender for t in state.turns} == {0, 1}:  # both players have spoken
        verdicts = yield judge.agreement_calls(dialogue, turns, **ask)
        agreed = judge.agreed(verdicts)
    if agreed:
        names = state.names
        infos = state.scenario.players
        summaries = yield judge.summary_calls(
            dialogue, turns, names, [p.endowment for p in infos], **ask
        )
        reading = judge.read_trade(summaries, names, infos, [t.text for t in state.turns])
        if reading.trade is not None:
            trade = reading.trade
            calc = yield [
                call(
                    prompts.COMPUTE_PAYOFF.render(
                        {
                            "player": p,
                            "name": names[p],
                            "private_info": infos[p].describe(),
                            "trade": reading.text,
                            "valuation": list(infos[p].valuation),
                        },
                        **ask,
                    )
                )
                for p in range(2)
            ]
            values = yield [
                call(
                    prompts.EXTRACT_PAYOFF.render(
                        {"player": p, "name": names[p], "calculation": calc[p]}, **ask
                    )
                )
                for p in range(2)
            ]
            record = PayoffRecord(
                message=m,
                llm=(float(values[0]), float(values[1])),
                exact=(trade.payoff(0, infos[0]), trade.payoff(1, infos[1])),
                trade_text=reading.text,
                feasible=trade.feasible(infos),
            )
            return dataclasses.replace(state, agreement=True, payoff=record)
        state = dataclasses.replace(state, not_exchanges=state.not_exchanges + (m,))

    if state.beliefs is not None and not state.is_terminal():
        receiver = 1 - speaker
        guess = yield call(
            prompts.GUESS_FRUIT.render(
                {
                    "player": receiver,
                    "observer": state.names[receiver],
                    "opponent": state.names[speaker],
                    "dialogue": dialogue,
                    "turns": turns,
                },
                **ask,
            )
        )
        guess_record = GuessRecord(
            message=m,
            observer=receiver,
            guess=guess,
            truth=state.scenario.players[speaker].most_wanted(),
        )
        beliefs = list(state.beliefs)
        if guess is not None:
            evidence = [
                Evidence(subject=state.names[speaker], value=guess, source="llm_guess", step=m)
            ]
            previous = [g.guess for g in state.guesses if g.observer == receiver and g.guess]
            if previous:
                # The receiver's judgment of the sender's claim (models without trust
                # ignore it): the same fruit asked for again confirms it.
                evidence.append(
                    Evidence(
                        subject=state.names[speaker],
                        actor=state.names[receiver],
                        kind="intent",
                        value="Defend" if previous[-1] == guess else "Deceive",
                        credibility=CONSISTENT_CLAIM if previous[-1] == guess else CHANGED_CLAIM,
                        source="claim_consistency",
                        step=m,
                    )
                )
            beliefs[receiver] = beliefs[receiver].observe_all(evidence)
        state = dataclasses.replace(
            state, beliefs=(beliefs[0], beliefs[1]), guesses=state.guesses + (guess_record,)
        )
    return state


def opening_step(state: DialogueState) -> Step[DialogueState]:
    """Player 1's fixed opening: the scenario's tone, the first seed."""
    return step(state, state.scenario.opening_tone, 0)


# --- the engine protocol -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DialogueLogic:
    """Fruit trading for the engine (:class:`games.engine.protocol.GameLogic`).

    Decisions are tones; each is followed by a uniform chance node over the
    ``config.num_seeds`` LLM seeds of the message (Lindström et al. Fig. 4).
    """

    config: Config
    num_players: int = 2

    def is_terminal(self, state: DialogueState) -> bool:
        return state.is_terminal()

    def current_player(self, state: DialogueState) -> int:
        return state.next_speaker()

    def legal_actions(self, state: DialogueState) -> Sequence[int]:
        return range(len(TONES))

    def chance_outcomes(self, state: DialogueState) -> list[tuple[int, float]]:
        return []  # no chance states inside a negotiation

    def seed_outcomes(self, state: DialogueState, action: int) -> list[tuple[int, float]]:
        n = self.config.num_seeds
        return [(s, 1.0 / n) for s in range(n)]

    def step(self, state: DialogueState, action: int, outcome: int | None) -> Step[DialogueState]:
        return step(state, TONES[action], int(outcome or 0))

    def information_state(self, state: DialogueState, player: int) -> str:
        return state.information_state(player)

    def returns(self, state: DialogueState) -> tuple[float, float]:
        return state.returns()

    def action_to_string(self, state: DialogueState, action: int) -> str:
        return f"tone={TONES[action]}"
