"""Answer formats: one description of a task's answer, read as a JSON schema and as a validator.

A task that wants a structured answer describes it once, as an
:class:`AnswerFormat` — a JSON object whose keys are :class:`AnswerKey` values
(free text with a length bound, one of a list of legal options, a boolean, a
whole number from a list or range, a number in a range, or a nested object).
From that one description come both

* :meth:`AnswerFormat.schema` — the JSON schema a backend uses to constrain
  decoding (llama.cpp's grammar, an OpenAI-compatible ``response_format``);
* :meth:`AnswerFormat.read` — the validator every answer goes through: it reads
  the first JSON object of the text and checks every key against the same
  options and bounds, raising :class:`~gt_llm.errors.ParseError` otherwise;

so the options a model is allowed to produce and the options the parser accepts
cannot drift apart. A format with a *discriminator* (Werewolf's speech act) is
a union: the value of one key decides which further keys the object has
(``anyOf`` in the schema).

Whole numbers are listed (``enum``), because grammar backends do not enforce
``minimum`` and ``maximum``; a number in a range keeps the standard
``minimum``/``maximum`` (the ``local`` backend narrows it to hundredths for its
grammar, :func:`grammar_schema`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from gt_llm.errors import ParseError
from gt_llm.parsing import parse_json_object

__all__ = [
    "AnswerFormat",
    "AnswerKey",
    "boolean",
    "choice",
    "grammar_schema",
    "integer",
    "items",
    "nested",
    "number",
    "text",
]

KINDS = ("text", "choice", "boolean", "integer", "number", "object", "list")


@dataclasses.dataclass(frozen=True)
class AnswerKey:
    """One key of a JSON answer.

    Attributes:
      name: The key.
      kind: ``text``, ``choice``, ``boolean``, ``integer``, ``number`` or ``object``.
      options: ``choice``: the legal strings; ``integer``: the legal whole numbers;
        ``boolean``: the legal truth values (e.g. only ``False`` when saving is
        impossible).
      minimum: ``number``: the smallest legal value.
      maximum: ``number``: the largest legal value.
      max_length: ``text``: the longest legal text in characters (bounds generation).
      nullable: ``null`` is also legal (read as ``None``).
      required: The key must be present (else it may be left out).
      keys: ``object``: the nested keys; ``list``: the keys of each item (an object).
      max_items: ``list``: the most items.
    """

    name: str
    kind: str
    options: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    nullable: bool = False
    required: bool = True
    keys: tuple[AnswerKey, ...] = ()
    max_items: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"AnswerKey({self.name!r}): kind must be one of {KINDS}")
        if self.kind in ("choice", "integer") and not self.options and not self.nullable:
            raise ValueError(f"AnswerKey({self.name!r}): a {self.kind} needs options")
        if self.kind == "number" and (self.minimum is None or self.maximum is None):
            raise ValueError(f"AnswerKey({self.name!r}): a number needs minimum and maximum")

    # --- schema ---------------------------------------------------------------------

    def schema(self) -> dict[str, Any]:
        """The JSON schema of this key's value."""
        if self.kind == "text":
            out: dict[str, Any] = {"type": "string", "minLength": 1}
            if self.max_length is not None:
                out["maxLength"] = self.max_length
        elif self.kind == "object":
            return _object_schema(self.keys, nullable=self.nullable)
        elif self.kind == "list":
            out = {"type": "array", "items": _object_schema(self.keys)}
            if self.max_items is not None:
                out["maxItems"] = self.max_items
        elif self.kind == "number":
            out = {"type": "number", "minimum": self.minimum, "maximum": self.maximum}
        elif self.kind == "boolean":
            out = {"enum": list(self.options)} if self.options else {"type": "boolean"}
        else:
            out = {"enum": list(self.options)}
        if self.nullable:
            if "enum" in out:
                out["enum"] = out["enum"] + [None]
            else:
                out = {"anyOf": [out, {"type": "null"}]}
        return out

    # --- validation -----------------------------------------------------------------

    def read(self, value: Any, text: str) -> Any:
        """Validates one value of this key (``text`` is the whole answer, for errors).

        Raises:
          ParseError: the value is not legal.
        """
        if value is None:
            if self.nullable:
                return None
            raise ParseError(f'"{self.name}" not null', text)
        if self.kind == "text":
            if not isinstance(value, str) or not value.strip():
                raise ParseError(f'"{self.name}" as non-empty text', text)
            if self.max_length is not None and len(value) > self.max_length:
                raise ParseError(f'"{self.name}" at most {self.max_length} characters', text)
            return value.strip()
        if self.kind == "choice":
            if isinstance(value, str):
                for option in self.options:
                    if value.strip().lower() == str(option).lower():
                        return option
            raise ParseError(f'"{self.name}" one of {list(self.options)} (got {value!r})', text)
        if self.kind == "boolean":
            if isinstance(value, bool) and (not self.options or value in self.options):
                return value
            legal = list(self.options) if self.options else [True, False]
            raise ParseError(f'"{self.name}" one of {legal} (got {value!r})', text)
        if self.kind == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, int) and not isinstance(value, bool) and value in self.options:
                return value
            raise ParseError(f'"{self.name}" one of {list(self.options)} (got {value!r})', text)
        if self.kind == "number":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                x = float(value)
                if math.isfinite(x) and self.minimum <= x <= self.maximum:  # type: ignore[operator]
                    return x
            raise ParseError(
                f'"{self.name}" a number from {self.minimum:g} to {self.maximum:g} (got {value!r})',
                text,
            )
        if self.kind == "list":
            if not isinstance(value, list):
                raise ParseError(f'"{self.name}" as a JSON list', text)
            if self.max_items is not None and len(value) > self.max_items:
                raise ParseError(f'"{self.name}" with at most {self.max_items} items', text)
            items = []
            for item in value:
                if not isinstance(item, Mapping):
                    raise ParseError(f'"{self.name}" as a list of JSON objects', text)
                items.append(_read_keys(self.keys, item, text))
            return items
        # object
        if not isinstance(value, Mapping):
            raise ParseError(f'"{self.name}" as a JSON object', text)
        return _read_keys(self.keys, value, text)


def _object_schema(keys: Sequence[AnswerKey], *, nullable: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "object",
        "properties": {k.name: k.schema() for k in keys},
        "required": [k.name for k in keys if k.required],
        "additionalProperties": False,
    }
    return {"anyOf": [out, {"type": "null"}]} if nullable else out


def _read_keys(keys: Sequence[AnswerKey], obj: Mapping[str, Any], text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in keys:
        if key.name not in obj:
            if key.required:
                raise ParseError(f'a JSON object with the key "{key.name}"', text)
            continue
        out[key.name] = key.read(obj[key.name], text)
    return out


@dataclasses.dataclass(frozen=True)
class AnswerFormat:
    """A JSON-object answer: its keys, and optionally a union over a discriminator key.

    Attributes:
      keys: Keys every answer has.
      discriminator: With ``variants``: the name of the key (a ``choice`` among
        ``keys``) whose value selects the extra keys.
      variants: ``{value of the discriminator: extra keys}``; values of the
        discriminator that are not listed have no extra keys.
    """

    keys: tuple[AnswerKey, ...]
    discriminator: str | None = None
    variants: Mapping[str, tuple[AnswerKey, ...]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [k.name for k in self.keys]
        if len(set(names)) != len(names):
            raise ValueError(f"AnswerFormat: duplicate keys in {names}")
        if self.discriminator is not None and self._discriminator_key().kind != "choice":
            raise ValueError("AnswerFormat: the discriminator must be a choice key")

    def _discriminator_key(self) -> AnswerKey:
        for k in self.keys:
            if k.name == self.discriminator:
                return k
        raise ValueError(f"AnswerFormat: no key {self.discriminator!r} among the keys")

    def schema(self) -> dict[str, Any]:
        """The JSON schema of the answer (an object, or ``anyOf`` objects for a union)."""
        if self.discriminator is None:
            return _object_schema(self.keys)
        branches = []
        for option in self._discriminator_key().options:
            keys = tuple(
                dataclasses.replace(k, options=(option,)) if k.name == self.discriminator else k
                for k in self.keys
            ) + tuple(self.variants.get(option, ()))
            branches.append(_object_schema(keys))
        return branches[0] if len(branches) == 1 else {"anyOf": branches}

    def read(self, text: str) -> dict[str, Any]:
        """The validated answer: the first JSON object of ``text``, key by key.

        Keys the format does not know are ignored; every known key is checked.

        Raises:
          ParseError: no JSON object, a required key missing, or an illegal value.
        """
        obj = parse_json_object(text)
        out = _read_keys(self.keys, obj, text)
        if self.discriminator is not None:
            out.update(_read_keys(self.variants.get(out[self.discriminator], ()), obj, text))
        return out

    def token_budget(self) -> int:
        """A bound on the tokens a valid answer can take (one token per text character)."""
        return 8 + sum(_key_tokens(k) for k in self._all_keys())

    def _all_keys(self) -> list[AnswerKey]:
        keys = list(self.keys)
        if self.variants:
            keys.extend(max(self.variants.values(), key=lambda ks: sum(map(_key_tokens, ks))))
        return keys


def _key_tokens(key: AnswerKey) -> int:
    base = 4 + len(key.name) // 2
    if key.kind == "text":
        # One token per character at worst, so a grammar-constrained answer always closes.
        return base + (key.max_length or 200)
    if key.kind == "object":
        return base + 4 + sum(_key_tokens(k) for k in key.keys)
    if key.kind == "list":
        return base + (key.max_items or 4) * (4 + sum(_key_tokens(k) for k in key.keys))
    if key.kind == "choice":
        return base + max((len(str(o)) for o in key.options), default=4) // 2 + 2
    return base + 4


def grammar_schema(schema: Any, steps: int = 100) -> Any:
    """``schema`` with every number range turned into a list of values a grammar can enforce.

    llama.cpp's schema-to-grammar conversion ignores ``minimum``/``maximum``;
    a ``{"type": "number", "minimum": a, "maximum": b}`` becomes an ``enum`` of
    ``steps + 1`` evenly spaced values (hundredths of the range by default), a
    subset of what the schema allows. Other nodes are copied unchanged.
    """
    if isinstance(schema, list):
        return [grammar_schema(s, steps) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if schema.get("type") == "number" and lo is not None and hi is not None:
        return {"enum": [round(lo + (hi - lo) * i / steps, 6) for i in range(steps + 1)]}
    return {k: grammar_schema(v, steps) for k, v in schema.items()}


# --- constructors -------------------------------------------------------------------


def text(name: str, max_length: int, *, required: bool = True) -> AnswerKey:
    """Free text of 1 to ``max_length`` characters."""
    return AnswerKey(name, "text", max_length=max_length, required=required)


def choice(name: str, options: Sequence[str], *, nullable: bool = False) -> AnswerKey:
    """One of ``options`` (exact strings; read case-insensitively)."""
    return AnswerKey(name, "choice", options=tuple(options), nullable=nullable)


def boolean(name: str, options: Sequence[bool] = ()) -> AnswerKey:
    """``true`` or ``false`` (or only those in ``options``)."""
    return AnswerKey(name, "boolean", options=tuple(options))


def integer(name: str, options: Sequence[int], *, nullable: bool = False) -> AnswerKey:
    """A whole number among ``options`` (pass ``range(lo, hi + 1)`` for a range)."""
    return AnswerKey(name, "integer", options=tuple(int(o) for o in options), nullable=nullable)


def number(name: str, minimum: float, maximum: float) -> AnswerKey:
    """A number from ``minimum`` to ``maximum``."""
    return AnswerKey(name, "number", minimum=float(minimum), maximum=float(maximum))


def items(name: str, keys: Sequence[AnswerKey], *, max_items: int) -> AnswerKey:
    """A list of at most ``max_items`` JSON objects, each with ``keys``."""
    return AnswerKey(name, "list", keys=tuple(keys), max_items=max_items)


def nested(name: str, keys: Sequence[AnswerKey], *, nullable: bool = False) -> AnswerKey:
    """A nested JSON object with ``keys``."""
    return AnswerKey(name, "object", keys=tuple(keys), nullable=nullable)
