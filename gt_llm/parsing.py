"""Typed parsers for LLM answers, and the re-ask / fallback policy.

Every answer the toolkit reads goes through a parser that returns a value or
raises :class:`~gt_llm.errors.ParseError` carrying the raw text. What happens
after a parse error is decided by a :class:`ParsePolicy`: re-ask the model a
bounded number of times with deterministically derived seeds, then use a
documented fallback value, which is logged and counted in
:class:`ParseStats` (never a silent default).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from gt_llm.chat import ChatModel, ChatRequest, ChatResponse
from gt_llm.errors import ParseError
from gt_llm.prompt_examples import repeats_named_value

logger = logging.getLogger(__name__)

T = TypeVar("T")
Parser = Callable[[str], T]

_NUMBER = re.compile(r"[-+\u2212]?\d+(?:\.\d+)?")
_YES = re.compile(r"\b(yes|agreement reached|agreed)\b", re.IGNORECASE)
_NO = re.compile(r"\b(no|no agreement|not reached)\b", re.IGNORECASE)


def parse_yes_no(text: str) -> bool:
    """Reads a yes/no answer from its first yes-like or no-like word.

    Raises:
      ParseError: neither, or both at the same first position.
    """
    yes = _YES.search(text)
    no = _NO.search(text)
    if yes is None and no is None:
        raise ParseError("a yes/no answer", text)
    if yes is not None and (no is None or yes.start() < no.start()):
        return True
    return False


def parse_number(text: str, *, label: str | None = None) -> float:
    """Reads a number; with ``label``, the number after ``label:`` (last such one).

    Raises:
      ParseError: no number (after the label, if given).
    """
    if label is not None:
        hits = re.findall(rf"{re.escape(label)}\s*[:=]\s*([-+\u2212]?\d+(?:\.\d+)?)", text, re.I)
        if not hits:
            raise ParseError(f"a number after '{label}:'", text)
        return float(hits[-1].replace("\u2212", "-"))
    hit = _NUMBER.search(text)
    if hit is None:
        raise ParseError("a number", text)
    return float(hit.group(0).replace("\u2212", "-"))


def parse_choice(text: str, options: Sequence[str]) -> str:
    """Reads exactly one of ``options`` (case-insensitive, singular or plural).

    Raises:
      ParseError: none of the options, or more than one, is named.
    """
    found = []
    for opt in options:
        stem = opt[:-1] if opt.endswith("s") else opt
        if re.search(rf"\b{re.escape(stem)}s?\b", text, re.IGNORECASE):
            found.append(opt)
    if len(found) != 1:
        raise ParseError(f"exactly one of {list(options)}", text)
    return found[0]


#: Deepest nesting (objects and lists) of a JSON answer :func:`parse_json_object` reads.
#: Answer formats need a few levels; a deeper answer is a parse error, found before
#: the decoder could run out of stack (a ``RecursionError`` would crash the run).
MAX_JSON_DEPTH = 32

# A JSON string (to its end when unterminated, so the scan stays linear) or a bracket.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def replace_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so that it can be stored.

    A JSON string may hold an escape such as ``\\ud800`` alone: it decodes to a
    code point that no UTF-8 text can hold, so the cache, the logs and every
    later prompt (its cache key) would fail on it. The backends read it as
    U+FFFD REPLACEMENT CHARACTER, as a UTF-8 decoder reads invalid bytes.
    (A Python string holds a valid surrogate pair as one code point, so every
    surrogate left in it is a lone one.)
    """
    return text if text.isascii() else _LONE_SURROGATE.sub("\ufffd", text)


def _json_depth(text: str) -> int:
    """The deepest nesting of brackets in ``text`` outside JSON strings."""
    depth = deepest = 0
    for token in _JSON_TOKEN.findall(text):
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth -= 1
    return deepest


def _holds_lone_surrogate(obj: Any) -> bool:
    """Whether a decoded JSON value has a string (or key) with a lone surrogate."""
    stack = [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if not value.isascii() and _LONE_SURROGATE.search(value):
                return True
        elif isinstance(value, dict):
            stack.extend(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def parse_json_object(text: str, *, keys: Sequence[str] = ()) -> dict[str, Any]:
    """Reads the first JSON object in the text (code fences allowed).

    Raises:
      ParseError: no JSON object, invalid JSON, nested deeper than
        :data:`MAX_JSON_DEPTH`, a string that is not valid Unicode (an escaped
        lone surrogate such as ``\\ud800``, which no UTF-8 text can hold), or a
        required key missing.
    """
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end <= start:
        raise ParseError("a JSON object", text)
    body = text[start : end + 1]
    # Cheap count first: only an answer with many brackets needs the scan.
    if body.count("{") + body.count("[") > MAX_JSON_DEPTH and _json_depth(body) > MAX_JSON_DEPTH:
        raise ParseError(f"a JSON object nested at most {MAX_JSON_DEPTH} levels deep", text)
    try:
        obj = json.loads(body)
    except json.JSONDecodeError:
        raise ParseError("a valid JSON object", text) from None
    except RecursionError:  # only when called with little stack left: still the answer's fault
        raise ParseError(
            f"a JSON object nested at most {MAX_JSON_DEPTH} levels deep", text
        ) from None
    if not isinstance(obj, dict):
        raise ParseError("a JSON object", text)
    if _holds_lone_surrogate(obj):
        raise ParseError("a JSON object whose strings are valid Unicode (no lone surrogate)", text)
    missing = [k for k in keys if k not in obj]
    if missing:
        raise ParseError(f"a JSON object with keys {list(keys)}", text)
    return obj


@dataclasses.dataclass(frozen=True)
class ParsePolicy:
    """What to do after a parse error.

    Attributes:
      max_reasks: How many times to re-ask before falling back.
      seed_stride: Re-ask ``k`` uses seed ``seed + k * seed_stride`` (deterministic,
        and far from the seeds the games use as chance outcomes).
    """

    max_reasks: int = 2
    seed_stride: int = 1_000_003

    def __post_init__(self) -> None:
        if self.max_reasks < 0:
            raise ValueError("ParsePolicy: max_reasks must be >= 0")

    def reask(self, request: ChatRequest, attempt: int) -> ChatRequest:
        return request.with_seed(request.seed + attempt * self.seed_stride)


class ParseStats:
    """Thread-safe counters of parses, re-asks and fallbacks, per task.

    Beside the parse counts, one count of answer quality: ``copied``, the
    parsed answers that repeat a value their prompt names as an example
    (:func:`gt_llm.prompt_examples.repeats_named_value`) -- an answer can parse
    and still carry no information.
    """

    KINDS = ("parsed", "reasks", "fallbacks", "copied")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.parsed: Counter[str] = Counter()
        self.reasks: Counter[str] = Counter()
        self.fallbacks: Counter[str] = Counter()
        self.copied: Counter[str] = Counter()

    def add(self, kind: str, task: str, n: int = 1) -> None:
        with self._lock:
            getattr(self, kind)[task] += n

    def to_dict(self) -> dict[str, Any]:
        """The counters per task, tasks sorted (so the order calls ended in cannot show)."""
        with self._lock:
            return {
                "parsed": dict(sorted(self.parsed.items())),
                "reasks": dict(sorted(self.reasks.items())),
                "fallbacks": dict(sorted(self.fallbacks.items())),
                "total_fallbacks": sum(self.fallbacks.values()),
                "copied": dict(sorted(self.copied.items())),
            }

    @classmethod
    def pooled(cls, dicts: Sequence[dict[str, Any]]) -> ParseStats:
        """The counters of several :meth:`to_dict` outputs added together (e.g. a series)."""
        out = cls()
        for d in dicts:
            for kind in cls.KINDS:
                for task, n in d.get(kind, {}).items():
                    out.add(kind, task, int(n))
        return out

    def fallback_rates(self) -> dict[str, float]:
        """Per task, the share of its decisions that ended in the fallback.

        A decision either parses (at some attempt) or falls back, so the rate is
        ``fallbacks / (parsed + fallbacks)``; re-asks are attempts, not decisions.
        """
        with self._lock:
            tasks = sorted(set(self.parsed) | set(self.fallbacks))
            return {
                t: self.fallbacks[t] / (self.parsed[t] + self.fallbacks[t])
                for t in tasks
                if self.parsed[t] + self.fallbacks[t] > 0
            }


@dataclasses.dataclass(frozen=True)
class Parsed(Generic[T]):
    """A parsed answer: the value, the response it came from, and how it was got."""

    value: T
    response: ChatResponse | None
    attempts: int
    fell_back: bool


def _per_request(name: str, given: Any, n: int) -> list[Any]:
    """One callable per request, from one shared callable or a per-request sequence."""
    if callable(given):
        return [given] * n
    items = list(given)
    if len(items) != n:
        raise ValueError(
            f"complete_parsed_batch: {name} has {len(items)} entries for {n} requests; "
            f"pass one {name} or one per request"
        )
    return items


def complete_parsed_batch(
    model: ChatModel,
    requests: Sequence[ChatRequest],
    parser: Parser[T] | Sequence[Parser[T]],
    *,
    fallback: Callable[[ChatRequest], T] | Sequence[Callable[[ChatRequest], T]],
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
    max_concurrency: int | None = None,
) -> list[Parsed[T]]:
    """Asks and parses many requests; failures are re-asked in batches, then fall back.

    Every attempt sends all still-failing requests as one ``complete_batch``,
    whether they share a parser or each has its own.

    Args:
      model: The model (usually cached).
      requests: The requests.
      parser: Returns a value or raises ParseError; one for the whole batch, or
        a sequence with one parser per request.
      fallback: The documented value to use when every attempt failed; one for
        the whole batch, or a sequence with one per request.
      policy: Re-ask policy (default :class:`ParsePolicy`).
      stats: Counters to update.
      max_concurrency: Bound on concurrent calls.

    Raises:
      ValueError: a per-request ``parser`` or ``fallback`` sequence whose length
        is not the number of requests.
    """
    parsers = _per_request("parser", parser, len(requests))
    fallbacks = _per_request("fallback", fallback, len(requests))
    policy = policy or ParsePolicy()
    stats = stats if stats is not None else ParseStats()
    results: list[Parsed[T] | None] = [None] * len(requests)
    pending = list(range(len(requests)))
    last: dict[int, ChatResponse] = {}
    for attempt in range(policy.max_reasks + 1):
        if not pending:
            break
        batch = [
            requests[i] if attempt == 0 else policy.reask(requests[i], attempt) for i in pending
        ]
        responses = model.complete_batch(batch, max_concurrency=max_concurrency)
        still = []
        for i, resp in zip(pending, responses, strict=True):
            last[i] = resp
            try:
                results[i] = Parsed(parsers[i](resp.text), resp, attempt + 1, False)
                stats.add("parsed", requests[i].task)
                if repeats_named_value((m.content for m in requests[i].messages), resp.text):
                    stats.add("copied", requests[i].task)
            except ParseError as err:
                logger.debug("parse error on %s (attempt %d): %s", requests[i].task, attempt, err)
                still.append(i)
        if attempt > 0:
            for i in pending:
                stats.add("reasks", requests[i].task)
        pending = still
    for i in pending:
        value = fallbacks[i](requests[i])
        stats.add("fallbacks", requests[i].task)
        logger.warning(
            "parse fallback for task %s after %d attempts: using %r (last answer: %.120r)",
            requests[i].task,
            policy.max_reasks + 1,
            value,
            last[i].text if i in last else "",
        )
        results[i] = Parsed(value, last.get(i), policy.max_reasks + 1, True)
    return results  # type: ignore[return-value]


def complete_parsed(
    model: ChatModel,
    request: ChatRequest,
    parser: Parser[T],
    *,
    fallback: Callable[[ChatRequest], T],
    policy: ParsePolicy | None = None,
    stats: ParseStats | None = None,
) -> Parsed[T]:
    """Single-request form of :func:`complete_parsed_batch`."""
    return complete_parsed_batch(
        model, [request], parser, fallback=fallback, policy=policy, stats=stats
    )[0]
