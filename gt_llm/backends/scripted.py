"""The scripted model: a deterministic, rule-based stand-in for an LLM.

It answers from a request's *task and typed fields*, never by reading prompt
text, and returns natural-language text that goes through the same parsers
as a real model's. Games register one handler per task with
:func:`register_scripted_task`.

Randomness comes from a generator seeded by a stable hash of (task, the
fields that seed it, seed), so the same request gives the same answer on
every machine and in every process, and different seeds can give different
answers. A handler declares what it depends on:

* ``reads`` -- the fields the handler is given. Every other field of the
  request is withheld (reading it raises ``KeyError``), so changing a field
  that is not read can never change the answer.
* ``seeded_by`` -- the fields (a subset of ``reads``) hashed into the seed of
  the generator; by default all of ``reads``. A field read but left out of
  ``seeded_by`` acts *only through the handler's rules*: changing it redraws
  no noise (no slip, tie-break or phrasing changes by accident). The
  fruit-trading stand-in uses this for the prompted belief, so that the
  difference between the tone and tone+belief variants is what the belief
  does, not hash noise.

Without declarations (``reads=None``) the handler gets every field and all of
them seed the generator.

Structured requests (with a JSON schema, :mod:`gt_llm.answers`) get the same
answer as JSON: a task registered with ``as_json`` has its text turned into
the JSON object of the task's answer format (the value the free-text parser
would read, so results do not depend on the mode); a text that the free-text
parser would reject stays as it is, and fails the structured parser the same
way. Tasks whose handlers already write JSON need no ``as_json``.

Its output is never an LLM result; results it produces are labelled with the
model name ``scripted:rules-v2``. The version is bumped whenever the rules
change, because the call cache is keyed on the model name: old answers are
never mixed with new ones. A variant ``scripted:rules-v2/NAME`` follows the
same rules with a noise stream of its own (its name enters every request's
generator seed): two stand-in "models" for tests of games whose seats call
different backends.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Usage
from gt_llm.errors import ParseError

logger = logging.getLogger(__name__)

#: ``handler(fields, rng) -> text``.
ScriptedHandler = Callable[[Mapping[str, Any], np.random.Generator], str]
#: ``as_json(text, fields) -> answer object``; raises ParseError or ValueError when the
#: text carries no valid answer.
JsonConverter = Callable[[str, Mapping[str, Any]], Mapping[str, Any]]

SCRIPTED_MODEL_NAME = "rules-v2"


@dataclasses.dataclass(frozen=True)
class ScriptedTask:
    """A registered scripted answer and the fields it depends on.

    Attributes:
      handler: ``handler(fields, rng) -> text``.
      reads: Fields the handler is given (``None``: all of them).
      seeded_by: Fields hashed into the generator's seed (``None``: all that
        are read).
      as_json: Turns the handler's text into the structured answer (``None``:
        the text is already the JSON answer).
    """

    handler: ScriptedHandler
    reads: tuple[str, ...] | None = None
    seeded_by: tuple[str, ...] | None = None
    as_json: JsonConverter | None = None

    def visible_fields(self, request: ChatRequest) -> Mapping[str, Any]:
        """The request's fields the handler may read (read-only)."""
        if self.reads is None:
            return request.fields
        missing = [f for f in self.reads if f not in request.fields]
        if missing:
            raise ValueError(
                f"ScriptedModel.complete: task {request.task!r} reads fields {missing} that "
                f"the request lacks; render the request from the task's template "
                f"(it has {sorted(request.fields)})"
            )
        return MappingProxyType({f: request.fields[f] for f in self.reads})

    def seed_fields(self, request: ChatRequest) -> dict[str, Any]:
        """The fields (plain containers) that seed the request's generator."""
        names = self.seeded_by if self.seeded_by is not None else self.reads
        everything = request.fields_dict()
        if names is None:
            return everything
        return {f: everything[f] for f in names}


_TASKS: dict[str, ScriptedTask] = {}


def _names(value: Sequence[str] | None, what: str, task: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        raise TypeError(
            f"register_scripted_task({task!r}): {what} must be a sequence of field names, "
            f"not the string {value!r}; write {what}=({value!r},)"
        )
    return tuple(dict.fromkeys(str(v) for v in value))


def register_scripted_task(
    task: str,
    handler: ScriptedHandler,
    *,
    reads: Sequence[str] | None = None,
    seeded_by: Sequence[str] | None = None,
    as_json: JsonConverter | None = None,
) -> None:
    """Registers the scripted answer for ``task`` (re-registering replaces it).

    Args:
      task: Task name (``"<game>.<task>"``).
      handler: ``handler(fields, rng) -> text``.
      reads: The fields the handler reads; it is given only these. ``None``
        gives it every field.
      seeded_by: The fields whose values seed the generator; must be among
        ``reads``. Default: all of ``reads``. Leave out a field that should
        act only through the rules (see the module docstring).
      as_json: ``as_json(text, fields) -> object``: the structured answer of a
        request with a schema (see the module docstring).

    Raises:
      ValueError: ``seeded_by`` names a field that is not read.
    """
    r = _names(reads, "reads", task)
    s = _names(seeded_by, "seeded_by", task)
    if s is not None and r is not None and not set(s) <= set(r):
        raise ValueError(
            f"register_scripted_task({task!r}): seeded_by names fields that are not read: "
            f"{sorted(set(s) - set(r))}; add them to reads= or drop them"
        )
    _TASKS[task] = ScriptedTask(handler=handler, reads=r, seeded_by=s, as_json=as_json)


def scripted_tasks() -> list[str]:
    """Tasks the scripted model can answer (after the games are imported)."""
    return sorted(_TASKS)


def scripted_task(task: str) -> ScriptedTask:
    """The registration of ``task``.

    Raises:
      ValueError: no scripted answer is registered for ``task``.
    """
    try:
        return _TASKS[task]
    except KeyError:
        raise ValueError(
            f"ScriptedModel.complete: no scripted answer for task {task!r}; "
            "import the game module that defines it (e.g. `import games`) "
            f"or register one with register_scripted_task. Known: {scripted_tasks()}"
        ) from None


def request_rng(request: ChatRequest, variant: str = "") -> np.random.Generator:
    """A generator seeded by a stable hash of (task, seeding fields, seed[, variant]).

    The seeding fields are those the task's registration names (all fields
    for an unregistered task). A variant (``scripted:rules-v2/NAME``) adds its
    name to the hash: the same rules with a noise stream of its own.
    """
    reg = _TASKS.get(request.task)
    fields = reg.seed_fields(request) if reg is not None else request.fields_dict()
    payload = json.dumps(
        [request.task, fields, request.seed] + ([variant] if variant else []),
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    digest = hashlib.sha256(payload.encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def scripted_variant(model: str) -> str:
    """The variant a scripted model name holds: ``""`` for ``rules-v2``, ``b`` for ``rules-v2/b``.

    Raises:
      ValueError: another model name, or a variant that is not 1-32 of ``a-z0-9-``.
    """
    name, slash, variant = str(model).partition("/")
    if name not in ("", SCRIPTED_MODEL_NAME) or (
        slash and not re.fullmatch(r"[a-z0-9-]{1,32}", variant)
    ):
        raise ValueError(
            f"load_model: the scripted backend's model is {SCRIPTED_MODEL_NAME!r}, or "
            f"{SCRIPTED_MODEL_NAME}/NAME for a variant (same rules, its own noise; NAME of "
            f"a-z, 0-9 and -); got {model!r}"
        )
    return variant


def _approx_tokens(text: str) -> int:
    return max(1, len(text.split()))


class ScriptedModel(ChatModel):
    """Deterministic rule-based model answering registered tasks."""

    backend = "scripted"

    def __init__(self, model: str = "") -> None:
        self.variant = scripted_variant(model)
        self.model = SCRIPTED_MODEL_NAME + (f"/{self.variant}" if self.variant else "")
        # No I/O: concurrency buys nothing, and 1 keeps batches simple and ordered.
        self.max_concurrency = 1

    def complete(self, request: ChatRequest) -> ChatResponse:
        start = time.perf_counter()
        reg = scripted_task(request.task)
        text = reg.handler(reg.visible_fields(request), request_rng(request, self.variant))
        if request.schema is not None and reg.as_json is not None:
            try:
                text = json.dumps(dict(reg.as_json(text, request.fields)), ensure_ascii=False)
            except (ParseError, ValueError) as err:
                # Kept as written: the structured parser rejects it as the free-text one would.
                logger.debug(
                    "scripted %s: no structured answer in %.80r (%s)", request.task, text, err
                )
        prompt_tokens = sum(_approx_tokens(m.content) for m in request.messages)
        return ChatResponse(
            text=text,
            backend=self.backend,
            model=self.model,
            usage=Usage(prompt_tokens, _approx_tokens(text)),
            latency_s=time.perf_counter() - start,
            cached=False,
        )


_OPENERS = (
    "Here is my answer.",
    "Happy to help.",
    "Sure.",
    "Let me answer briefly.",
    "Good question.",
    "Thanks for asking.",
    "Alright.",
    "Let me think about that.",
)
_MIDDLES = (
    "You sent a prompt of {words} word(s).",
    "Your prompt has {words} word(s); the word {word!r} stands out.",
    "I read {words} word(s), starting with {first!r}.",
    "On {word!r}: my confidence is {confidence}%.",
    "My short take on {word!r} is {verdict}.",
    "Of your {words} word(s), I would focus on {word!r}.",
)
_VERDICTS = ("yes", "no", "maybe", "it depends", "probably", "unlikely")
_CLOSERS = (
    "This reply comes from gt-llm's scripted stand-in model, not from an LLM.",
    "(Scripted offline model: deterministic, rule-based, not a language model.)",
)


def _free_form(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    # Every choice comes from the request's own generator, so the answer is a pure
    # function of (prompt, seed) yet varies from seed to seed like a sampled LLM.
    prompt = str(fields.get("prompt", "")).strip()
    tokens = prompt.split() or ["(empty)"]
    opener = _OPENERS[int(rng.integers(len(_OPENERS)))]
    middle = _MIDDLES[int(rng.integers(len(_MIDDLES)))].format(
        words=len(prompt.split()),
        word=tokens[int(rng.integers(len(tokens)))],
        first=tokens[0],
        confidence=int(rng.integers(50, 100)),
        verdict=_VERDICTS[int(rng.integers(len(_VERDICTS)))],
    )
    closer = _CLOSERS[int(rng.integers(len(_CLOSERS)))]
    return f"{opener} {middle} {closer}"


register_scripted_task("free_form", _free_form, reads=("prompt",))
