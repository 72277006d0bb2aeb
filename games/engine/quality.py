"""Answer quality beside the parse counts: the counting every game shares.

A fallback rate measures parsing, not answers: a model can answer every
request in valid JSON and still copy the prompt's example, send every night
action to one seat or label every statement alike. These helpers turn a
game's raw counts into the shares its ``summary.json``, its end-of-run lines
and its views report. They are results to report, not gates.

* :func:`copied_shares` -- per task, the share of parsed answers that repeat a
  value the prompt names (``ParseStats``' ``copied`` count,
  :func:`gt_llm.prompt_examples.repeats_named_value`);
* :func:`largest_share` -- the largest share of any one value among many
  (one target among night actions or votes, one label among analyses);
* :func:`pool_counts` -- raw counts of several games added together;
* :func:`answer_quality` -- the report: copied shares, and the largest share
  of each named tally;
* :func:`quality_lines` -- the report as the lines a command prints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from gt_llm.safety import terminal_safe

__all__ = ["answer_quality", "copied_shares", "largest_share", "pool_counts", "quality_lines"]


def copied_shares(parse: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per task with parsed answers: ``{"copied", "parsed", "share"}`` (``ParseStats.to_dict``)."""
    parsed = parse.get("parsed", {})
    copied = parse.get("copied", {})
    return {
        task: {
            "copied": int(copied.get(task, 0)),
            "parsed": int(n),
            "share": copied.get(task, 0) / n,
        }
        for task, n in sorted(parsed.items())
        if n > 0
    }


def largest_share(counts: Mapping[Any, int]) -> dict[str, Any] | None:
    """The most frequent value's ``{"value", "count", "total", "share"}``; None when empty.

    Ties go to the value that sorts first as text, so the report is stable.
    """
    total = sum(int(n) for n in counts.values())
    if total == 0:
        return None
    value, count = min(counts.items(), key=lambda kv: (-int(kv[1]), str(kv[0])))
    return {"value": value, "count": int(count), "total": total, "share": int(count) / total}


def pool_counts(dicts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Nested ``{name: {value: count}}`` (or ``{name: count}``) tallies added together."""
    out: dict[str, Any] = {}
    for d in dicts:
        for name, value in d.items():
            if isinstance(value, Mapping):
                pooled = Counter(out.get(name, {}))
                pooled.update({str(k): int(v) for k, v in value.items()})
                out[name] = dict(pooled)
            else:
                out[name] = int(out.get(name, 0)) + int(value)
    return out


def answer_quality(
    parse: Mapping[str, Any],
    tallies: Mapping[str, Mapping[Any, int]] | None = None,
    counts: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The answer-quality report of a run.

    Args:
      parse: The run's parse counts (``ParseStats.to_dict``, with ``copied``).
      tallies: Named tallies of values (``{"night_targets": {seat: n}, ...}``), each
        reported by its :func:`largest_share`.
      counts: Other counts reported as they are (a game's own, e.g. contradictions).

    Returns:
      ``{"copied": per task, "copied_answers", "answers", "largest_share": per tally,
      **counts}``.
    """
    copied = copied_shares(parse)
    out: dict[str, Any] = {
        "copied": copied,
        "copied_answers": sum(c["copied"] for c in copied.values()),
        "answers": sum(c["parsed"] for c in copied.values()),
        "largest_share": {name: largest_share(t) for name, t in (tallies or {}).items()},
    }
    out.update(counts or {})
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def quality_lines(quality: Mapping[str, Any], indent: str = "  ") -> list[str]:
    """The report of :func:`answer_quality` as printed lines (the end of a run)."""
    worst = max(quality.get("copied", {}).items(), key=lambda kv: kv[1]["share"], default=None)
    line = (
        f"{indent}answer quality: {quality.get('copied_answers')}/{quality.get('answers')} parsed "
        "answers repeat a value their prompt names"
    )
    if worst is not None and worst[1]["copied"]:
        line += f" (most: {worst[0]} {worst[1]['copied']}/{worst[1]['parsed']})"
    lines = [line]
    shares = [
        f"{name.replace('_', ' ')} {_pct(s['share'])} to {_short(s['value'])} "
        f"({s['count']}/{s['total']})"
        for name, s in quality.get("largest_share", {}).items()
        if s is not None
    ]
    if shares:
        lines.append(f"{indent}largest share of one value: " + "; ".join(shares))
    other = {
        k: v
        for k, v in quality.items()
        if k not in ("copied", "copied_answers", "answers", "largest_share")
    }
    if other:
        lines.append(
            f"{indent}" + "; ".join(f"{k.replace('_', ' ')} {_flat(v)}" for k, v in other.items())
        )
    return lines


def _short(value: Any, width: int = 60) -> str:
    """``value`` on one line, cut to ``width`` characters, control characters escaped.

    A value can be model text (a fruit opening, an agreed trade): it is printed,
    so ESC, CR and bidi controls are shown as escapes (:func:`gt_llm.safety.terminal_safe`).
    """
    text = terminal_safe(" ".join(str(value).split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def _flat(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k.replace('_', ' ')} {_flat(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)
