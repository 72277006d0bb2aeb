"""Listening in the Werewolf day: every listener's opponent model after a statement.

Each living listener's model observes the statement as a message;
``dirichlet`` also gets GRATR's identity judgments (task
``opponents.identity``), ``gratr`` the identity judgments and the intents
(task ``opponents.intent``), asked of the LLM as engine calls, one batch per
statement (:data:`games.werewolf.day.state.EXTRACTION` says which model
asks what). :mod:`games.werewolf.day.steps` describes the tree.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, cast

from games.engine.calls import Call, Step
from games.werewolf.day.state import EXTRACTION, DayRoot
from games.werewolf.players.llm import call_seed
from games.werewolf.players.prompts import player_name as _name
from games.werewolf.rules import SPECIAL_ROLES, SpeechAct
from gt_llm.opponents import (
    Evidence,
    OpponentModel,
    ParsedRecords,
    identity_request,
    intent_request,
    intents_to_evidence,
    judgments_to_evidence,
    parse_identity_judgments,
    parse_intents,
    read_identity_judgments,
    read_intents,
)
from gt_llm.opponents import SpeechAct as ExtractedAct
from gt_llm.opponents.extraction import ActKind

__all__ = ["listen"]

_NO_RECORDS: ParsedRecords = ParsedRecords(())


def _extraction_calls(
    root: DayRoot, observer: int, speaker: int, act: SpeechAct, text: str, step: int
) -> list[Call[Any]]:
    """GRATR's extraction requests of one listener about one statement (per the model)."""
    s = root.settings
    kinds = EXTRACTION[s.opponent_model]
    if not kinds:
        return []
    names = [_name(p) for p in range(s.config.num_players)]
    role = root.role(observer)
    result = act.result
    extracted = ExtractedAct(
        kind=cast(ActKind, act.kind),  # the day's speech acts are a subset of ActKind
        speaker=_name(speaker),
        target=_name(act.target) if act.target is not None else "",
        role=act.role or ("werewolf" if result == "werewolf" else (result or "")),
    )
    if extracted.kind == "share_check" and extracted.role not in s.hypotheses:
        # A team result ("not_werewolf") is no role: the check then says nothing of one.
        extracted = dataclasses.replace(extracted, kind="defend", role="")
    common: dict[str, Any] = dict(
        players=names,
        self_id=_name(observer),
        self_role=role,
        unique=[r for r in SPECIAL_ROLES if s.config.roles.count(r) == 1],
        impostor="" if role == "werewolf" else "werewolf",
        statement=text,
        act=extracted,
    )
    calls: list[Call[Any]] = []
    seed = call_seed(root.game_seed, "extract", step, observer)
    structured = s.structured
    if "identity" in kinds:
        request = identity_request(
            identities=s.hypotheses, seed=seed, structured=structured, **common
        )
        calls.append(
            Call(
                request,
                functools.partial(read_identity_judgments, request)
                if structured
                else functools.partial(
                    parse_identity_judgments, players=tuple(names), identities=s.hypotheses
                ),
                lambda _r: _NO_RECORDS,
            )
        )
    if "intent" in kinds:
        request = intent_request(seed=seed, structured=structured, **common)
        calls.append(
            Call(
                request,
                functools.partial(read_intents, request)
                if structured
                else functools.partial(parse_intents, players=tuple(names)),
                lambda _r: _NO_RECORDS,
            )
        )
    return calls


def listen(
    root: DayRoot,
    models: tuple[OpponentModel | None, ...],
    speaker: int,
    act: SpeechAct,
    text: str,
    step: int,
) -> Step[tuple[OpponentModel | None, ...]]:
    """Every living listener's model after one statement (one batch of calls)."""
    listeners = [p for p in root.living if p != speaker and models[p] is not None]
    per = [_extraction_calls(root, p, speaker, act, text, step) for p in listeners]
    flat = [c for cs in per for c in cs]
    answers = (yield flat) if flat else []
    out = list(models)
    k = 0
    # Time steps are the rules' rounds, as in the arena (GRATR's Eq. 4 decays per round).
    rnd = root.round
    message = Evidence(
        subject=_name(speaker), source="statement", step=rnd, kind="message", actor=_name(speaker),
        text=text,
    )  # fmt: skip
    for p, cs in zip(listeners, per, strict=True):
        evidence = [message]
        for c in cs:
            recs = answers[k]
            k += 1
            if c.request.task == "opponents.identity":
                evidence += judgments_to_evidence(recs.items, step=rnd, speaker=_name(speaker))
            else:
                evidence += intents_to_evidence(recs.items, step=rnd)
        model = out[p]
        assert model is not None  # listeners have a model
        out[p] = model.observe_all(evidence)
    return tuple(out)
