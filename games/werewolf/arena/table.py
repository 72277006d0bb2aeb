"""The table of one arena game: agents seated after the deal, their calls routed by seat.

:func:`check_seating` and :func:`seat_models` split the dealt roles into the two
halves (GRATR's seating); :class:`ArenaTable` is the LLM table that seats the
agents (:class:`SeatedAgent`), feeds their belief providers, and lets a CFR
agent's policy choose its day speeches. :mod:`games.werewolf.arena.matches`
plays a game on it and scores the pairs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from games.engine.calls import Step
from games.werewolf import rules
from games.werewolf.agents import Agent, seat_of_request
from games.werewolf.day.features import decision_features
from games.werewolf.play import runner
from games.werewolf.play.runner import Emit
from games.werewolf.players.beliefs import BeliefSettings, make_seat_beliefs
from games.werewolf.players.cfr_policy import DayPolicy, choose_speech, full_game_ranking
from games.werewolf.players.llm import Decision, statement
from games.werewolf.players.rule_based import RuleBasedPlayer
from games.werewolf.players.table import LLMTable
from games.werewolf.players.table_beliefs import TableBeliefs
from games.werewolf.players.table_replay import is_debate_start
from games.werewolf.players.view import PlayerView, view_from_knowledge
from games.werewolf.rules import Config, Knowledge
from gt_llm.chat import ChatModel
from gt_llm.opponents import OpponentModel
from gt_llm.routing import RoutedModel

__all__ = ["ArenaTable", "DayStartTable", "SeatedAgent", "WOLF", "check_seating", "seat_models"]

WOLF = "werewolf"


# --------------------------------------------------------------------------- seats


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
    """Which model plays each seat, given the dealt roles (:mod:`games.werewolf.arena.runner`).

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


# --------------------------------------------------------------------------- the table


@dataclasses.dataclass(frozen=True)
class SeatedAgent:
    """An agent at the table: its description, the model its seats call and its policy.

    Attributes:
      agent: The agent (:class:`games.werewolf.agents.Agent`).
      model: The chat model of its seats (None for rule-based players).
      policy: Its day policy, CFR-solved or uniform (None: the model's own tones and acts).
    """

    agent: Agent
    model: ChatModel | None = None
    policy: DayPolicy | None = None


class ArenaTable(LLMTable):
    """The LLM table of one arena game: the seats' agents are assigned after the deal.

    An :class:`~games.werewolf.players.table.LLMTable` (batched calls, deception
    analyses, history window, call log) whose belief providers are the seats'
    :class:`~games.werewolf.players.table_beliefs.TableBeliefs`. Before each decision every
    provider takes the seat's new private facts and announcements; after each
    step the queued statements and votes of all seats are extracted as one
    batch. The providers' records go to the log with the step (``state.num_steps``).

    With ``agents``, each seat's requests go to its agent's model
    (:func:`games.werewolf.agents.seat_of_request`), a rule-based agent's seats
    are :class:`~games.werewolf.players.rule_based.RuleBasedPlayer`, and a CFR
    or uniform agent's day speeches follow its policy (:meth:`_decision`).
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
        structured: bool = True,
        agents: Mapping[str, SeatedAgent] | None = None,
    ) -> None:
        # One switch for every call of the table: the players' and GRATR's extraction.
        settings = dataclasses.replace(settings, structured=structured)
        self.agents = dict(agents or {})
        if self.agents:
            chat = RoutedModel(
                {n: a.model for n, a in self.agents.items() if a.model is not None},
                lambda request: self.seat_models[seat_of_request(request)],
            )
        super().__init__(
            chat,
            config,
            seed=seed,
            belief_factory=self._provider,
            history_limit=settings.k,
            max_concurrency=max_concurrency,
            log_prompts=log_prompts,
            structured=structured,
        )
        self.wolf_model = wolf_model
        self.leader_model = leader_model
        self.settings = settings
        self.seat_models: tuple[str, ...] = ()
        self.adapters: dict[int, TableBeliefs] = {}
        self.identification: list[tuple[str, str, int, str, bool]] = []
        self.judgments: list[tuple[str, str, int, str, str, tuple[tuple[str, float], ...]]] = []
        #: Per agent with a policy: its day speeches by outcome (matched, or why not).
        self.policy_counts: dict[str, dict[str, int]] = {}
        self._policy_records: list[dict[str, Any]] = []

    def _provider(self, knowledge: Knowledge) -> TableBeliefs:
        return self.adapters[knowledge.player]

    def _opponent(self, name: str) -> str | None:
        """The opponent model of a seat's agent (its name when no agents are given)."""
        return self.agents[name].agent.opponent if self.agents else name

    def _assign(self, state: rules.GameState, emit: Emit) -> None:
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 0xA7E]))
        self.seat_models = seat_models(state.roles, self.wolf_model, self.leader_model, rng)
        for p, (name, role) in enumerate(zip(self.seat_models, state.roles, strict=True)):
            opponent = self._opponent(name)
            if opponent is None:  # a rule-based agent: no model, no prompts
                self.seats[p] = RuleBasedPlayer()
                emit("seat_agent", seat=p, agent=name, role=role, players="rule-based")
                continue
            sb = make_seat_beliefs(opponent, self.config, p, role, self.settings, chat=self.model)
            self.adapters[p] = TableBeliefs(sb, self.model)
            emit(
                "belief_init",
                seat=p,
                model=opponent,
                agent=name,
                role=role,
                settings=dataclasses.asdict(self.settings),
            )

    def _decision(
        self,
        state: rules.GameState,
        p: int,
        view: Knowledge,
        legal: list[rules.Action],
        phase: str,
        rng: np.random.Generator,
    ) -> Step[Decision]:
        seated = self.agents.get(self.seat_models[p]) if self.agents else None
        if phase != "day_speak" or seated is None or seated.policy is None:
            return super()._decision(state, p, view, legal, phase, rng)
        extras = self._extras(p, phase)
        # The solver ranks suspects by the listener's reading for a vote (day/ranking.py).
        provider = self.providers.get(p)
        ranking = full_game_ranking(
            view,
            provider.beliefs("day_vote") if provider is not None else None,
            extras["suspicion"],
        )
        today = [
            (int(e.data["player"]), rules.speech_act_from_json(e.data["act"]))
            for e in view.events
            if e.kind == "speech" and e.round == view.round
        ]
        choice = choose_speech(
            seated.policy,
            view.role,
            [a for a in legal if isinstance(a, rules.SpeechAct)],
            ranking,
            np.random.default_rng(self._seed(state, "policy", p)),
            features=decision_features(view.role, p, view.partners, today),
        )
        counts = self.policy_counts.setdefault(seated.agent.name, {})
        counts[choice.outcome] = counts.get(choice.outcome, 0) + 1
        self._policy_records.append(
            {
                "seat": p,
                "agent": seated.agent.name,
                "tone": choice.tone,
                "token": choice.token,
                "outcome": choice.outcome,
            }
        )
        if choice.act is None:  # nothing matched (or no slot, not legal): the model's own choice
            return super()._decision(state, p, view, legal, phase, rng)
        return _worded(view_from_knowledge(view, **extras), choice.act, self._seed(state, phase, p))

    def _sync(self, state: rules.GameState, emit: Emit) -> None:
        self._run([a.flush() for a in self.adapters.values() if a.queue], emit)
        for p, a in self.adapters.items():
            for rec in a.records:
                body = {k: v for k, v in rec.items() if k != "type"}
                emit(rec["type"], seat=p, step=state.num_steps, **body)
            a.records.clear()
            team = "werewolf" if state.roles[p] == WOLF else "village"
            model = self.seat_models[p]
            for labels, beliefs, infers in a.consults:
                for q, label in sorted(labels.items()):
                    if not state.alive[q]:  # judgments of the living only
                        continue
                    truth = state.roles[q]
                    dist = tuple(sorted(beliefs[q].items()))
                    self.judgments.append((model, team, state.round, truth, label, dist))
                    if infers:
                        ok = label == truth
                        self.identification.append((model, team, state.round, truth, ok))
            a.consults.clear()

    def decide(
        self, state: rules.GameState, requests: Sequence[runner.Request], emit: Emit
    ) -> list[rules.Action]:
        if not self.seat_models:
            self._assign(state, emit)
        for p, a in self.adapters.items():
            a.add_private(rules.knowledge(state, p).events)
        self._sync(state, emit)
        self.before_decisions(state)
        out = super().decide(state, requests, emit)
        for rec in self._policy_records:
            emit("policy", **rec)
        self._policy_records.clear()
        self._sync(state, emit)
        return out

    def before_decisions(self, state: rules.GameState) -> None:
        """Called at every step once the seats' models have their new facts, before any decides.

        Nothing by default. A check reads the seats' models here
        (``self.adapters[p].state.model``): at the first ``day_bid`` step of a
        round they are the models at the start of that day's debate, which the
        day study's roots rebuild (:class:`DayStartTable`).
        """

    def after_step(
        self,
        before: rules.GameState,
        moves: Sequence[tuple[int, rules.Action]],
        after: rules.GameState,
        emit: Emit,
    ) -> None:
        super().after_step(before, moves, after, emit)
        self._sync(after, emit)


class DayStartTable(ArenaTable):
    """The arena's table, keeping each seat's model at the start of every day's debate.

    ``day_models[round][seat]``: what the day study's roots must equal (the
    one-stream test and ``benchmarks/day_roots_vs_arena.py`` compare them).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.day_models: dict[int, dict[int, OpponentModel]] = {}

    def before_decisions(self, state: rules.GameState) -> None:
        if is_debate_start(state) and state.round not in self.day_models:
            self.day_models[state.round] = {p: a.state.model for p, a in self.adapters.items()}


def _worded(view: PlayerView, act: rules.SpeechAct, seed: int) -> Step[Decision]:
    """A speech act chosen by a policy, worded by the seat's model."""
    text = yield from statement(view, act, seed=seed)
    return Decision(act, text=text)
