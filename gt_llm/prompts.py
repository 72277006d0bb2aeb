"""Prompt templates: typed fields in, chat messages out.

Each game keeps all its templates in one module (a :class:`PromptBook`), so
no prompt text is assembled anywhere else. A template names the fields it
needs; rendering checks them and returns a :class:`~gt_llm.chat.ChatRequest`
that carries both the fields (read by the scripted model) and the messages
(read by real models).
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from gt_llm.answers import AnswerFormat
from gt_llm.chat import ChatRequest, Message

#: A task's answer format: fixed, or built from the request's fields (per-request options).
AnswerSpec = AnswerFormat | Callable[[Mapping[str, Any]], AnswerFormat]


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@dataclasses.dataclass(frozen=True)
class PromptTemplate:
    """A system + user message pair with ``{field}`` placeholders.

    Attributes:
      task: Task name, unique within the toolkit (``"<game>.<task>"``).
      system: System message template.
      user: User message template.
      extra_fields: Fields the request carries for the scripted model even
        though no placeholder uses them; they must still be *implied* by the
        rendered text (e.g. a list that the text spells out), because caching is
        keyed on the messages.
      temperature: Default sampling temperature for this task.
      max_tokens: Default token bound for this task.
      answer: The task's structured answer (:class:`~gt_llm.answers.AnswerFormat`,
        or a function of the fields for per-request options); a structured
        request carries its JSON schema.
      answer_line: What a structured request adds to the user message to ask
        for the JSON answer (backends without constrained decoding see only
        this); empty when the user message already asks for the JSON object.
    """

    task: str
    system: str
    user: str
    extra_fields: tuple[str, ...] = ()
    temperature: float = 1.0
    max_tokens: int = 512
    answer: AnswerSpec | None = None
    answer_line: str = ""

    def answer_format(self, fields: Mapping[str, Any]) -> AnswerFormat:
        """The answer format of a request rendered from ``fields``.

        Raises:
          ValueError: the task declares no answer format.
        """
        if self.answer is None:
            raise ValueError(f"PromptTemplate({self.task!r}): no answer format declared")
        return self.answer if isinstance(self.answer, AnswerFormat) else self.answer(fields)

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(_placeholders(self.system) | _placeholders(self.user)) | frozenset(
            self.extra_fields
        )

    def render(
        self,
        fields: Mapping[str, Any],
        *,
        seed: int = 0,
        temperature: float | None = None,
        max_tokens: int | None = None,
        structured: bool = False,
    ) -> ChatRequest:
        """Renders the template into a request.

        With ``structured`` (and a declared answer format) the request carries
        the format's JSON schema, the user message ends with
        :attr:`answer_line`, and the token bound is the task's own answer
        budget: what a valid answer of its format can take
        (:meth:`~gt_llm.answers.AnswerFormat.token_budget`), unless
        ``max_tokens`` is given. A free-text request keeps the template's bound.

        Raises:
          ValueError: if a field is missing or unexpected.
        """
        missing = self.fields - set(fields)
        extra = set(fields) - self.fields
        if missing or extra:
            raise ValueError(
                f"PromptTemplate.render({self.task!r}): missing fields {sorted(missing)}, "
                f"unexpected fields {sorted(extra)}; pass exactly {sorted(self.fields)}"
            )
        text_fields = {k: v for k, v in fields.items() if k not in self.extra_fields}
        messages = []
        if self.system:
            messages.append(Message("system", self.system.format(**text_fields)))
        user = self.user.format(**text_fields)
        tokens = self.max_tokens if max_tokens is None else max_tokens
        schema = None
        if structured and self.answer is not None:
            fmt = self.answer_format(fields)
            schema = fmt.schema()
            tokens = fmt.token_budget() if max_tokens is None else max_tokens
            if self.answer_line:
                user = f"{user}\n\n{self.answer_line.format(**text_fields)}"
        messages.append(Message("user", user))
        return ChatRequest(
            task=self.task,
            fields=dict(fields),
            messages=tuple(messages),
            seed=seed,
            temperature=self.temperature if temperature is None else temperature,
            max_tokens=tokens,
            schema=schema,
        )


#: Every prompt book made in this process, in order (:func:`prompt_books`).
_BOOKS: list[PromptBook] = []


class PromptBook:
    """The templates of one game, looked up by task name.

    Every book is listed in :func:`prompt_books` when it is made, so checks
    that concern every prompt (no copyable example values) find a
    new game's tasks without naming them.
    """

    def __init__(self, templates: Iterable[PromptTemplate]) -> None:
        self._templates: dict[str, PromptTemplate] = {}
        for t in templates:
            if t.task in self._templates:
                raise ValueError(f"PromptBook: duplicate task {t.task!r}")
            self._templates[t.task] = t
        _BOOKS.append(self)

    def __getitem__(self, task: str) -> PromptTemplate:
        try:
            return self._templates[task]
        except KeyError:
            raise KeyError(
                f"PromptBook: no template for task {task!r}; known: {sorted(self._templates)}"
            ) from None

    def __contains__(self, task: str) -> bool:
        return task in self._templates

    def __iter__(self) -> Iterator[PromptTemplate]:
        return iter(self._templates.values())

    def render(self, task: str, fields: Mapping[str, Any], **kwargs: Any) -> ChatRequest:
        return self[task].render(fields, **kwargs)


def prompt_books() -> tuple[PromptBook, ...]:
    """Every prompt book made so far (import ``games`` and ``gt_llm.opponents`` first)."""
    return tuple(_BOOKS)


def template_for(task: str) -> PromptTemplate:
    """The template of ``task`` in the prompt books made so far.

    Raises:
      KeyError: no book has the task.
    """
    for book in _BOOKS:
        if task in book:
            return book[task]
    raise KeyError(f"template_for: no prompt book has the task {task!r}")
