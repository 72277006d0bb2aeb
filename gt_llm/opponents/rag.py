"""Retrieval baselines of the GRATR paper: NativeRAG and RerankRAG.

Both keep every message (the same history GRATR sees), show the last K like
every model, and add the top-k past messages most relevant to the decision,
the query being the decision's goal text plus the names of the players it
concerns (the same goal text GRATR gets).

* ``native-rag`` (Lewis et al., 2020, as the GRATR paper uses it): BM25
  (``bm25s``, Okapi, its default k1 = 1.5, b = 0.75) over the messages, top-k.
* ``rerank-rag`` (Sun et al., 2023): BM25 retrieves ``rerank_factor * k``
  candidates, which are then reranked and cut to k. With a chat model in the
  context, each candidate gets an LLM relevance score 0-10 (task
  ``opponents.rerank``; an unreadable answer falls back to 0, logged and counted
  by :mod:`gt_llm.parsing`); ties keep BM25 order. Without a model the rerank is
  lexical: candidates are ordered by how many *distinct* query terms they
  contain (coverage), then by BM25 score, then most recent first.

Tokens are lower-case alphanumeric runs with a small English stop-word list
removed; a word followed by a number is joined ("Player 3" -> ``player3``) so
that player names survive as one token (bm25s's own tokenizer drops
one-character tokens, and with them the player numbers). Ties in BM25 score go
to the most recent message. An empty query retrieves nothing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gt_llm.opponents.base import (
    Belief,
    Consultation,
    Evidence,
    OpponentContext,
    OpponentModel,
    message_view,
)
from gt_llm.opponents.common import (
    FactsMixin,
    HistoryMixin,
)
from gt_llm.opponents.extraction import parse_relevance, rerank_request
from gt_llm.parsing import complete_parsed_batch

_STOPWORDS = frozenset(
    "a an and are as at be but by for from has have he her him his i if in is it its me my "
    "of on or our she so that the their them they this to was we were what when which who "
    "will with you your".split()
)
_JOIN = re.compile(r"([a-z]+)\s+(\d+)")
_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-case tokens, stop words removed, "word N" joined (module docstring)."""
    joined = _JOIN.sub(r"\1\2", text.lower())
    return [t for t in _TOKEN.findall(joined) if t not in _STOPWORDS]


def bm25_scores(documents: Sequence[str], query: str) -> np.ndarray:
    """BM25 score of every document for ``query`` (zeros for an empty query)."""
    q = tokenize(query)
    if not documents or not q:
        return np.zeros(len(documents))
    import bm25s  # here, not at import: it loads jax (about a second) in every process

    retriever = bm25s.BM25()
    retriever.index([tokenize(d) for d in documents], show_progress=False)
    return np.asarray(retriever.get_scores(q), dtype=float)


def bm25_top(documents: Sequence[str], query: str, k: int) -> list[int]:
    """Indices of the top-``k`` documents with a positive score, best first, ties recent first."""
    scores = bm25_scores(documents, query)
    order = sorted(range(len(documents)), key=lambda i: (-scores[i], -i))
    return [i for i in order[:k] if scores[i] > 0]


def _query(goal: str, subjects: Sequence[str]) -> str:
    return " ".join([goal, *subjects]).strip()


@dataclasses.dataclass(frozen=True)
class NativeRag(FactsMixin, HistoryMixin, OpponentModel):
    """BM25 retrieval of the top-k past messages (module docstring).

    Like ``none`` it keeps the certain facts (its ``belief`` is the prior with
    them applied); what it adds is the retrieved messages.
    """

    name = "native-rag"

    context: OpponentContext = OpponentContext()
    history: tuple[Evidence, ...] = ()
    facts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    excluded: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)

    def observe(self, evidence: Evidence) -> NativeRag:
        model = self._observe_message(evidence, keep_all=True)
        return model._with_fact(evidence)

    def belief(self, subject: str) -> Belief:
        self.context.check_subject(f"{type(self).__name__}.belief", subject)
        about = tuple(e for e in self.history if subject in (e.subject, e.actor))
        return self._fact_belief(subject, about)

    def retrieve(self, query: str, subjects: Sequence[str] = ()) -> list[Evidence]:
        """The top-k messages for ``query``, best first."""
        idx = bm25_top([e.text for e in self.history], query, self.context.top_k)
        return [self.history[i] for i in idx]

    def consult(self, *, goal: str = "", subjects: Sequence[str] | None = None) -> Consultation:
        who = list(subjects or ())
        picked = self.retrieve(_query(goal, who), who) if self.context.top_k else []
        return self._consultation(retrieved=[message_view(e) for e in picked])

    def snapshot(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "k": self.context.k,
            "top_k": self.context.top_k,
            "facts": dict(self.facts),
            "excluded": {s: sorted(x) for s, x in sorted(self.excluded.items())},
            "history": [e.to_dict() for e in self.history],
        }


@dataclasses.dataclass(frozen=True)
class RerankRag(NativeRag):
    """BM25 candidates reranked (LLM relevance or lexical coverage), top-k kept.

    Attributes:
      rerank_factor: How many candidates per kept message BM25 retrieves.
    """

    name = "rerank-rag"

    rerank_factor: int = 3

    def __post_init__(self) -> None:
        if self.rerank_factor < 1:
            raise ValueError(f"RerankRag: rerank_factor must be >= 1, got {self.rerank_factor}")

    def retrieve(self, query: str, subjects: Sequence[str] = ()) -> list[Evidence]:
        k = self.context.top_k
        docs = [e.text for e in self.history]
        scores = bm25_scores(docs, query)
        order = sorted(range(len(docs)), key=lambda i: (-scores[i], -i))
        cand = [i for i in order[: k * self.rerank_factor] if scores[i] > 0]
        key: dict[int, tuple[float, ...]]  # sort key per candidate
        if self.context.chat is not None:
            rel = self._llm_relevance(cand, query, subjects)
            key = {i: (-rel[j], j) for j, i in enumerate(cand)}
        else:
            terms = set(tokenize(query))
            key = {i: (-len(terms & set(tokenize(docs[i]))), -scores[i], -i) for i in cand}
        return [self.history[i] for i in sorted(cand, key=lambda i: key[i])[:k]]

    def _llm_relevance(
        self, cand: Sequence[int], goal: str, subjects: Sequence[str]
    ) -> list[float]:
        chat = self.context.chat
        if chat is None:
            raise ValueError("RerankRag._llm_relevance: the context has no chat model")
        requests = [
            rerank_request(
                goal=goal,
                focus=subjects,
                speaker=self.history[i].actor,
                target=self.history[i].subject,
                step=self.history[i].step,
                message=self.history[i].text,
            )
            for i in cand
        ]
        parsed = complete_parsed_batch(chat, requests, parse_relevance, fallback=lambda _r: 0.0)
        return [p.value for p in parsed]

    def snapshot(self) -> dict[str, Any]:
        return super().snapshot() | {
            "rerank_factor": self.rerank_factor,
            "reranker": self.context.chat.spec if self.context.chat is not None else "lexical",
        }


def make_native_rag(context: OpponentContext) -> NativeRag:
    """Factory registered as ``native-rag``."""
    return NativeRag(context=context)


def make_rerank_rag(context: OpponentContext) -> RerankRag:
    """Factory registered as ``rerank-rag``."""
    return RerankRag(context=context)


__all__ = [
    "NativeRag",
    "RerankRag",
    "bm25_scores",
    "bm25_top",
    "make_native_rag",
    "make_rerank_rag",
    "tokenize",
]
