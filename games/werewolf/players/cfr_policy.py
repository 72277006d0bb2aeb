"""A CFR-solved day policy for full Werewolf games: tone and act from ``werewolf solve``.

``gt-llm werewolf solve`` (:mod:`games.werewolf.day.solve`) solves single days
of Werewolf with CFR, per listeners' opponent model, over an abstraction of
tones × act tokens (:mod:`games.werewolf.day.abstraction`). Its
``decisions.json`` (:mod:`games.werewolf.day.exports`) holds every decision
node of every solved day: the speaker's role, the probability that CFR's
average profile (chance included) reaches the node, and CFR's average
probability of each (tone, act token).

**The abstraction mapping: what the speaker knows.** The solved day trees'
root is a chance node over the deals a seat cannot tell apart, so CFR's
policy at a decision is a function of the seat's information state. A full
game never reaches one of those information states again (other games, other
words), so the policy is looked up by the information-state *features* both
share (:func:`games.werewolf.day.features.decision_features`): the speaker's
role group (``werewolf`` / ``village``) and today's statements before its
turn, each as act kind, tone, and who said it and whom it names seen from the
speaker (me, a werewolf partner, another). :func:`load_day_policy` turns the
solved decisions of one opponent model into one joint distribution
P(tone, act token) per feature key: the reach-weighted average of CFR's
average policy over every decision node with those features in all solved
days (the plain average where CFR never reaches them; an act that is not
legal at a node counts 0 there), normalised to sum to 1. A full-game decision
whose features no solved node has is **not matched** (``no_match``, counted
per agent): the model chooses, as its twin would. The per-group joint (every
decision of the group pooled) is kept for reports and for the uniform
control, which has no features. The alternative, re-solving each day from
the actual public state with deals drawn from the seat's knowledge (continual
re-solving), would cost a tree of model calls per full-game speech; the
lookup costs none.

**From a drawn token to a statement.** :func:`choose_speech` draws (tone, act
token) from the speaker's group and names its players by the speaker's
suspicion ranking, as the day tree does
(:func:`games.werewolf.day.abstraction.concrete_act`): ``most`` is the most
suspected living other, ``least`` the least, ``most2`` / ``least2`` the
second. :func:`full_game_ranking` computes that ranking in a full game by the
day tree's own rule (:func:`games.werewolf.day.ranking.rank_suspects`, the
same function the solver's :func:`~games.werewolf.day.ranking.suspicion_ranking`
calls): hard knowledge (a werewolf's partners; the seer's checks), then the
seat's reading of the player, then public accusations so far (all days), then
seat. The reading is the mean of the opponent-model belief that the player is
a werewolf and the seat's deception score of it: the signal its twin's prompt
carries (beliefs, deception scores, the statements), so the agent and its
twin rank suspects by the same signal. The day tree has no deception scores
(its listeners extract beliefs only): there the reading is the belief, and on
day 1, before any statement was analysed, the two rankings are the same. The
solver reads the beliefs after the *vote* decision's consultation, so pass the
seat's provider's ``beliefs("day_vote")`` for the solved reading. When the drawn token has no
player in the ranking (``no_slot``), the concrete act is not legal
(``illegal``) or the group was never solved (``no_group``), no act is chosen
(:class:`PolicyChoice`): the caller lets the model choose.

**The uniform control.** :func:`uniform_day_policy` is a :class:`DayPolicy`
that gives every (tone, act token) of the abstraction the same probability in
both groups: an agent with it (``MODEL+uniform``, :mod:`games.werewolf.agents`)
goes through the same mapping, ranking and fallbacks as a CFR agent, and differs
only in the distribution drawn from, so a comparison against it isolates what
CFR's probabilities add.

Everything here is pure but :func:`load_day_policy`, which reads files.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from games.werewolf import rules
from games.werewolf.day.abstraction import Abstraction, concrete_act
from games.werewolf.day.features import role_group
from games.werewolf.day.ranking import rank_suspects
from games.werewolf.rules import Knowledge, SpeechAct
from runs.atomic import ResultsError, read_json
from runs.readers import LIST, NUMBER, OBJECT, TEXT, check_fields, list_of, optional
from runs.results import read_manifest

__all__ = [
    "GROUPS",
    "OUTCOMES",
    "DayPolicy",
    "PolicyChoice",
    "choose_speech",
    "full_game_ranking",
    "load_day_policy",
    "role_group",
    "uniform_day_policy",
]

logger = logging.getLogger(__name__)

#: The role groups of a policy (the solve summary's groups).
GROUPS = ("werewolf", "village")
#: What :func:`choose_speech` can report: an act, or why there is none.
OUTCOMES = ("matched", "no_match", "no_group", "no_slot", "illegal")
#: Tolerance of a group's total probability.
_SUM_TOL = 1e-6


# --- the policy ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DayPolicy:
    """One opponent model's solved day policy, per role group (module docstring).

    ``groups[g][i][j]`` is P(tone ``tones[i]``, act token ``acts[j]``) for a
    speaker of group ``g``: the reach-weighted average of CFR's average policy
    over all of ``g``'s decision nodes in all solved days of ``opponent_model``,
    normalised to sum to 1. This is the abstraction mapping: a full-game speech
    decision maps to its speaker's role group only. A group without solved
    decisions has ``()`` (and ``decisions[g] == 0``).

    Attributes:
      source: The solve folder it was read from.
      opponent_model: The listeners' opponent model it was solved under.
      label: The solve's model label (e.g. a scripted stand-in says so).
      tones: The abstraction's tones.
      acts: The abstraction's act tokens.
      roles: The solved preset's role counts ``{role: count}`` (every role).
      groups: Per group (:data:`GROUPS`), the joint distribution, one row per tone.
      decisions: Per group, the solved decision nodes averaged.
      features: Per feature key (:func:`~games.werewolf.day.features.decision_features`),
        the joint distribution (empty: no lookup by features, as for the uniform
        control).
      feature_decisions: Per feature key, the solved decision nodes averaged.

    Raises:
      ValueError: tones or acts are no abstraction, a group is missing, has the
        wrong shape, a negative entry or does not sum to 1.
    """

    source: str
    opponent_model: str
    label: str
    tones: tuple[str, ...]
    acts: tuple[str, ...]
    roles: Mapping[str, int]
    groups: Mapping[str, tuple[tuple[float, ...], ...]]
    decisions: Mapping[str, int]
    features: Mapping[str, tuple[tuple[float, ...], ...]] = dataclasses.field(
        default_factory=lambda: MappingProxyType({})
    )
    feature_decisions: Mapping[str, int] = dataclasses.field(
        default_factory=lambda: MappingProxyType({})
    )

    def __post_init__(self) -> None:
        ab = Abstraction(tones=tuple(self.tones), acts=tuple(self.acts))
        object.__setattr__(self, "tones", ab.tones)
        object.__setattr__(self, "acts", ab.acts)
        object.__setattr__(
            self, "roles", MappingProxyType({k: int(v) for k, v in self.roles.items()})
        )
        groups: dict[str, tuple[tuple[float, ...], ...]] = {}
        decisions: dict[str, int] = {}
        for g in GROUPS:
            if g not in self.groups or g not in self.decisions:
                raise ValueError(f"DayPolicy: group {g!r} is missing; give both of {GROUPS}")
            n = int(self.decisions[g])
            joint = tuple(tuple(float(p) for p in row) for row in self.groups[g])
            if n < 0:
                raise ValueError(f"DayPolicy: decisions[{g!r}] must be >= 0, got {n}")
            if n == 0 and joint:
                raise ValueError(f"DayPolicy: group {g!r} has no decisions; give () as its joint")
            if n > 0:
                _check_joint(g, joint, len(ab.tones), len(ab.acts))
            groups[g], decisions[g] = joint, n
        object.__setattr__(self, "groups", MappingProxyType(groups))
        object.__setattr__(self, "decisions", MappingProxyType(decisions))
        if set(self.features) != set(self.feature_decisions):
            raise ValueError("DayPolicy: features and feature_decisions must have the same keys")
        for key, joint in self.features.items():
            _check_joint(key, joint, len(ab.tones), len(ab.acts))
        object.__setattr__(
            self,
            "features",
            MappingProxyType(
                {k: tuple(tuple(map(float, r)) for r in v) for k, v in self.features.items()}
            ),
        )
        object.__setattr__(
            self,
            "feature_decisions",
            MappingProxyType({k: int(v) for k, v in self.feature_decisions.items()}),
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "source": self.source,
            "opponent_model": self.opponent_model,
            "label": self.label,
            "tones": list(self.tones),
            "acts": list(self.acts),
            "roles": dict(self.roles),
            "groups": {g: [list(row) for row in self.groups[g]] for g in GROUPS},
            "decisions": {g: self.decisions[g] for g in GROUPS},
            "features": {k: [list(row) for row in v] for k, v in self.features.items()},
            "feature_decisions": dict(self.feature_decisions),
        }


def _check_joint(group: str, joint: tuple[tuple[float, ...], ...], tones: int, acts: int) -> None:
    if len(joint) != tones or any(len(row) != acts for row in joint):
        raise ValueError(
            f"DayPolicy: group {group!r} must have {tones} rows (tones) of {acts} entries (acts)"
        )
    flat = [p for row in joint for p in row]
    if any(not math.isfinite(p) or p < 0.0 for p in flat):
        raise ValueError(f"DayPolicy: group {group!r} has a negative or non-finite probability")
    if abs(sum(flat) - 1.0) > _SUM_TOL:
        raise ValueError(f"DayPolicy: group {group!r} sums to {sum(flat)}, not 1")


def uniform_day_policy(
    roles: Mapping[str, int], opponent_model: str, abstraction: Abstraction | None = None
) -> DayPolicy:
    """The uniform day policy: every (tone, act token) equally likely, in both groups.

    Args:
      roles: The game's role counts (as a solved policy's ``roles``).
      opponent_model: The agent's opponent model (its beliefs rank the suspects).
      abstraction: The tones and act tokens (default: the day study's default
        abstraction, :class:`~games.werewolf.day.abstraction.Abstraction`).

    Returns:
      The policy; ``source`` is ``uniform`` and ``decisions`` 1 per group (one
      distribution stands for every decision: nothing was solved).
    """
    ab = abstraction or Abstraction()
    p = 1.0 / (len(ab.tones) * len(ab.acts))
    joint = tuple(tuple(p for _ in ab.acts) for _ in ab.tones)
    return DayPolicy(
        source="uniform",
        opponent_model=opponent_model,
        label="uniform over the day abstraction (no solve)",
        tones=ab.tones,
        acts=ab.acts,
        roles=roles,
        groups=dict.fromkeys(GROUPS, joint),
        decisions=dict.fromkeys(GROUPS, 1),
    )


# --- reading a solve folder -----------------------------------------------------------------


def _refuse(message: str) -> ValueError:
    return ValueError(f"load_day_policy: {message}")


def load_day_policy(folder: str | os.PathLike[str], opponent_model: str) -> DayPolicy:
    """The day policy of one opponent model from a ``gt-llm werewolf solve`` folder.

    Reads ``decisions.json`` (every solved decision node) and ``summary.json``
    (the preset, for its role counts); logs a warning when the folder's
    manifest says the run did not finish.

    Args:
      folder: The solve's ``--out`` folder.
      opponent_model: The listeners' opponent model whose days to average.

    Returns:
      The policy (:class:`DayPolicy`: the reach-weighted joint per role group).

    Raises:
      ValueError: one line naming ``load_day_policy``, the file and the fix: the
        folder or a file is missing, ``decisions.json`` has another format or is
        damaged (not JSON, wrong fields, negative or null numbers, a decision
        group with zero reach), or ``opponent_model`` was not solved there (the
        message lists the solved ones).
    """
    from games.werewolf.day.exports import FORMAT  # loads the solver: only when reading

    out = Path(folder)
    rerun = f"`gt-llm werewolf solve --out {out}` with its settings (the call cache answers it)"
    if not out.is_dir():
        raise _refuse(
            f"no folder {out}; give the --out folder of a finished `gt-llm werewolf solve` run"
        )
    path = out / "decisions.json"
    try:
        manifest = read_manifest(out)
        doc = read_json(path, rerun=rerun)
        summary = read_json(out / "summary.json", rerun=rerun)
    except ResultsError as exc:
        raise _refuse(str(exc)) from None
    if manifest is not None and manifest.get("complete") is not True:
        logger.warning(
            "%s: the run did not finish (manifest complete: false): re-run %s", out, rerun
        )
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else None
        raise _refuse(f"{path} has format {got!r}, not {FORMAT!r}: re-run {rerun} to write it")
    try:
        return _policy(doc, summary, out, opponent_model)
    except TypeError as exc:  # a field of the wrong shape (check_fields)
        raise _refuse(f"{path} is damaged ({exc}): re-run {rerun}") from None
    except _Damaged as exc:
        raise _refuse(f"{exc.file(path)} is damaged ({exc}): re-run {rerun}") from None
    except _NotSolved as exc:
        raise _refuse(f"{path}: {exc}") from None


class _Damaged(ValueError):
    """A value a policy cannot be read from (``summary``: in summary.json, not decisions.json)."""

    def __init__(self, message: str, *, summary: bool = False) -> None:
        super().__init__(message)
        self.summary = summary

    def file(self, decisions: Path) -> Path:
        return decisions.with_name("summary.json") if self.summary else decisions


class _NotSolved(ValueError):
    """The opponent model asked for is not among the folder's."""


def _roles(summary: Any) -> dict[str, int]:
    """The preset's role counts from ``summary.json``'s settings (raises _Damaged)."""
    try:
        check_fields(summary, {"settings": OBJECT}, required=("settings",))
    except TypeError as exc:
        raise _Damaged(str(exc), summary=True) from None
    preset = summary["settings"].get("preset")
    if preset not in rules.PRESETS:
        raise _Damaged(
            f"'settings.preset' is {preset!r}, not one of {sorted(rules.PRESETS)}", summary=True
        )
    return rules.preset(preset).roles.as_dict()


def _policy(doc: dict[str, Any], summary: Any, out: Path, model: str) -> DayPolicy:
    """The policy of ``model`` from a loaded ``decisions.json`` (raises TypeError, _Damaged)."""
    check_fields(
        doc,
        {"tones": list_of(TEXT), "acts": list_of(TEXT), "label": optional(TEXT), "days": LIST},
        required=("tones", "acts", "days"),
    )
    try:
        ab = Abstraction(tones=tuple(doc["tones"]), acts=tuple(doc["acts"]))
    except ValueError as exc:
        raise _Damaged(str(exc)) from None
    if len(ab.tones) != len(doc["tones"]) or len(ab.acts) != len(doc["acts"]):
        raise _Damaged("'tones' or 'acts' holds an empty name")
    roles = _roles(summary)
    probs = list_of(list_of(optional(NUMBER), length=len(ab.acts)), length=len(ab.tones))
    decision = {"role": TEXT, "reach": NUMBER, "probs": probs, "features": TEXT}
    solved: set[str] = set()
    mass = {g: np.zeros((len(ab.tones), len(ab.acts))) for g in GROUPS}
    count = dict.fromkeys(GROUPS, 0)
    # Per feature key: reach-weighted mass, plain sum (for keys CFR never reaches), count.
    by_key: dict[str, list[Any]] = {}
    for i, day in enumerate(doc["days"]):
        check_fields(
            day,
            {"opponent_model": TEXT, "deals": OBJECT, "decisions": list_of(OBJECT)},
            required=("opponent_model", "decisions"),
            where=f"days[{i}]",
        )
        solved.add(day["opponent_model"])
        if day["opponent_model"] != model:
            continue
        deals = day.get("deals", {})
        check_fields(deals, {"roles": list_of(list_of(TEXT))}, where=f"days[{i}].deals")
        for k, deal in enumerate(deals.get("roles", [])):
            if _counts(deal) != {r: n for r, n in roles.items() if n}:
                raise _Damaged(
                    f"days[{i}] deal {k}'s roles {_counts(deal)} are not the preset's "
                    f"{ {r: n for r, n in roles.items() if n} } (summary.json)"
                )
        for j, dec in enumerate(day["decisions"]):
            where = f"days[{i}].decisions[{j}]"
            check_fields(dec, decision, required=tuple(decision), where=where)
            grid = np.array([[0.0 if p is None else float(p) for p in row] for row in dec["probs"]])
            reach = float(dec["reach"])
            if not math.isfinite(reach) or reach < 0.0:
                raise _Damaged(f"'{where}.reach' is {reach}, not a probability")
            if not np.all(np.isfinite(grid)) or np.any(grid < 0.0):
                raise _Damaged(f"'{where}.probs' holds a negative or non-finite probability")
            g = role_group(dec["role"])
            mass[g] += reach * grid
            count[g] += 1
            entry = by_key.setdefault(
                dec["features"], [np.zeros_like(grid), np.zeros_like(grid), 0]
            )
            entry[0] += reach * grid
            entry[1] += grid
            entry[2] += 1
    if model not in solved:
        raise _NotSolved(
            f"opponent model {model!r} was not solved there; solved: "
            f"{', '.join(sorted(solved)) or '(none)'}: pick one of them or solve it with "
            f"`gt-llm werewolf solve --models {model} --out OTHER_FOLDER`"
        )
    if not any(count.values()):
        raise _Damaged(f"no decision was solved for opponent model {model!r}")
    groups: dict[str, tuple[tuple[float, ...], ...]] = {}
    for g in GROUPS:
        total = float(mass[g].sum())
        if count[g] and not total > 0.0:
            raise _Damaged(f"the {g} decisions of opponent model {model!r} have zero reach")
        joint = mass[g] / total if count[g] else np.zeros((0, 0))
        groups[g] = tuple(tuple(float(p) for p in row) for row in joint)
    logger.info(
        "day policy %s / %s: %s decisions",
        out,
        model,
        ", ".join(f"{g} {count[g]}" for g in GROUPS),
    )
    return DayPolicy(
        source=str(out),
        opponent_model=model,
        label=str(doc.get("label") or ""),
        tones=ab.tones,
        acts=ab.acts,
        roles=roles,
        groups=groups,
        decisions=count,
        features={
            k: _normalised(w if w.sum() > 0.0 else plain) for k, (w, plain, _) in by_key.items()
        },
        feature_decisions={k: n for k, (_, _, n) in by_key.items()},
    )


def _normalised(grid: np.ndarray) -> tuple[tuple[float, ...], ...]:
    """``grid`` scaled to sum to 1 (a decision's legal probabilities sum to 1, so it is > 0)."""
    return tuple(tuple(float(p) for p in row) for row in grid / grid.sum())


def _counts(seats: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in seats:
        out[r] = out.get(r, 0) + 1
    return out


# --- choosing a statement -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PolicyChoice:
    """What :func:`choose_speech` chose.

    Attributes:
      act: The concrete speech act (None unless ``outcome`` is ``matched``).
      tone: The drawn tone (None for ``no_group``).
      token: The drawn act token (None for ``no_group``).
      outcome: ``matched``; or ``no_match`` (no solved decision has the
        speaker's features), ``no_group`` (the speaker's group was never
        solved), ``no_slot`` (the ranking has no player for the token's slot),
        ``illegal`` (the concrete act is not among the legal ones).
    """

    act: SpeechAct | None
    tone: str | None
    token: str | None
    outcome: str

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(
                f"PolicyChoice: outcome must be one of {OUTCOMES}, got {self.outcome!r}"
            )
        if (self.act is not None) != (self.outcome == "matched"):
            raise ValueError("PolicyChoice: an act comes with outcome 'matched' and only with it")


def choose_speech(
    policy: DayPolicy,
    role: str | None,
    legal: Sequence[SpeechAct],
    ranking: Sequence[int],
    rng: np.random.Generator,
    features: str | None = None,
) -> PolicyChoice:
    """Draws the speaker's (tone, act token) and makes it a concrete act.

    A policy with features (a solved one) draws from the joint of the
    speaker's ``features`` (module doc: ``no_match`` when no solved decision
    has them); one without (the uniform control) from the speaker's group.

    Args:
      policy: The solved day policy.
      role: The speaker's role (its group: :func:`role_group`).
      legal: The speech acts the rules allow the speaker now.
      ranking: The speaker's living others, most suspected first
        (:func:`full_game_ranking`).
      rng: The draw's generator (one draw; none for ``no_group`` and ``no_match``).
      features: The decision's features
        (:func:`~games.werewolf.day.features.decision_features`).

    Returns:
      The choice; its ``act`` is None unless the outcome is ``matched``.
    """
    group = role_group(role)
    if policy.features:
        if features is None:
            raise ValueError("choose_speech: a solved policy is looked up by features; give them")
        joint = policy.features.get(features)
        if joint is None:
            return PolicyChoice(None, None, None, "no_match")
    elif policy.decisions[group] == 0:
        return PolicyChoice(None, None, None, "no_group")
    else:
        joint = policy.groups[group]
    flat = np.asarray(joint, dtype=float).ravel()
    flat = flat / flat.sum()
    index = int(rng.choice(flat.size, p=flat))
    tone = policy.tones[index // len(policy.acts)]
    token = policy.acts[index % len(policy.acts)]
    act = concrete_act(token, tone, ranking)
    if act is None:
        return PolicyChoice(None, tone, token, "no_slot")
    # The rules' legal day speech acts are SpeechAct values: equal fields, the same act.
    if act not in set(legal):
        return PolicyChoice(None, tone, token, "illegal")
    return PolicyChoice(act, tone, token, "matched")


def full_game_ranking(
    knowledge: Knowledge,
    beliefs: Mapping[int, Mapping[str, float]] | None = None,
    suspicion: Mapping[int, float] | None = None,
) -> tuple[int, ...]:
    """The speaker's living others in a full game, most suspected first (the day tree's rule).

    The same ordering as the solver's
    :func:`~games.werewolf.day.ranking.suspicion_ranking`
    (:func:`~games.werewolf.day.ranking.rank_suspects`), from what the seat has
    in a full game: its role, partners and checks (``knowledge``), its opponent
    model's beliefs, and every public statement it heard (the ``speech`` events
    of ``knowledge``: earlier days and today so far).

    Args:
      knowledge: The speaker's knowledge (:func:`games.werewolf.rules.knowledge`).
      beliefs: The seat's opponent model, ``{player: {role: probability}}``; the
        solver reads it for a vote decision (``provider.beliefs("day_vote")``).
      suspicion: The seat's deception scores ``{player: score}`` (the table's
        tracker); averaged with the belief per player
        (:func:`~games.werewolf.day.ranking.rank_suspects`).

    Returns:
      The living others but the speaker, most suspected first.
    """
    me = knowledge.player
    others = [q for q in knowledge.living() if q != me]
    acts = [
        rules.speech_act_from_json(e.data["act"]) for e in knowledge.events if e.kind == "speech"
    ]
    return rank_suspects(
        others,
        role=knowledge.role,
        werewolves=knowledge.partners,
        checks=knowledge.checks,
        beliefs=beliefs,
        acts=acts,
        suspicion={int(q): float(v) for q, v in (suspicion or {}).items()},
    )
