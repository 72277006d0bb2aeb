"""Scripted (offline, rule-based) answers to the Werewolf LLM tasks.

These are *not* an LLM: they are a deterministic stand-in (results they
produce are labelled ``scripted:rules-v2``) so that whole games run offline
and in CI. Every handler decides from the request's *typed* fields — the
player, its role, partners, checks, the public statements and votes, its
opponent-model beliefs and deception scores, and the legal options — never
from the prompt text, and writes the JSON answer a model would, which then
goes through the same parsers.

How the stand-in plays, so that games do not end at random:

* **Wolf score.** Each player scores how likely every other player is a
  werewolf by combining, the same way for every opponent model, its own
  signal — its accumulated deception scores (``suspicion``, 0.3 without one)
  plus 0.05 per public accusation plus the shift from the checks an
  uncontested seer claimant shared, clipped to [0, 1] — with its model's
  belief (``beliefs``, the probability of the role ``werewolf``):
  ``score = 0.5 * own + 0.5 * belief`` (:data:`BELIEF_WEIGHT`). A model that
  knows nothing (``none``) gives the role base rate for everyone, so its
  players rank by their own signal; a belief of exactly 0 or 1 is certain
  knowledge and wins, as do the seat's own facts (a werewolf knows its
  partners and that everyone else is innocent; a seer knows its checks).
  Without any model in the prompt the score is the own signal. So a better
  belief gives better votes, and no model gains by construction.
* **Werewolves** never vote for, target or accuse a partner; they vote with
  the crowd against the most accused innocent, sometimes claim a role they do
  not have or share a made-up check, and accuse their accusers.
* **The seer** checks its most suspected unchecked player, shares a check that
  found a werewolf, and votes for checked werewolves.
* **Villagers** (and the doctor, witch, guard) accuse and vote for their highest
  wolf score (ties go to the most accused, then the lowest seat, so that equal
  beliefs do not split the vote).
* **Analyses**: a self-analysis reports truthfully whether the act contradicts
  what the speaker knows; a peer analysis looks for contradictions with what
  the observer knows and otherwise reports its wolf score of the speaker.

**Order.** Prompts list the players to choose from in an order of their own
(:mod:`games.werewolf.players.order`). The stand-in chooses by content, never
by place in a list: every handler sorts the players it picks among, and the
fields that carry the request's order (:data:`ORDERED_FIELDS`) do not seed its
generator, so permuting the choices never changes an answer.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from games.werewolf.players import prompts
from gt_llm.backends.scripted import register_scripted_task
from gt_llm.parsing import parse_json_object

__all__ = ["HANDLERS", "ORDERED_FIELDS", "deception_of", "seeding_fields", "wolf_scores"]

#: Roles that exactly one player holds (claiming one you do not hold is a lie someone may see).
UNIQUE_ROLES = ("seer", "doctor", "witch", "guard")
WOLF = "werewolf"
#: Wolf score of a player the observer knows nothing about.
PRIOR = 0.3
#: Weight of the opponent model's belief in the wolf score (the rest is the own signal).
BELIEF_WEIGHT = 0.5
#: Fields that list the choices in the request's own order: left out of the seed.
#: The set of choices follows from the fields that stay (who lives, the seat, its
#: role, partners and private notes), so no content is lost from the seed.
ORDERED_FIELDS = ("options", "options_text", "targets")


# --- reading typed fields -----------------------------------------------------------


def _num(p: int) -> int:
    """The number a model writes for player id ``p``."""
    return int(p) + 1


def _answer(obj: Mapping[str, Any], rng: np.random.Generator) -> str:
    text = json.dumps(dict(obj))
    # Real models sometimes wrap JSON in a fence; the stand-in does too, per seed, so the
    # tolerant parser is exercised on every run.
    return f"```json\n{text}\n```" if rng.random() < 0.3 else text


def _pick(rng: np.random.Generator, items: Sequence[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def _argmax(scores: Mapping[int, float], rng: np.random.Generator) -> int:
    top = max(scores.values())
    return int(_pick(rng, sorted(p for p, s in scores.items() if s >= top - 1e-9)))


def _int_map(m: Mapping[str, Any]) -> dict[int, Any]:
    return {int(k): v for k, v in m.items()}


def _accusations(fields: Mapping[str, Any]) -> Counter[int]:
    """How often each player was publicly accused (or reported a werewolf by a check)."""
    c: Counter[int] = Counter()
    for s in fields["statements"]:
        if s["kind"] == "accuse" or (s["kind"] == "share_check" and s["result"] == WOLF):
            c[int(s["target"])] += 1
    return c


def _claimed(fields: Mapping[str, Any], role: str) -> list[int]:
    """Players who publicly claimed ``role`` (or shared a check, which claims seer)."""
    out = []
    for s in fields["statements"]:
        if (s["kind"] == "claim" and s["role"] == role) or (
            role == "seer" and s["kind"] == "share_check"
        ):
            if int(s["speaker"]) not in out:
                out.append(int(s["speaker"]))
    return out


def _seer_reveals(fields: Mapping[str, Any]) -> dict[int, float]:
    """Score shifts from the checks of an uncontested seer claimant (none if contested)."""
    claimants = _claimed(fields, "seer")
    if len(claimants) != 1 or fields["role"] == "seer" or claimants[0] == int(fields["player"]):
        return {}
    out: dict[int, float] = {}
    for s in fields["statements"]:
        if s["kind"] == "share_check" and int(s["speaker"]) == claimants[0]:
            out[int(s["target"])] = 0.35 if s["result"] == WOLF else -0.2
    return out


def wolf_scores(fields: Mapping[str, Any]) -> dict[int, float]:
    """The asking player's wolf score of every other living player (see the module doc)."""
    me = int(fields["player"])
    alive = [int(p) for p in fields["alive"] if int(p) != me]
    partners = {int(p) for p in fields["partners"]}
    if fields["role"] == WOLF:
        return {p: (1.0 if p in partners else 0.0) for p in alive}
    beliefs = _int_map(fields["beliefs"])
    suspicion = _int_map(fields["suspicion"])
    accused = _accusations(fields)
    checks = _int_map(fields["checks"])
    revealed = _seer_reveals(fields)
    scores = {}
    for p in alive:
        own = float(suspicion.get(p, PRIOR)) + 0.05 * accused[p] + revealed.get(p, 0.0)
        own = min(1.0, max(0.0, own))
        belief = beliefs.get(p, {}).get(WOLF)
        if p in checks:
            scores[p] = 1.0 if checks[p] == WOLF else 0.0
        elif belief is None:
            scores[p] = own
        elif belief in (0.0, 1.0):  # certain knowledge the model keeps (e.g. a revealed role)
            scores[p] = float(belief)
        else:
            scores[p] = BELIEF_WEIGHT * float(belief) + (1.0 - BELIEF_WEIGHT) * own
    # Someone claiming my own unique role is lying.
    if fields["role"] in UNIQUE_ROLES:
        for p in _claimed(fields, fields["role"]):
            if p in scores and p not in checks:
                scores[p] = max(scores[p], 0.9)
    return scores


def _known_innocent(fields: Mapping[str, Any], p: int) -> bool:
    """Whether the asking player knows ``p`` is not a werewolf."""
    me = int(fields["player"])
    if p == me:
        return fields["role"] != WOLF
    if fields["role"] == WOLF:
        return p not in {int(q) for q in fields["partners"]}
    checks = _int_map(fields["checks"])
    return p in checks and checks[p] != WOLF


def _known_wolf(fields: Mapping[str, Any], p: int) -> bool:
    me = int(fields["player"])
    if p == me:
        return fields["role"] == WOLF
    if fields["role"] == WOLF:
        return p in {int(q) for q in fields["partners"]}
    checks = _int_map(fields["checks"])
    return checks.get(p) == WOLF


# --- night --------------------------------------------------------------------------


def night_kill(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Follow a partner's choice; else remove a seer claimant or the loudest accuser."""
    partners = {int(p) for p in fields["partners"]}
    options = [int(p) for p in fields["options"] if int(p) not in partners]
    options = options or [int(p) for p in fields["options"]]
    chosen = [int(t) for t in fields["partner_votes"].values() if int(t) in options]
    if chosen:
        target = Counter(chosen).most_common(1)[0][0]
    else:
        threat = {p: 0.0 for p in options}
        for p in _claimed(fields, "seer"):
            if p in threat:
                threat[p] += 2.0
        for s in fields["statements"]:
            if s["kind"] in ("accuse", "share_check") and s["target"] is not None:
                if int(s["target"]) in partners | {int(fields["player"])}:
                    if int(s["speaker"]) in threat:
                        threat[int(s["speaker"])] += 1.0
        target = _argmax(threat, rng)
    return _answer({"target": _num(target), "reason": "They are a danger to us."}, rng)


def night_protect(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Protect a seer claimant we trust, else ourselves, else someone we trust."""
    options = [int(p) for p in fields["options"]]
    scores = wolf_scores(fields)
    trusted = [p for p in _claimed(fields, "seer") if p in options and scores.get(p, 0) < 0.6]
    me = int(fields["player"])
    if trusted:
        target = trusted[0]
    elif me in options and rng.random() < 0.5:
        target = me
    else:
        target = _argmax({p: -scores.get(p, PRIOR) for p in options}, rng)
    return _answer({"target": _num(target), "reason": "I want them alive tomorrow."}, rng)


def night_check(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Check the most suspected player not checked yet."""
    checks = _int_map(fields["checks"])
    options = [int(p) for p in fields["options"]]
    fresh = [p for p in options if p not in checks] or options
    scores = wolf_scores(fields)
    target = _argmax({p: scores.get(p, PRIOR) for p in fresh}, rng)
    return _answer({"target": _num(target), "reason": "I want to know what they are."}, rng)


def night_witch(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Save the victim unless we think it is a werewolf; poison a near-certain werewolf."""
    scores = wolf_scores(fields)
    victim = fields["victim"]
    save = bool(fields["can_save"] and victim is not None and scores.get(int(victim), 0) < 0.7)
    poison = None
    if fields["can_poison"]:
        options = [int(p) for p in fields["options"] if not (save and int(p) == victim)]
        cands = {p: scores.get(p, PRIOR) for p in options}
        if cands:
            best = _argmax(cands, rng)
            if cands[best] >= 0.8:
                poison = _num(best)
    return _answer({"save": save, "poison": poison, "reason": "Weighing what I know."}, rng)


# --- day ----------------------------------------------------------------------------


def _unshared_wolf_check(fields: Mapping[str, Any]) -> int | None:
    """A seer's checked werewolf, alive, that it has not announced yet."""
    me = int(fields["player"])
    alive = {int(p) for p in fields["alive"]}
    shared = {
        int(s["target"])
        for s in fields["statements"]
        if int(s["speaker"]) == me and s["kind"] == "share_check"
    }
    for p, r in sorted(_int_map(fields["checks"]).items()):
        if r == WOLF and p in alive and p not in shared:
            return p
    return None


def bid(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Eager with news (a found werewolf) or when accused; otherwise by conviction."""
    me = int(fields["player"])
    recent = list(fields["statements"])[-3:]
    accused_now = any(
        s["kind"] in ("accuse", "share_check")
        and s["target"] is not None
        and int(s["target"]) == me
        for s in recent
    )
    if _unshared_wolf_check(fields) is not None:
        b = 9 + int(rng.integers(2))
    elif accused_now:
        b = 7 + int(rng.integers(2))
    elif fields["role"] == WOLF:
        b = 2 + int(rng.integers(5))
    else:
        scores = wolf_scores(fields)
        top = max(scores.values()) if scores else 0.0
        b = min(10, int(round(8 * top)) + int(rng.integers(3)))
    return _answer({"bid": b, "reason": "That is how much I have to say."}, rng)


def _tone(fields: Mapping[str, Any], wanted: str, rng: np.random.Generator) -> str:
    tones = [str(t) for t in fields["tones"]]
    if wanted in tones:
        return wanted
    concrete = [t for t in tones if t != "any"]
    return _pick(rng, concrete or tones)


def _act(
    fields: Mapping[str, Any], kind: str, tone: str, rng: np.random.Generator, **rest: Any
) -> dict[str, Any] | None:
    """The act as an answer dict, or None when the act or its arguments are not offered."""
    if kind not in fields["acts"]:
        return None
    obj: dict[str, Any] = {"act": kind, "tone": _tone(fields, tone, rng)}
    if "target" in rest:
        if int(rest["target"]) not in [int(p) for p in fields["targets"]]:
            return None
        obj["target"] = _num(rest["target"])
    if "role" in rest:
        if rest["role"] not in fields["roles"]:
            return None
        obj["role"] = rest["role"]
    if "result" in rest:
        if rest["result"] not in fields["results"]:
            return None
        obj["result"] = rest["result"]
    return obj


def _wolf_act(fields: Mapping[str, Any], rng: np.random.Generator) -> list[dict | None]:
    me = int(fields["player"])
    partners = {int(p) for p in fields["partners"]}
    innocents = sorted(int(p) for p in fields["targets"] if int(p) not in partners | {me})
    accusers = [
        int(s["speaker"])
        for s in fields["statements"]
        if s["kind"] in ("accuse", "share_check")
        and s["target"] is not None
        and int(s["target"]) in partners | {me}
        and int(s["speaker"]) in innocents
    ]
    accused = _accusations(fields)
    u = rng.random()
    cands: list[dict | None] = []
    if accusers:
        cands.append(_act(fields, "accuse", "assertive", rng, target=accusers[-1]))
    if u < 0.2 and innocents:
        fake = _pick(rng, innocents)
        cands.append(_act(fields, "share_check", "assertive", rng, target=fake, result=WOLF))
    elif u < 0.35:
        lie = [r for r in fields["roles"] if r != WOLF]
        if lie:
            cands.append(_act(fields, "claim", "calm", rng, role=_pick(rng, lie)))
    if innocents and (u < 0.8 or any(accused.values())):
        target = _argmax({p: accused[p] + 0.1 * rng.random() for p in innocents}, rng)
        cands.append(_act(fields, "accuse", "calm", rng, target=target))
    return cands


def _good_act(fields: Mapping[str, Any], rng: np.random.Generator) -> list[dict | None]:
    me = int(fields["player"])
    scores = {p: s for p, s in wolf_scores(fields).items() if p != me}
    cands: list[dict | None] = []
    wolf = _unshared_wolf_check(fields)
    if wolf is not None:
        result = WOLF if WOLF in fields["results"] else None
        if result is not None:
            cands.append(_act(fields, "share_check", "assertive", rng, target=wolf, result=result))
        cands.append(_act(fields, "accuse", "assertive", rng, target=wolf))
    # Defend someone we know is innocent who was accused.
    accused = _accusations(fields)
    for p in sorted(accused):
        if p != me and _known_innocent(fields, p) and rng.random() < 0.5:
            cands.append(_act(fields, "defend", "calm", rng, target=p))
    if scores:
        top = _argmax(scores, rng)
        if scores[top] >= 0.45:
            tone = "assertive" if scores[top] >= 0.8 else "calm"
            cands.append(_act(fields, "accuse", tone, rng, target=top))
    if fields["role"] in UNIQUE_ROLES and rng.random() < 0.15:
        cands.append(_act(fields, "claim", "calm", rng, role=fields["role"]))
    return cands


def speech_act(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """The first offered act of the role's preference list; else say nothing new."""
    cands = _wolf_act(fields, rng) if fields["role"] == WOLF else _good_act(fields, rng)
    obj = next((c for c in cands if c is not None), None)
    if obj is None:
        obj = _act(fields, "nothing", _pick(rng, ["calm", "submissive"]), rng) or {
            "act": fields["acts"][0],
            "tone": _tone(fields, "calm", rng),
        }
    obj["reason"] = "It follows from what I know."
    return _answer(obj, rng)


_PHRASES = {
    "claim": (
        "I am {role_a}, and I am telling you so that you can trust my lead.",
        "You should know that I am {role_a}.",
    ),
    "accuse": (
        "I am convinced {target} is a werewolf.",
        "{target} has been acting like a werewolf and I think we should look hard at them.",
    ),
    "defend": (
        "{target} is not a werewolf, I am sure of it.",
        "Leave {target} alone; I believe they are innocent.",
    ),
    "share_check": (
        "I am the seer: last night I checked {target} and the answer was {result}.",
        "My check on {target} came back: {result}.",
    ),
    "nothing": (
        "I have nothing new to add yet; let us hear the others.",
        "I am still thinking and have no new information.",
    ),
}
_TONE_FRAME = {
    "assertive": ("Listen to me. {body} Act on it.", "{body} There is no doubt here."),
    "calm": ("{body} Let us think it through together.", "From where I stand: {body}"),
    "submissive": ("Sorry if I am wrong, but {body_l}", "I may be mistaken, but {body_l}"),
}


def statement(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """The act in words, framed by the tone."""
    act = fields["act"]
    target = act["target"]
    body = _pick(rng, _PHRASES[act["kind"]]).format(
        target=prompts.player_name(target) if target is not None else "",
        role_a=prompts.with_article(str(act["role"])),
        result=act["result"],
    )
    frames = _TONE_FRAME.get(str(fields["tone"]), _TONE_FRAME["calm"])
    text = _pick(rng, frames).format(body=body, body_l=body[0].lower() + body[1:])
    return _answer({"statement": text}, rng)


def vote(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Werewolves: the most accused non-partner. Others: the highest wolf score."""
    me = int(fields["player"])
    options = [int(p) for p in fields["options"] if int(p) != me] or [
        int(p) for p in fields["options"]
    ]
    if fields["role"] == WOLF:
        partners = {int(p) for p in fields["partners"]}
        innocents = [p for p in options if p not in partners] or options
        accused = _accusations(fields)
        target = _argmax({p: accused[p] for p in innocents}, rng)
    else:
        # Among equal scores, follow the public accusations, then the lowest seat: voters
        # with the same belief must not split their votes between equal suspects.
        scores = wolf_scores(fields)
        accused = _accusations(fields)
        target = max(options, key=lambda p: (round(scores.get(p, PRIOR), 6), accused[p], -p))
    return _answer({"vote": _num(target), "reason": "They are the most likely werewolf."}, rng)


def scratchpad(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Notes: suspects by wolf score, checks, partners, and whom to vote for."""
    scores = wolf_scores(fields)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    parts = [f"Round {fields['round']}."]
    if fields["partners"]:
        parts.append(f"Partners: {prompts.players_text([int(p) for p in fields['partners']])}.")
    checks = _int_map(fields["checks"])
    if checks:
        parts.append(
            "Checks: " + ", ".join(f"{prompts.player_name(p)} {r}" for p, r in checks.items()) + "."
        )
    if ranked:
        parts.append(
            "Suspects: " + ", ".join(f"{prompts.player_name(p)} {s:.2f}" for p, s in ranked) + "."
        )
    return _answer({"scratchpad": " ".join(parts)}, rng)


def deception_of(fields: Mapping[str, Any], speaker: int, act: Mapping[str, Any]) -> str:
    """The deception type of ``act`` by ``speaker`` *as far as the asker knows* (``none`` if honest).

    For a self-analysis the asker is the speaker, who knows everything it needs.
    """
    kind = act["kind"]
    target = act["target"]
    me = int(fields["player"])
    if kind == "claim":
        if speaker == me:
            return "none" if act["role"] == fields["role"] else "fabrication"
        if act["role"] == fields["role"] and act["role"] in UNIQUE_ROLES:
            return "fabrication"
        if _known_wolf(fields, speaker) and act["role"] != WOLF:
            return "fabrication"
        return "none"
    if kind == "share_check":
        if speaker == me:
            if fields["role"] != "seer":
                return "fabrication"
            mine = _int_map(fields["checks"]).get(int(target))
            return "none" if mine == act["result"] else "distortion"
        if fields["role"] == "seer" or _known_wolf(fields, speaker):
            return "fabrication"
        if act["result"] == WOLF and _known_innocent(fields, int(target)):
            return "fabrication"
        return "none"
    if kind == "accuse":
        if _known_innocent(fields, int(target)) and (speaker == me or _known_wolf(fields, speaker)):
            return "misdirection"
        if speaker != me and int(target) == me and fields["role"] != WOLF:
            return "misdirection"
        return "none"
    if kind == "defend":
        if _known_wolf(fields, int(target)) and int(target) != speaker:
            return "distortion"
        return "none"
    return "none"


def self_analysis(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Truthful: deceptive exactly when the act contradicts the speaker's knowledge."""
    kind = deception_of(fields, int(fields["player"]), fields["act"])
    deceptive = kind != "none"
    conf = round(0.8 + 0.15 * rng.random(), 2)
    return _answer({"deceptive": deceptive, "type": kind, "confidence": conf}, rng)


def peer_analysis(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """A contradiction with the observer's knowledge, else its wolf score of the speaker."""
    speaker = int(fields["speaker"])
    scores = wolf_scores(fields)
    base = scores.get(speaker, PRIOR)
    kind = deception_of(fields, speaker, fields["act"])
    if kind != "none":
        suspicion = max(base, 0.85)
        label, confidence = "deceptive", 0.9
        why = "It contradicts what I know."
    else:
        act = fields["act"]
        if act["kind"] == "accuse" and act["target"] is not None:
            # Accusing someone I suspect less than the speaker is a mild red flag.
            if scores.get(int(act["target"]), PRIOR) < base:
                base = min(1.0, base + 0.1)
        suspicion = base
        label = "deceptive" if suspicion >= 0.6 else "truthful"
        confidence = round(0.5 + abs(suspicion - 0.5), 2)
        why = "Judged from how much I suspect them already."
    return _answer(
        {
            "label": label,
            "confidence": confidence,
            "suspicion": round(float(suspicion), 3),
            "reasoning": why,
        },
        rng,
    )


#: Task -> scripted handler.
HANDLERS = {
    prompts.NIGHT_KILL.task: night_kill,
    prompts.NIGHT_PROTECT.task: night_protect,
    prompts.NIGHT_CHECK.task: night_check,
    prompts.NIGHT_WITCH.task: night_witch,
    prompts.BID.task: bid,
    prompts.SPEECH_ACT.task: speech_act,
    prompts.STATEMENT.task: statement,
    prompts.VOTE.task: vote,
    prompts.SCRATCHPAD.task: scratchpad,
    prompts.SELF_ANALYSIS.task: self_analysis,
    prompts.PEER_ANALYSIS.task: peer_analysis,
}


def as_json(text: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The structured answer: the handler's JSON object without a code fence."""
    return parse_json_object(text)


def seeding_fields(task: str) -> tuple[str, ...] | None:
    """The fields that seed ``task``'s generator: all but :data:`ORDERED_FIELDS`
    (None: all of them, for a task that lists no choices)."""
    fields = prompts.BOOK[task].fields
    if not fields & set(ORDERED_FIELDS):
        return None
    return tuple(sorted(fields - set(ORDERED_FIELDS)))


for _task, _handler in HANDLERS.items():
    register_scripted_task(_task, _handler, seeded_by=seeding_fields(_task), as_json=as_json)
