"""Example values in prompt text: what a model could copy instead of answering.

A prompt that shows a concrete value as an example ("the number of the player,
e.g. 3", "for example: 1 banana for 2 apples", a sample JSON object, a quoted
``'Offer: 5'``) invites a small model to copy it: we found every
SmolLM2 opening repeating the fruit-trading example and all night actions of a
Werewolf game going to the example's seat. Formats are to be described by
their keys and legal ranges instead.

This module finds such values, for two readers:

* the prompt test (``tests/games/test_prompts_no_example_values.py``) renders every task
  and fails on an example that is also a legal answer
  (:func:`legal_examples`);
* the answer-quality counts (:class:`gt_llm.parsing.ParseStats`) count the
  answers that repeat a value their prompt names (:func:`repeats_named_value`).

Pure text functions; nothing here calls a model.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "example_spans",
    "legal_examples",
    "named_values",
    "repeats_named_value",
    "schema_legal",
]

#: Words that introduce an example value.
_MARKER = re.compile(
    r"\b(?:e\.\s?g\.|eg\.|i\.\s?e\.|for example|for instance|such as|example:|as in:)",
    re.IGNORECASE,
)
#: The example runs to the end of its parenthesis, sentence or line (at most this long).
_SPAN_END = re.compile(r"[)\]\n]|[.;](?:\s|$)")
_MAX_SPAN = 120
#: A sample JSON object with at least one concrete value: ``{"target": 3}``.
_JSON_SAMPLE = re.compile(r"\{[^{}\n]*\"[^\"\n]+\"\s*:\s*[^{}\n]+\}")
#: A quoted label with a number, shown as the answer's form: ``'Offer: 5'``, ``"Value: -2"``.
_LABEL_SAMPLE = re.compile(r"['\"`]\s*[A-Za-z][\w ]{0,30}:\s*(-?\d+(?:\.\d+)?)\s*['\"`]")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_WORD = re.compile(r"[A-Za-z][A-Za-z_-]*")


def example_spans(text: str) -> list[str]:
    """The example values a prompt shows: after an example word, sample JSON, quoted labels.

    Each span is the text of one example (stripped), e.g. ``"3"`` for
    ``"(the number, e.g. 3)"``.
    """
    spans: list[str] = []
    for m in _MARKER.finditer(text):
        rest = text[m.end() : m.end() + _MAX_SPAN]
        end = _SPAN_END.search(rest)
        span = (rest[: end.start()] if end else rest).strip(" :,\"'")
        if span:
            spans.append(span)
    for m in _JSON_SAMPLE.finditer(text):
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            spans.append(m.group(0))
            continue
        spans.extend(_scalars(obj))
    spans.extend(m.group(1) for m in _LABEL_SAMPLE.finditer(text))
    return spans


def _scalars(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _scalars(v)]
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    if value is None:
        return []
    return [json.dumps(value) if isinstance(value, bool) else str(value)]


def named_values(text: str) -> set[str]:
    """The values a prompt names as examples: each span, and its numbers and words (lower case)."""
    out: set[str] = set()
    for span in example_spans(text):
        out.add(" ".join(span.lower().split()))
        out.update(_NUMBER.findall(span))
        out.update(w.lower() for w in _WORD.findall(span) if len(w) > 2)
    return out


def schema_legal(
    schema: Mapping[str, Any] | None,
) -> tuple[set[str], list[tuple[float, float]], bool]:
    """What an answer schema allows: (enum values as text, number ranges, free text allowed).

    Enum values are lower-cased strings (``3``, ``yes``); a ``number`` with
    ``minimum``/``maximum`` gives a range; any ``string`` without an enum means
    free text, where every example is a legal answer.
    """
    values: set[str] = set()
    ranges: list[tuple[float, float]] = []
    free = False

    def walk(node: Any) -> None:
        nonlocal free
        if isinstance(node, list):
            for n in node:
                walk(n)
            return
        if not isinstance(node, Mapping):
            return
        if "enum" in node:
            values.update(json.dumps(v) if isinstance(v, bool) else str(v).lower()
                          for v in node["enum"] if v is not None)  # fmt: skip
        if node.get("type") == "string" and "enum" not in node:
            free = True
        if node.get("type") == "boolean" and "enum" not in node:
            values.update(("true", "false"))
        if node.get("type") == "number" and "minimum" in node and "maximum" in node:
            ranges.append((float(node["minimum"]), float(node["maximum"])))
        for v in node.values():
            walk(v)

    walk(schema or {})
    return values, ranges, free


def legal_examples(text: str, schema: Mapping[str, Any] | None) -> list[str]:
    """The example spans of ``text`` that hold a legal answer of ``schema``.

    A span is legal when one of its numbers or words is an enum value, a
    number falls in a number range, or the schema allows free text (any
    example is then a legal answer).
    """
    values, ranges, free = schema_legal(schema)
    bad = []
    for span in example_spans(text):
        tokens = {t.lower() for t in _WORD.findall(span)} | set(_NUMBER.findall(span))
        numbers = [float(n) for n in _NUMBER.findall(span)]
        if (
            free
            or tokens & values
            or any(lo <= x <= hi for x in numbers for lo, hi in ranges if math.isfinite(x))
        ):
            bad.append(span)
    return bad


def _answer_scalars(answer: str) -> list[str]:
    """The scalar values of a JSON answer, or the answer's own text when it is not JSON."""
    text = answer.strip()
    try:
        obj = json.loads(text)
    except ValueError:
        return [text]
    return _scalars(obj) if isinstance(obj, (Mapping, list)) else [text]


def repeats_named_value(prompt_texts: Iterable[str], answer: str) -> bool:
    """Whether an answer repeats a value its prompt names as an example.

    A scalar of the answer (a JSON answer's values, or the whole text) equal
    to a named value, or a text answer holding a named example phrase of
    three or more words.
    """
    named: set[str] = set()
    for t in prompt_texts:
        named |= named_values(t)
    if not named:
        return False
    phrases = [n for n in named if len(n.split()) >= 3]
    for value in _answer_scalars(answer):
        low = " ".join(value.lower().split())
        if low in named or any(_shares_phrase(p, low) for p in phrases):
            return True
    return False


def _shares_phrase(phrase: str, text: str, size: int = 4) -> bool:
    """Whether ``text`` holds ``size`` consecutive words of ``phrase`` (or all of a shorter one)."""
    words = re.findall(r"[\w']+", phrase)
    have = " " + " ".join(re.findall(r"[\w']+", text)) + " "
    n = min(size, len(words))
    return any(" " + " ".join(words[i : i + n]) + " " in have for i in range(len(words) - n + 1))
