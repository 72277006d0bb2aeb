"""Rule-based Werewolf players: deterministic rules, no prompts and no LLM.

Each decision reads only the player's :class:`~games.werewolf.rules.Knowledge`
(its role, partners, checks and the events it saw) and an explicit
``np.random.Generator``; never the hidden roles.  The rules of thumb:

* **Suspicion** of each player accumulates from public speech: accusations (+1),
  defences (-0.5), a claimed check result (werewolf +2, otherwise -1; counted double
  from an uncontested seer claim), contested role claims (+0.5 for the first claimant,
  +2 for each later one),
  accusing a player who then died at night (+1, when no witch could have poisoned
  them, so the dead is known innocent) and revealed roles when the config shows them.
* **Villagers** (and every village role) accuse and vote for the most suspicious
  living player; an accused player claims its true role.
* **The seer** unmasks the most suspicious unchecked player, is eager to speak
  while it has news, shares werewolf checks first, then innocent ones, accuses a
  known werewolf and votes for it.
* **Doctor / guard** protect an uncontested seer claimant, otherwise themselves or
  a random player (the guard never twice in a row: that is not legal).
* **The witch** saves a claimed seer or herself, otherwise the victim with
  probability 0.9 on the first night and 0.5 later; she poisons a player whose suspicion reaches 3.
* **Werewolves** never target, accuse or vote for a partner; they follow a partner's
  night vote, hunt claimed seers and other special roles, vote with the public
  suspicion among non-partners, and lie: a fake seer claim with a false werewolf
  check (probability 0.15 on day one, or as a counter-claim when a partner is
  exposed), accusing villagers, sometimes defending an accused partner.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from games.werewolf.players.view import partner_votes
from games.werewolf.rules import (
    TONES,
    Action,
    Bid,
    Knowledge,
    Save,
    Skip,
    SpeechAct,
    Target,
)

__all__ = ["RuleBasedPlayer", "public_suspicion"]

_SPEAK_TONES = TONES[:3]


def public_suspicion(view: Knowledge) -> dict[int, float]:
    """Suspicion score of each player from the public events ``view`` saw."""
    n = view.config.num_players
    score = dict.fromkeys(range(n), 0.0)
    claims: dict[str, list[int]] = defaultdict(list)  # role -> claimants, first first
    speeches = [e for e in view.events if e.kind == "speech"]
    for e in speeches:
        act, sp = e.data["act"], e.data["player"]
        role = "seer" if act["kind"] == "share_check" else act.get("role")
        if act["kind"] in ("claim", "share_check") and sp not in claims[role]:
            claims[role].append(sp)
    # A contested claim: the first claimant is more credible (a liar counter-claims).
    for role, who in claims.items():
        if role != "villager" and len(who) > 1:
            score[who[0]] += 0.5
            for p in who[1:]:
                score[p] += 2.0
    seers = claims["seer"]
    accusers: dict[int, set[int]] = defaultdict(set)  # target -> who accused it
    for i, e in enumerate(speeches):
        act, sp = e.data["act"], e.data["player"]
        if act["kind"] == "accuse":
            # The tiny recency term makes ties fall the same way for everyone who saw
            # the same debate, so villagers' votes converge instead of scattering.
            score[act["target"]] += 1.0 + 1e-3 * i
            accusers[act["target"]].add(sp)
        elif act["kind"] == "defend":
            score[act["target"]] -= 0.5
        elif act["kind"] == "share_check":
            weight = 2.0 if len(seers) == 1 else 1.5 if sp == seers[0] else 0.5
            if act["result"] == "werewolf":
                score[act["target"]] += 2.0 * weight
                accusers[act["target"]].add(sp)
            else:
                score[act["target"]] -= 1.0 * weight
    no_poison = view.config.roles.witch == 0
    for e in view.events:
        roles = e.data.get("roles", {})
        if e.kind == "deaths" and no_poison:
            for dead in e.data["players"]:  # killed by wolves: surely innocent
                for acc in accusers.get(dead, ()):
                    score[acc] += 1.0
        for p, r in roles.items():
            p = int(p)
            for acc in accusers.get(p, ()):
                score[acc] += -1.5 if r == "werewolf" else 1.5
    return score


def _best(cands: Sequence[int], score: dict[int, float], rng: np.random.Generator) -> int:
    """The highest scored candidate; ties broken by ``rng``."""
    top = max(score[c] for c in cands)
    best = [c for c in cands if score[c] == top]
    return int(best[rng.integers(len(best))]) if len(best) > 1 else best[0]


def _tone(rng: np.random.Generator) -> str:
    return _SPEAK_TONES[int(rng.integers(len(_SPEAK_TONES)))]


def _seer_claimants(view: Knowledge) -> set[int]:
    out = set()
    for e in view.events:
        if e.kind == "speech":
            act = e.data["act"]
            if act["kind"] == "share_check" or (act["kind"] == "claim" and act["role"] == "seer"):
                out.add(e.data["player"])
    return out


def _my_shared(view: Knowledge) -> set[int]:
    """Targets of the checks this player already shared."""
    return {
        e.data["act"]["target"]
        for e in view.events
        if e.kind == "speech"
        and e.data["player"] == view.player
        and e.data["act"]["kind"] == "share_check"
    }


class RuleBasedPlayer:
    """A rule-based player (deterministic given the generator passed to :meth:`act`)."""

    name = "scripted"

    def act(self, view: Knowledge, legal: Sequence[Action], rng: np.random.Generator) -> Action:
        """The chosen action, always one of ``legal``."""
        phase = view.phase
        if phase == "day_bid":
            return self._bid(view, rng)
        if phase == "day_speak":
            act = self._speak(view, rng)
            return act if act in legal else SpeechAct("nothing", _tone(rng))
        targets = [a.player for a in legal if isinstance(a, Target)]
        if phase == "night_wolves":
            return Target(self._wolf_target(view, targets, rng))
        if phase in ("night_doctor", "night_guard"):
            return Target(self._protect(view, targets, rng))
        if phase == "night_seer":
            return Target(self._unmask(view, targets, rng))
        if phase == "night_witch_save":
            return self._witch_save(view, rng)
        if phase == "night_witch_poison":
            return self._witch_poison(view, targets, rng)
        if phase == "day_vote":
            return Target(self._vote(view, targets, rng))
        raise ValueError(f"RuleBasedPlayer.act: no rule for phase {phase!r}")

    # -- beliefs ---------------------------------------------------------------------
    def _scores(self, view: Knowledge) -> dict[int, float]:
        """Suspicion with private knowledge applied (checks, partners)."""
        score = public_suspicion(view)
        for t, r in view.checks:
            score[t] = 100.0 if r == "werewolf" else -100.0
        for p in view.partners:
            score[p] = -100.0  # a werewolf never turns on its partners
        score[view.player] = -1000.0
        return score

    # -- night -----------------------------------------------------------------------
    def _wolf_target(self, view: Knowledge, targets: list[int], rng) -> int:
        # Follow a partner's choice tonight (each werewolf votes once a night).
        for t in partner_votes(view).values():
            if t in targets:
                return t
        danger = dict.fromkeys(targets, 0.0)
        seers = _seer_claimants(view)
        for e in view.events:
            if e.kind != "speech":
                continue
            act, sp = e.data["act"], e.data["player"]
            if sp not in danger:
                continue
            if sp in seers:
                danger[sp] += 3.0
            if act["kind"] == "claim" and act["role"] != "villager":
                danger[sp] += 2.0
            if act["kind"] in ("accuse", "share_check") and act["target"] in (
                *view.partners,
                view.player,
            ):
                danger[sp] += 1.0
        return _best(targets, danger, rng)

    def _protect(self, view: Knowledge, targets: list[int], rng) -> int:
        seers = [p for p in _seer_claimants(view) if p in targets]
        if len(seers) == 1:
            return seers[0]
        if view.player in targets and rng.random() < 0.5:
            return view.player
        return int(targets[rng.integers(len(targets))])

    def _unmask(self, view: Knowledge, targets: list[int], rng) -> int:
        checked = {t for t, _ in view.checks}
        fresh = [t for t in targets if t not in checked] or targets
        score = public_suspicion(view)
        noisy = {t: score[t] + rng.random() for t in fresh}
        return max(fresh, key=lambda t: noisy[t])

    def _witch_save(self, view: Knowledge, rng) -> Action:
        victims = [e.data["target"] for e in view.events if e.kind == "witch_victim"]
        victim = victims[-1] if victims else None
        if victim is None:
            return Skip()
        # The save is worth most early, while the village is large.
        chance = 0.9 if view.round == 1 else 0.5
        if victim == view.player or victim in _seer_claimants(view) or rng.random() < chance:
            return Save()
        return Skip()

    def _witch_poison(self, view: Knowledge, targets: list[int], rng) -> Action:
        score = self._scores(view)
        if targets:
            t = _best(targets, score, rng)
            if score[t] >= 3.0:
                return Target(t)
        return Skip()

    # -- day -------------------------------------------------------------------------
    def _bid(self, view: Knowledge, rng) -> Bid:
        score = public_suspicion(view)
        shared = _my_shared(view)
        urgent = score[view.player] >= 2.0 or any(
            t not in shared and view.alive[t] for t, _ in view.checks
        )
        return Bid(int(rng.integers(6, 11)) if urgent else int(rng.integers(0, 7)))

    def _speak(self, view: Knowledge, rng) -> SpeechAct:
        if view.role == "werewolf":
            return self._wolf_speech(view, rng)
        tone = _tone(rng)
        living_others = [p for p in view.living() if p != view.player]
        shared = _my_shared(view)
        for t, r in view.checks:  # the seer's news first
            if r == "werewolf" and view.alive[t] and t not in shared:
                return SpeechAct("share_check", tone, target=t, result=r)
        known_wolves = [t for t, r in view.checks if r == "werewolf" and view.alive[t]]
        if known_wolves:
            return SpeechAct("accuse", tone, target=known_wolves[0])
        public = public_suspicion(view)
        for t, r in view.checks:  # then clear the innocents it knows
            if view.alive[t] and t not in shared:
                return SpeechAct("share_check", tone, target=t, result=r)
        if public[view.player] >= 2.0:
            return SpeechAct("claim", tone, role=view.role)
        score = self._scores(view)
        if living_others:
            t = _best(living_others, score, rng)
            if score[t] >= 1.0 or rng.random() < 0.3:
                return SpeechAct("accuse", tone, target=t)
        return SpeechAct("nothing", tone)

    def _wolf_speech(self, view: Knowledge, rng) -> SpeechAct:
        tone = _tone(rng)
        wolves = {view.player, *view.partners}
        villagers = [p for p in view.living() if p not in wolves]
        public = public_suspicion(view)
        claimed = view.player in _seer_claimants(view)
        exposed = [
            e.data["player"]
            for e in view.events
            if e.kind == "speech"
            and e.data["act"]["kind"] == "share_check"
            and e.data["act"]["target"] in wolves
            and e.data["act"]["result"] == "werewolf"
            and view.alive[e.data["player"]]
        ]
        if not villagers:
            return SpeechAct("nothing", tone)
        fake_claim = (exposed and rng.random() < 0.5) or (
            view.round == 1 and not _seer_claimants(view) and rng.random() < 0.15
        )
        if claimed or fake_claim:
            # A (false) seer: "checks" a villager as a werewolf, the accuser first.
            t = exposed[0] if exposed else _best(villagers, public, rng)
            if t in _my_shared(view):
                return SpeechAct("accuse", tone, target=t)
            return SpeechAct("share_check", tone, target=t, result="werewolf")
        suspected = [p for p in view.partners if view.alive[p] and public[p] >= 2.0]
        if suspected and rng.random() < 0.3:
            return SpeechAct("defend", tone, target=suspected[0])
        if public[view.player] >= 2.0 and rng.random() < 0.5:
            return SpeechAct("claim", tone, role="villager")
        t = _best(villagers, public, rng)
        if public[t] > 0 or rng.random() < 0.5:
            return SpeechAct("accuse", tone, target=t)
        return SpeechAct("nothing", tone)

    def _vote(self, view: Knowledge, targets: list[int], rng) -> int:
        if view.role == "werewolf":
            score = public_suspicion(view)
            for p in (*view.partners, view.player):
                score[p] = -1000.0
            return _best(targets, score, rng)
        return _best(targets, self._scores(view), rng)
