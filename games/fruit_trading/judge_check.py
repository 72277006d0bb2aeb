"""The agreement judge, checked before it is trusted: its scores on a labelled set.

The set (:mod:`games.fruit_trading.judge_set`) holds fruit-trading dialogues
written for this project, each with a gold label (did the last message accept
a specific trade the other player proposed?) and, for an agreement, the
agreed trade. Every dialogue gets the requests a run asks (:mod:`games.fruit_trading.judge`:
the agreement question in both label orders, the trade summary in both orders of
its cases, the same builders and combining rules), and :func:`score` reports:

* **the verdict**: precision, recall and accuracy of "agreed" (both orders say
  Yes), each with its Wilson 95 % interval and its n, and how often each order
  alone says Yes;
* **the trade summary**: accuracy of the trade the game would pay for
  (:func:`~games.fruit_trading.judge.read_trade`): the gold trade on a gold
  agreement, no trade on the others; and how the summaries were read;
* **the game's verdict**: an agreement the game keeps (the judge says Yes and
  the summaries give a stated exchange), scored the same way.

``gt-llm fruit-trading judge-check`` writes the full result with one row per
dialogue; every ``fruit-trading run`` stores the scores of its judge (the
``--backend`` model) in ``summary.json`` under ``"judge"``
(:func:`judge_for_run`) and warns in one line when the verdict's precision
may be below :data:`PRECISION_FLOOR`. Scores are stored beside the call
cache (:class:`ScoreStore`, ``<cache>.judge.sqlite``), keyed by backend,
model, answer mode, seed and the hashes of the set and of the prompts, so a
run reuses them without asking again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from games.engine.calls import Step
from games.engine.quality import answer_quality, quality_lines
from games.engine.tree import run_steps
from games.fruit_trading import judge, prompts
from games.fruit_trading.judge_set import (
    CATEGORIES,
    JudgeDialogue,
    JudgeSet,
    load_judge_set,
)
from gt_llm.cache import combined_stats
from gt_llm.chat import ChatModel
from gt_llm.parsing import ParseStats
from gt_llm.routing import RoutedModel
from runs.intervals import wilson_interval

if TYPE_CHECKING:
    from games.fruit_trading.settings import ExperimentSettings

__all__ = [
    "PRECISION_FLOOR",
    "DialogueResult",
    "ScoreStore",
    "check_step",
    "judge_for_run",
    "judge_lines",
    "prompts_sha256",
    "run_judge_check",
    "score",
    "score_key",
    "scores_path",
]

logger = logging.getLogger(__name__)

#: A run warns when the lower end of the verdict precision's 95 % interval is below
#: this: the judge's agreements may then be wrong more often than 3 times in 10.
PRECISION_FLOOR = 0.7
#: The seed of the judge's calls in a run (``Config.eval_seed``).
RUN_SEED = 0
#: Bumped when the scoring (or the combining rules it shares with the game) changes, so
#: stored scores of the old scoring are never reused.
SCORING_VERSION = 1
#: Dialogues per batch of calls (the progress bar moves per batch).
_BATCH = 8


def prompts_sha256() -> str:
    """A hash of what the check asks: the judge's and the summary's templates, their orders."""
    parts: list[Any] = [SCORING_VERSION, list(prompts.LABEL_ORDERS), list(prompts.SUMMARY_ORDERS)]
    for t in (prompts.AGREEMENT, prompts.SUMMARIZE_TRADE):
        parts.append([t.task, t.system, t.user, t.answer_line, t.temperature, t.max_tokens])
    parts.append([prompts.summary_cases(o)["cases"] for o in prompts.SUMMARY_ORDERS])
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


# --- asking and scoring -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DialogueResult:
    """What the judge and the summary made of one labelled dialogue."""

    dialogue: JudgeDialogue
    verdicts: tuple[bool, ...]
    reading: judge.TradeReading

    @property
    def verdict(self) -> bool:
        return judge.agreed(self.verdicts)

    @property
    def kept(self) -> bool:
        """Whether the game would keep the agreement: a Yes verdict and a stated exchange."""
        return self.verdict and self.reading.trade is not None

    @property
    def trade_correct(self) -> bool:
        """The summaries give the gold trade on an agreement, and no trade on the others."""
        return self.reading.trade == self.dialogue.trade

    def to_json(self) -> dict[str, Any]:
        d = self.dialogue
        return {
            "id": d.id,
            "category": d.category,
            "gold_agreement": d.agreement,
            "gold_trade": None if d.trade is None else [list(g) for g in d.trade.gives],
            "verdicts": list(self.verdicts),
            "verdict": self.verdict,
            "verdict_correct": self.verdict == d.agreement,
            "summaries": [
                None if t is None else [list(g) for g in t.gives] for t in self.reading.summaries
            ],
            "reading": self.reading.outcome,
            "trade": None
            if self.reading.trade is None
            else [list(g) for g in self.reading.trade.gives],
            "trade_correct": self.trade_correct,
            "kept": self.kept,
        }


def check_step(item: JudgeDialogue, *, seed: int, structured: bool) -> Step[DialogueResult]:
    """The run's judge requests on one dialogue (both label orders, both summary orders)."""
    dialogue = prompts.render_dialogue(item.turns())
    turns = item.turns()
    values = yield [
        *judge.agreement_calls(dialogue, turns, seed=seed, structured=structured),
        *judge.summary_calls(
            dialogue, turns, item.players, item.endowments, seed=seed, structured=structured
        ),
    ]
    n = len(prompts.LABEL_ORDERS)
    verdicts = tuple(bool(v) for v in values[:n])
    reading = judge.read_trade(values[n:], item.players, item.infos(), item.texts())
    return DialogueResult(item, verdicts, reading)


def expected_calls() -> int:
    """Model calls of one check of the shipped set, at most (a re-ask adds none here: cached).

    Each dialogue asks the agreement in both label orders and the trade summary
    in both orders of its cases (:func:`check_step`).
    """
    return len(load_judge_set().dialogues) * (len(prompts.LABEL_ORDERS) + 2)


def proportion(successes: int, n: int) -> dict[str, Any]:
    """``{"value", "low", "high", "successes", "n"}`` with the Wilson 95 % interval (None at n 0)."""
    if n == 0:
        return {"value": None, "low": None, "high": None, "successes": 0, "n": 0}
    low, high = wilson_interval(successes, n)
    return {"value": successes / n, "low": low, "high": high, "successes": successes, "n": n}


def _binary(predicted: Sequence[bool], gold: Sequence[bool]) -> dict[str, Any]:
    tp = sum(p and g for p, g in zip(predicted, gold, strict=True))
    fp = sum(p and not g for p, g in zip(predicted, gold, strict=True))
    fn = sum(g and not p for p, g in zip(predicted, gold, strict=True))
    tn = len(gold) - tp - fp - fn
    return {
        "precision": proportion(tp, tp + fp),
        "recall": proportion(tp, tp + fn),
        "accuracy": proportion(tp + tn, len(gold)),
        "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
    }


def score(results: Sequence[DialogueResult]) -> dict[str, Any]:
    """The scores of the judge and the summary on the set (see the module docstring)."""
    gold = [r.dialogue.agreement for r in results]
    verdict = _binary([r.verdict for r in results], gold)
    verdict["yes_per_label_order"] = {
        prompts.labels_text(order): proportion(sum(r.verdicts[i] for r in results), len(results))
        for i, order in enumerate(prompts.LABEL_ORDERS)
    }
    on_agreements = [r for r in results if r.dialogue.agreement]
    on_others = [r for r in results if not r.dialogue.agreement]
    trade = {
        "accuracy": proportion(sum(r.trade_correct for r in results), len(results)),
        "on_agreements": proportion(
            sum(r.trade_correct for r in on_agreements), len(on_agreements)
        ),
        "on_non_agreements": proportion(sum(r.trade_correct for r in on_others), len(on_others)),
        "readings": {k: sum(r.reading.outcome == k for r in results) for k in judge.READINGS},
    }
    game = _binary([r.kept for r in results], gold)
    game["trade_correct_when_kept"] = proportion(
        sum(r.kept and r.trade_correct for r in results), sum(r.kept for r in results)
    )
    per_category = {}
    for c in CATEGORIES:
        rows = [r for r in results if r.dialogue.category == c]
        per_category[c] = {
            "dialogues": len(rows),
            "verdict_correct": sum(r.verdict == r.dialogue.agreement for r in rows),
            "trade_correct": sum(r.trade_correct for r in rows),
        }
    return {"verdict": verdict, "trade_summary": trade, "game": game, "per_category": per_category}


def _judge_model(model: ChatModel) -> ChatModel:
    """The model that answers the judge's requests (a routed model's judge backend)."""
    if isinstance(model, RoutedModel):
        probe = judge.agreement_calls("", [], seed=RUN_SEED, structured=False)[0].request
        return model.model_for(probe)
    return model


def score_key(
    backend: str,
    model: str,
    *,
    structured: bool,
    seed: int,
    set_sha256: str,
    prompts_hash: str,
    endpoint: str = "",
) -> str:
    """The key stored scores are kept under: what decides them (the server too)."""
    ident = [backend, model, endpoint, bool(structured), int(seed), set_sha256, prompts_hash]
    return hashlib.sha256(json.dumps(ident).encode("utf-8")).hexdigest()


def run_judge_check(
    model: ChatModel,
    *,
    structured: bool,
    seed: int = RUN_SEED,
    judge_set: JudgeSet | None = None,
    max_concurrency: int | None = None,
    progress: bool = False,
) -> tuple[dict[str, Any], list[DialogueResult]]:
    """Asks the run's judge requests on every dialogue of the set and scores the answers.

    Args:
      model: The model (usually cached); a routed model's judge backend answers.
      structured: Ask for JSON answers (as ``--structured on`` runs do).
      seed: The calls' seed (a run's judge uses :data:`RUN_SEED`).
      judge_set: The set (default: the shipped one).
      max_concurrency: Bound on concurrent calls.
      progress: Show a progress bar (stderr).

    Returns:
      The result (model, settings, set, hashes, scores, parse and call counts,
      seconds) and the per-dialogue results.
    """
    from tqdm.auto import tqdm

    from games.engine.results import model_label

    js = judge_set if judge_set is not None else load_judge_set()
    judge_model = _judge_model(model)
    before = combined_stats(model)
    stats = ParseStats()
    t0 = time.perf_counter()
    items = list(js.dialogues)
    bar = tqdm(total=len(items), desc="judge check", unit="dialogue", disable=not progress)
    try:
        # Level by level in batches of _BATCH; on a remote model, every dialogue's calls
        # kept in flight (the tree builder's scheduler).
        results = run_steps(
            [check_step(d, seed=seed, structured=structured) for d in items],
            model,
            stats=stats,
            max_concurrency=max_concurrency,
            chunk=_BATCH,
            on_done=bar.update,
        )
    finally:
        bar.close()
    after = combined_stats(model)
    label = model_label(judge_model)
    prompts_hash = prompts_sha256()
    out: dict[str, Any] = {
        **label.to_json(),
        "structured": structured,
        "seed": seed,
        "key": score_key(
            judge_model.backend,
            judge_model.model,
            endpoint=str(getattr(judge_model, "endpoint", "") or ""),
            structured=structured,
            seed=seed,
            set_sha256=js.sha256,
            prompts_hash=prompts_hash,
        ),
        "judge_set": {"version": js.version, "sha256": js.sha256, **js.counts()},
        "prompts_sha256": prompts_hash,
        "scoring_version": SCORING_VERSION,
        **score(results),
        "parse": stats.to_dict(),
        "seconds": time.perf_counter() - t0,
    }
    if before is not None and after is not None:
        out["llm_calls"] = {
            "made": after.misses - before.misses,
            "cached": after.hits - before.hits,
        }
    return out, results


# --- stored scores ----------------------------------------------------------------------


def scores_path(cache_path: str) -> str:
    """Where the scores of a call cache's models are kept: ``<cache without .sqlite>.judge.sqlite``."""
    p = Path(cache_path)
    stem = p.name[: -len(p.suffix)] if p.suffix else p.name
    return str(p.with_name(f"{stem}.judge.sqlite"))


class ScoreStore:
    """Judge scores kept in a small SQLite file beside the call cache, by :func:`score_key`.

    The call cache already makes a repeat check free of model calls; the store
    lets a run take the scores without re-reading the set's answers. A store
    that cannot be opened or written is skipped (logged): the scores are then
    computed again next time.
    """

    def __init__(self, path: str) -> None:
        self.path = path

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=30)
        try:
            with conn:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS judge_scores "
                    "(key TEXT PRIMARY KEY, scores TEXT NOT NULL, written REAL NOT NULL)"
                )
                yield conn
        finally:
            conn.close()

    def get(self, key: str) -> dict[str, Any] | None:
        """The scores stored under ``key``, or None (also when the file cannot be read)."""
        if not Path(self.path).is_file():
            return None
        try:
            with self._connect() as conn:
                row = conn.execute(
                    "SELECT scores FROM judge_scores WHERE key = ?", (key,)
                ).fetchone()
            return None if row is None else dict(json.loads(row[0]))
        except (sqlite3.Error, OSError, ValueError) as exc:
            logger.info("judge scores: cannot read %s (%s); asking the judge again", self.path, exc)
            return None

    def put(self, key: str, scores: Mapping[str, Any]) -> None:
        """Stores ``scores`` under ``key`` (replacing); a failure is logged, not raised."""
        try:
            with self._connect() as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO judge_scores VALUES (?, ?, ?)",
                    (key, json.dumps(scores, sort_keys=True), time.time()),
                )
        except (sqlite3.Error, OSError) as exc:
            logger.info("judge scores: cannot store them in %s (%s)", self.path, exc)


#: Keys of a check's result that the stored scores (and a run's summary) keep.
_SCORE_KEYS = (
    "backend",
    "model",
    "spec",
    "is_llm",
    "label",
    "structured",
    "seed",
    "key",
    "judge_set",
    "prompts_sha256",
    "scoring_version",
    "verdict",
    "trade_summary",
    "game",
    "per_category",
    "parse",
)


def stored_scores(result: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a check's result that is stored and put in a run's summary."""
    return {k: result[k] for k in _SCORE_KEYS if k in result}


def judge_for_run(settings: ExperimentSettings, model: ChatModel) -> dict[str, Any]:
    """The scores of a run's judge on the set: stored ones, else measured (and stored).

    The judge is the ``--backend`` model (a routed model's judge backend), asked as
    the run asks: its answer mode, seed :data:`RUN_SEED`. When the lower end of
    the verdict precision's interval is below :data:`PRECISION_FLOOR` (or no
    verdict said Yes), one warning is logged.

    Returns:
      The scores (:func:`stored_scores`), ``source`` (``stored`` or ``measured``),
      ``precision_floor`` and ``below_floor``.
    """
    js = load_judge_set()
    jm = _judge_model(model)
    key = score_key(
        jm.backend,
        jm.model,
        endpoint=str(getattr(jm, "endpoint", "") or ""),
        structured=settings.structured,
        seed=RUN_SEED,
        set_sha256=js.sha256,
        prompts_hash=prompts_sha256(),
    )
    store = ScoreStore(scores_path(settings.cache_path))
    found = store.get(key)
    if found is not None:
        scores, source = found, "stored"
    else:
        result, _ = run_judge_check(
            model,
            structured=settings.structured,
            judge_set=js,
            max_concurrency=settings.max_concurrency,
            progress=settings.progress,
        )
        scores, source = stored_scores(result), "measured"
        store.put(key, scores)
    precision = scores["verdict"]["precision"]
    below = precision["low"] is None or precision["low"] < PRECISION_FLOOR
    if below:
        logger.warning("%s", warning_line(scores))
    return {**scores, "source": source, "precision_floor": PRECISION_FLOOR, "below_floor": below}


def _interval(p: Mapping[str, Any]) -> str:
    if p["value"] is None:
        return f"–  (n {p['n']})"
    return f"{p['value']:.2f} [{p['low']:.2f}, {p['high']:.2f}] (n {p['n']})"


def warning_line(scores: Mapping[str, Any]) -> str:
    """The one-line warning of a judge whose precision may be below :data:`PRECISION_FLOOR`."""
    p = scores["verdict"]["precision"]
    return (
        f"agreement judge {scores.get('spec', '?')}: verdict precision {_interval(p)} on the "
        f"labelled set, its lower end below {PRECISION_FLOOR:.2f}: this run's agreements may "
        "not be agreements (see `gt-llm fruit-trading judge-check`)"
    )


def judge_lines(scores: Mapping[str, Any], *, indent: str = "  ") -> list[str]:
    """A short table of the scores (the end of a run, ``judge-check``'s output)."""
    v, t, g = scores["verdict"], scores["trade_summary"], scores["game"]
    s = scores["judge_set"]
    rows = [
        ("verdict precision", v["precision"]),
        ("verdict recall", v["recall"]),
        ("verdict accuracy", v["accuracy"]),
        ("trade summary accuracy", t["accuracy"]),
        ("  on agreements", t["on_agreements"]),
        ("  on non-agreements", t["on_non_agreements"]),
        ("game verdict precision", g["precision"]),
        ("game verdict recall", g["recall"]),
    ]
    lines = [
        f"{indent}agreement judge {scores.get('label', scores.get('spec', '?'))}, structured "
        f"{'on' if scores.get('structured') else 'off'}: {s['dialogues']} labelled dialogues, "
        f"{s['agreements']} agreements"
    ]
    lines += [f"{indent}  {name:24s} {_interval(p)}" for name, p in rows]
    if "parse" in scores:  # re-asks, fallbacks and copied values of the judge's own answers
        parse = scores["parse"]
        lines.append(
            f"{indent}  re-asked answers {sum(parse['reasks'].values())}, fallbacks "
            f"{parse['total_fallbacks']} (a fallback reads as no agreement, or no trade)"
        )
        lines += quality_lines(answer_quality(parse), indent=f"{indent}  ")
    if scores.get("below_floor"):
        lines.append(
            f"{indent}  verdict precision's lower end is below {PRECISION_FLOOR:.2f}: "
            "the agreements of these results are not to be trusted"
        )
    return lines
