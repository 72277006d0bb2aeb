"""Opponent models behind one interface, chosen by name.

``make_opponent_model(name, context)`` builds a registered model from a typed
:class:`OpponentContext`:

* ``none`` — the plain LLM: the last K (= 15) messages, no belief;
* ``dirichlet`` — Dirichlet belief revision over hypotheses per player;
* ``gratr`` — the GRATR trust graph (Eqs. (1)-(9), Algorithms 1-2);
* ``bayes`` — the exact posterior over the deals a seat cannot rule out, under
  stated likelihoods: the reference the others are scored against;
* ``native-rag`` — BM25 retrieval of the top-k relevant past messages;
* ``rerank-rag`` — BM25 candidates reranked (LLM or lexical), top-k kept.

Compatibility path: ``make_opponent_model("dirichlet", hypotheses=FRUITS)``
(keyword arguments instead of a context, as fruit trading calls it today)
builds the context ``OpponentContext(hypotheses=FRUITS)`` — no fixed player
list, so any subject is accepted. It exists for callers written before the
context; new code passes a context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Registers the scripted answers of the opponent tasks (opponents.identity, ...).
import gt_llm.opponents.scripted  # noqa: F401
from gt_llm.opponents.base import (
    IDENTITY_ODDS_RATIO,
    UNSURE,
    Belief,
    ChainView,
    Consultation,
    Evidence,
    MessageView,
    OpponentContext,
    OpponentModel,
    PlayerView,
    PromptFields,
    identity_label,
)
from gt_llm.opponents.bayes import BayesModel, BayesParams, make_bayes
from gt_llm.opponents.common import (
    stance_of,
)
from gt_llm.opponents.dirichlet import DirichletBelief, make_dirichlet
from gt_llm.opponents.extraction import (
    IdentityJudgment,
    Intent,
    ParsedRecords,
    SpeechAct,
    StatementArgs,
    extract_statement_evidence,
    identity_request,
    intent_request,
    intents_to_evidence,
    judgments_to_evidence,
    parse_identity_judgments,
    parse_intents,
    parse_relevance,
    read_identity_judgments,
    read_intents,
    read_relevance,
    rerank_request,
)
from gt_llm.opponents.gratr import GratrModel, make_gratr
from gt_llm.opponents.gratr_export import (
    read_trust_graph_graphml,
    trust_graph_figure,
    trust_graph_graphml,
    trust_graph_to_json,
)
from gt_llm.opponents.gratr_types import GratrParams
from gt_llm.opponents.plain import PlainHistory, make_plain
from gt_llm.opponents.prompts import OPPONENT_PROMPTS
from gt_llm.opponents.rag import NativeRag, RerankRag, make_native_rag, make_rerank_rag

#: ``factory(context) -> OpponentModel``.
OpponentFactory = Callable[[OpponentContext], OpponentModel]

_MODELS: dict[str, OpponentFactory] = {
    "none": make_plain,
    "dirichlet": make_dirichlet,
    "gratr": make_gratr,
    "bayes": make_bayes,
    "native-rag": make_native_rag,
    "rerank-rag": make_rerank_rag,
}

_CONTEXT_FIELDS = frozenset(f for f in OpponentContext.__dataclass_fields__)


def register_opponent_model(name: str, factory: OpponentFactory) -> None:
    """Registers an opponent model factory under an exact name."""
    if name in _MODELS:
        raise ValueError(f"register_opponent_model: {name!r} is already registered")
    _MODELS[name] = factory


def opponent_models() -> list[str]:
    """The registered names, sorted."""
    return sorted(_MODELS)


def make_opponent_model(
    name: str, context: OpponentContext | None = None, /, **compat: Any
) -> OpponentModel:
    """Builds the opponent model registered as ``name``.

    Args:
      name: A registered name (:func:`opponent_models`).
      context: The typed context.
      **compat: Compatibility path only (see the module docstring): the fields of
        an :class:`OpponentContext`, e.g. ``hypotheses=FRUITS``, when no context
        is given.

    Raises:
      ValueError: unknown name, both a context and keyword fields, or an unknown field.
    """
    if name not in _MODELS:
        raise ValueError(
            f"make_opponent_model: unknown opponent model {name!r}; known: {opponent_models()}"
        )
    if context is not None and compat:
        raise ValueError("make_opponent_model: pass a context or keyword fields, not both")
    if context is None:
        unknown = set(compat) - _CONTEXT_FIELDS
        if unknown:
            raise ValueError(
                f"make_opponent_model: unknown fields {sorted(unknown)}; "
                f"OpponentContext has {sorted(_CONTEXT_FIELDS)}"
            )
        context = OpponentContext(**compat)
    return _MODELS[name](context)


__all__ = [
    "IDENTITY_ODDS_RATIO",
    "OPPONENT_PROMPTS",
    "UNSURE",
    "BayesModel",
    "BayesParams",
    "Belief",
    "ChainView",
    "Consultation",
    "DirichletBelief",
    "Evidence",
    "GratrModel",
    "GratrParams",
    "IdentityJudgment",
    "Intent",
    "MessageView",
    "NativeRag",
    "OpponentContext",
    "OpponentFactory",
    "OpponentModel",
    "ParsedRecords",
    "PlainHistory",
    "PlayerView",
    "PromptFields",
    "RerankRag",
    "SpeechAct",
    "StatementArgs",
    "extract_statement_evidence",
    "identity_label",
    "identity_request",
    "intent_request",
    "intents_to_evidence",
    "judgments_to_evidence",
    "make_opponent_model",
    "opponent_models",
    "parse_identity_judgments",
    "parse_intents",
    "parse_relevance",
    "read_identity_judgments",
    "read_intents",
    "read_relevance",
    "register_opponent_model",
    "rerank_request",
    "stance_of",
    "read_trust_graph_graphml",
    "trust_graph_figure",
    "trust_graph_graphml",
    "trust_graph_to_json",
]
