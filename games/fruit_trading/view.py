"""A fruit-trading run as a page: one subgame's dialogue tree under CFR and the baseline.

``gt-llm fruit-trading view DIR --variant tone --init 3`` reads the run's
exports (``dialogues_<variant>.jsonl``: every leaf with its messages, payoffs
and CFR reach probability; ``policy_<variant>.json``: CFR's average policy by
information state) and writes one self-contained HTML page
(:mod:`games.engine.html_page`): the tree of messages — each with its sender,
tone, seed, text and the probability of reaching it when both players follow
σ_CFR — with, at each decision, σ_CFR over the tones beside the σ_LLM baseline
(always ``any``, as in Lindström et al.), and the payoffs at the leaves.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from games.engine.html_page import asset, render_page, write_page
from games.engine.quality import quality_lines
from games.fruit_trading.dialogue import Turn, history_information
from games.fruit_trading.rules import TONES
from runs.atomic import ResultsError, open_regular, read_json_as
from runs.readers import (
    BOOL,
    INT,
    LIST,
    NUMBER,
    OBJECT,
    TEXT,
    Shape,
    check_fields,
    list_of,
    map_of,
    optional,
    read_jsonl,
)

__all__ = [
    "BASELINE_TONE",
    "MAX_MESSAGES",
    "build_tree",
    "fruit_page",
    "quality_of",
    "read_subgame",
    "write_fruit_page",
]

#: The σ_LLM baseline's tone at every decision.
BASELINE_TONE = "any"

#: Longest dialogue the page shows. A run's trees stop far earlier (their size grows
#: as tones ** messages, ``estimate.MAX_TREE_NODES``); a page nests one level per
#: message, and much deeper would not fit its JSON.
MAX_MESSAGES = 100

#: A tone's index as a policy row's key (``"0"`` .. ``"4"``).
_TONE_KEY = Shape(
    lambda k: isinstance(k, str) and k.isascii() and k.isdigit() and int(k) < len(TONES),
    f"tone numbers 0..{len(TONES) - 1}",
)
_POLICY_ENTRY = {"init": INT, "game": TEXT, "infosets": map_of(map_of(NUMBER, keys=_TONE_KEY))}
_MESSAGE = {"sender": TEXT, "tone": TEXT, "seed": INT, "text": TEXT}
_LEAF = {
    "init": INT,
    "names": list_of(TEXT, length=2),
    "messages": list_of(OBJECT),
    "agreement": BOOL,
    "agreed_at_message": optional(INT),
    "payoffs": optional(list_of(NUMBER, length=2)),
    "payoffs_llm": optional(list_of(NUMBER)),
    "payoffs_exact": optional(LIST),
    "trade": optional(TEXT),
    "guesses": list_of(OBJECT),
    "reach_cfr": optional(NUMBER),
    "model": optional(TEXT),
}
_GUESS = {"message": INT, "observer": TEXT, "guess": optional(TEXT)}


def _slug(variant: str) -> str:
    return variant.replace("+", "_")


def _variant_of(dialogues: Path) -> str:
    """The variant a dialogues file holds (its first record says; else its name)."""
    try:
        # A regular file only: a FIFO named like an export would block the viewer forever.
        with open_regular(dialogues, what="a dialogues export") as fh:
            first = fh.readline(1 << 20)
    except (ResultsError, OSError):
        first = b""  # named by its file name; refused when that variant is read
    try:
        return str(json.loads(first)["variant"])
    except (ValueError, KeyError, TypeError, RecursionError):
        # Only names the folder's variants in a message: a damaged first line is
        # reported when that variant is read.
        return dialogues.name[len("dialogues_") : -len(".jsonl")]


def _policy(doc: Any) -> dict[str, Any]:
    """A ``policy_<variant>.json`` checked where the page reads it (raises ``TypeError``)."""
    check_fields(
        doc, {"subgames": list_of(OBJECT), "label": optional(TEXT)}, required=("subgames",)
    )
    for i, entry in enumerate(doc["subgames"]):
        check_fields(entry, _POLICY_ENTRY, required=("init",), where=f"subgames[{i}]")
    return doc


def _check_leaf(rec: Mapping[str, Any]) -> None:
    """A leaf record of ``dialogues_<variant>.jsonl`` as the page reads it (raises ``TypeError``)."""
    check_fields(rec, _LEAF, required=("init", "messages"))
    if len(rec["messages"]) > MAX_MESSAGES:
        raise TypeError(
            f"a dialogue of {len(rec['messages']):,} messages, more than the {MAX_MESSAGES} "
            "a page shows"
        )
    for i, msg in enumerate(rec["messages"]):
        check_fields(msg, _MESSAGE, required=tuple(_MESSAGE), where=f"messages[{i}]")
    for i, guess in enumerate(rec.get("guesses") or []):
        check_fields(guess, _GUESS, where=f"guesses[{i}]")


def read_subgame(
    folder: str | os.PathLike[str], variant: str, init: int
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """One subgame's leaf records, its policy entry and the policy file's header.

    Both files are read through the checked readers of :mod:`runs.atomic`: every
    field the page uses is checked (a message has a sender, tone, seed and text; a
    dialogue has at most :data:`MAX_MESSAGES` messages; a policy row maps tone
    numbers to probabilities).

    Raises:
      ResultsError: the folder has no exports for ``variant`` or no subgame ``init``
        (the message names what the folder holds and the fix), or a file is damaged
        (one line naming the file, the line, what is wrong and the fix).
    """
    folder = Path(folder)
    dialogues = folder / f"dialogues_{_slug(variant)}.jsonl"
    policy = folder / f"policy_{_slug(variant)}.json"
    if not dialogues.exists() or not policy.exists():
        have = sorted(_variant_of(p) for p in folder.glob("dialogues_*.jsonl"))
        raise ResultsError(
            f"fruit-trading view --variant: {folder} has no exports for {variant!r} "
            f"(it has {', '.join(have) or 'none'}); pick one of those or run "
            f"`gt-llm fruit-trading run --variants {variant} --out {folder}`"
        )
    rerun = f"`gt-llm fruit-trading run --out {folder}` with its settings"
    doc = read_json_as(policy, _policy, what="a policy export", rerun=rerun)
    entry = next((e for e in doc["subgames"] if e["init"] == init), None)
    leaves = []
    for n, rec in read_jsonl(dialogues, rerun=rerun, what="a dialogues export"):
        try:
            _check_leaf(rec)
        except TypeError as exc:
            raise ResultsError(
                f"{dialogues}:{n}: not a dialogue leaf ({exc}): re-run {rerun}"
            ) from None
        if rec["init"] == init:
            leaves.append(rec)
    if entry is None or not leaves:
        inits = sorted({e["init"] for e in doc["subgames"]})
        raise ResultsError(
            f"fruit-trading view --init: no subgame {init} in {folder} for {variant!r}; "
            f"it has inits {inits}"
        )
    header = {k: v for k, v in doc.items() if k != "subgames"}
    return leaves, entry, header


def _policy_index(
    infosets: Mapping[str, Mapping[str, float]],
) -> dict[tuple[str, str], Mapping[str, float]]:
    """Policy rows keyed by (player name, history part of the key)."""
    index: dict[tuple[str, str], Mapping[str, float]] = {}
    for key, dist in infosets.items():
        head, sep, tail = key.partition("\n\nYour tones so far: ")
        if not sep or not head.startswith("You are "):
            continue
        name = head[len("You are ") :].split(" (player ", 1)[0]
        index[(name, "Your tones so far: " + tail)] = dist
    return index


def _node(msg: Mapping[str, Any], depth: int) -> dict[str, Any]:
    return {
        "depth": depth,
        "sender": msg.get("sender"),
        "tone": msg.get("tone"),
        "seed": msg.get("seed"),
        "text": msg.get("text", ""),
        "reach": 0.0,
        "reach_llm": 0.0,
        "children": {},
    }


def build_tree(
    leaves: Iterable[Mapping[str, Any]],
    infosets: Mapping[str, Mapping[str, float]],
    num_seeds: int,
) -> dict[str, Any]:
    """The dialogue tree of one subgame from its leaf records.

    A node is a message. Its ``reach`` is the probability of the dialogue so far
    under σ_CFR (the sum of its leaves' ``reach_cfr``), ``reach_llm`` the same
    under the baseline (tone ``any`` at every decision, seeds uniform). A node
    whose dialogue continues holds ``decision``: who chooses the next tone,
    σ_CFR over the tones (from the policy export; ``None`` when the export has
    no such row) and σ_LLM. A leaf holds ``leaf``: agreement, payoffs, trade
    and guesses.

    Raises:
      ValueError: the leaves do not share one opening message.
    """
    leaves = list(leaves)
    index = _policy_index(infosets)
    root: dict[str, Any] | None = None
    for rec in leaves:
        msgs = rec.get("messages") or []
        if not msgs:
            continue
        names = list(rec.get("names") or [msgs[0]["sender"], ""])
        if root is None:
            root = _node(msgs[0], 0)
            root["names"] = names
        elif (root["sender"], root["text"]) != (msgs[0]["sender"], msgs[0].get("text", "")):
            raise ValueError("build_tree: the leaves do not share one opening message")
        node = root
        node["reach"] += float(rec.get("reach_cfr") or 0.0)
        for depth, m in enumerate(msgs[1:], 1):
            key = f"{m.get('tone')}/{m.get('seed')}"
            child = node["children"].get(key)
            if child is None:
                child = node["children"][key] = _node(m, depth)
            child["reach"] += float(rec.get("reach_cfr") or 0.0)
            node = child
        node["leaf"] = {
            "agreement": bool(rec.get("agreement")),
            "agreed_at_message": rec.get("agreed_at_message"),
            "payoffs": rec.get("payoffs"),
            "payoffs_llm": rec.get("payoffs_llm"),
            "payoffs_exact": rec.get("payoffs_exact"),
            "trade": rec.get("trade"),
            "guesses": rec.get("guesses") or [],
        }
    if root is None:
        raise ValueError("build_tree: no leaf has a message")
    names = root["names"]

    def finish(node: dict[str, Any], path: list[Turn], reach_llm: float) -> None:
        node["reach_llm"] = reach_llm
        kids = sorted(
            node["children"].values(),
            key=lambda c: (TONES.index(c["tone"]) if c["tone"] in TONES else 99, c["seed"]),
        )
        node["children"] = kids
        if not kids:
            return
        chooser = kids[0]["sender"]
        player = names.index(chooser) if chooser in names else len(path) % 2
        dist = index.get((chooser, history_information(names, path, player)))
        sigma = None if dist is None else {TONES[int(a)]: float(p) for a, p in dist.items()}
        node["decision"] = {
            "player": chooser,
            "sigma_cfr": sigma,
            "sigma_llm": {t: float(t == BASELINE_TONE) for t in TONES},
        }
        for c in kids:
            turn = Turn(
                player if c["sender"] == chooser else 1 - player, c["tone"], c["seed"], c["text"]
            )
            p_llm = reach_llm * float(c["tone"] == BASELINE_TONE) / num_seeds
            finish(c, [*path, turn], p_llm)

    first = Turn(
        names.index(root["sender"]) if root["sender"] in names else 0,
        root["tone"],
        root["seed"],
        root["text"],
    )
    finish(root, [first], 1.0)
    return root


def _expected(node: Mapping[str, Any], key: str) -> list[float]:
    if "leaf" in node and not node["children"]:
        pay = node["leaf"]["payoffs"] or [0.0, 0.0]
        return [node[key] * float(x) for x in pay]
    total = [0.0, 0.0]
    for c in node["children"]:
        a, b = _expected(c, key)
        total = [total[0] + a, total[1] + b]
    return total


def _count(node: Mapping[str, Any]) -> tuple[int, int]:
    nodes, leaves = 1, int(not node["children"])
    for c in node["children"]:
        n, lv = _count(c)
        nodes, leaves = nodes + n, leaves + lv
    return nodes, leaves


def _variant_quality(doc: Any, variant: str) -> Mapping[str, Any] | None:
    """The variant's ``quality`` block of a ``summary.json`` (raises ``TypeError``)."""
    check_fields(doc, {"variants": map_of(OBJECT)})
    v = (doc.get("variants") or {}).get(variant)
    if v is None:
        return None
    check_fields(v, {"quality": optional(OBJECT)}, where=f"variants.{variant}")
    return v.get("quality")


def quality_of(folder: str | os.PathLike[str], variant: str) -> list[str]:
    """The answer-quality lines of ``variant`` in the folder's ``summary.json``.

    As the run printed them (:func:`games.engine.quality.quality_lines`); none when
    the folder has no summary (a run stopped before it) or it has no such block.

    Raises:
      ResultsError: the summary is damaged (names the file and the fix).
    """
    path = Path(folder) / "summary.json"
    if not path.is_file():
        return []
    quality = read_json_as(
        path,
        lambda doc: _variant_quality(doc, variant),
        what="a fruit-trading summary",
        rerun=f"`gt-llm fruit-trading run --out {folder}` with its settings",
    )
    return quality_lines(quality, indent="") if quality is not None else []


def fruit_page(folder: str | os.PathLike[str], variant: str, init: int) -> str:
    """The HTML page of one subgame of a fruit-trading results folder.

    Raises:
      ResultsError: as :func:`read_subgame`, or the subgame's leaves do not make one
        tree (names the dialogues file and the fix).
    """
    leaves, entry, header = read_subgame(folder, variant, init)
    game = str(entry.get("game", ""))
    num_seeds = 1
    for part in game[game.find("(") + 1 : -1].split(","):
        k, _, v = part.partition("=")
        if k == "num_seeds" and v.isdigit():
            num_seeds = max(1, int(v))
    try:
        tree = build_tree(leaves, entry.get("infosets", {}), num_seeds)
    except ValueError as exc:
        raise ResultsError(
            f"{Path(folder) / f'dialogues_{_slug(variant)}.jsonl'}: subgame {init} is not one "
            f"dialogue tree ({exc}): re-run `gt-llm fruit-trading run --out {folder}`"
        ) from None
    nodes, nleaves = _count(tree)
    data = {
        "kind": "fruit",
        "variant": variant,
        "init": init,
        "model": header.get("label") or leaves[0].get("model"),
        "game": game,
        "tones": list(TONES),
        "baseline": BASELINE_TONE,
        "num_seeds": num_seeds,
        "nodes": nodes,
        "leaves": nleaves,
        "expected_cfr": _expected(tree, "reach"),
        "expected_llm": _expected(tree, "reach_llm"),
        "quality": quality_of(folder, variant),
        "tree": tree,
    }
    return render_page(
        title=f"fruit trading {variant}, init {init}",
        data=data,
        scripts=[asset("games.fruit_trading", "view.js")],
        styles=[asset("games.fruit_trading", "view.css")],
    )


def write_fruit_page(
    folder: str | os.PathLike[str], variant: str, init: int, out: str | os.PathLike[str]
) -> Path:
    """Writes :func:`fruit_page` to ``out`` (atomically) and returns the path."""
    return write_page(out, fruit_page(folder, variant, init))
