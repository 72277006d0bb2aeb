"""The summary of a Werewolf day solve: strategies by role, each side's CFR-Gain, the
answers to the two questions, and the printed report.

The summary's typed values are :mod:`games.werewolf.day.results` (re-exported here).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from games.engine.noise_report import metric_text, noise_lines
from games.werewolf.day.abstraction import Abstraction
from games.werewolf.day.build import DaySubgame
from games.werewolf.day.results import (
    DaySolveSummary,
    GainQuestion,
    MeanStd,
    ModelResult,
    Questions,
    SideGains,
    StrategyAnswer,
    StrategyQuestion,
    load_summary,
)
from games.werewolf.day.state import DayState, DealChance
from games.werewolf.play.quality import quality_lines
from runs.intervals import mean_ci95, welch_half_width
from solvers import CHANCE, TERMINAL, GameTree, TreePolicy
from solvers.values import reach_probabilities

__all__ = [
    "DIFFERENCE_TV",
    "DaySolveSummary",
    "GainQuestion",
    "MeanStd",
    "ModelResult",
    "Questions",
    "SideGains",
    "StrategyAnswer",
    "StrategyQuestion",
    "listed_votes",
    "load_summary",
    "report_lines",
    "strategy_by_role",
]


#: Total-variation distance from which two strategies are reported as different.
DIFFERENCE_TV = 0.1
GROUPS = ("werewolf", "village")


# --- analysis of solved days ---------------------------------------------------------


def _group(role: str) -> str:
    return "werewolf" if role == "werewolf" else "village"


def _node_values(tree: GameTree, policy: TreePolicy | np.ndarray) -> np.ndarray:
    """Every node's expected returns under ``policy`` (children follow parents)."""
    probs = policy.probs if isinstance(policy, TreePolicy) else policy
    values = np.array(tree.returns, dtype=float)
    for n in range(tree.num_nodes - 1, -1, -1):
        if tree.kind[n] == TERMINAL or tree.num_children[n] == 0:
            continue
        ch = np.arange(tree.first_child[n], tree.first_child[n] + tree.num_children[n])
        if tree.kind[n] == CHANCE:
            w = tree.chance_prob[ch]
        else:
            w = probs[tree.infoset[n], tree.child_rank[ch]]
        values[n] = w @ values[ch]
    return values


def _deviation_gains(tree: GameTree, policy: TreePolicy, baseline: TreePolicy) -> np.ndarray:
    """Per node and player, CFR-Gain's term below the node.

    ``u_i(sigma_CFR,i, sigma_base,-i) - u_i(sigma_base)`` (:mod:`solvers.cfr_gain`)
    evaluated at every node: player ``i`` switches to CFR, everybody else keeps
    the baseline. At the root its sum over players is the tree's CFR-Gain.
    """
    base = _node_values(tree, baseline)
    out = np.empty_like(base)
    for i in range(tree.num_players):
        mixed = baseline.probs.copy()
        mine = tree.infoset_player == i
        mixed[mine] = policy.probs[mine]
        out[:, i] = _node_values(tree, mixed)[:, i] - base[:, i]
    return out


def _empty(ab: Abstraction) -> dict[str, Any]:
    return {"decisions": 0, "tones": np.zeros(len(ab.tones)), "acts": np.zeros(len(ab.acts))}


def strategy_by_role(
    subgames: Sequence[DaySubgame], policies: Sequence[TreePolicy]
) -> dict[str, dict[str, Any]]:
    """Reach-weighted tone and act distributions of the CFR policies, per role group.

    Every information set's action distribution is weighted by the probability
    that the profile (chance included) reaches it; the totals are normalised per
    group. ``decisive`` keeps only the information sets where the choice changes
    the speaker's own expected return under the profile (by more than 1e-9):
    elsewhere CFR's average strategy is arbitrary (it stays near uniform).
    """
    ab = subgames[0].day_root.settings.abstraction
    mass = {(g, d): _empty(ab) for g in GROUPS for d in (False, True)}
    for sg, pol in zip(subgames, policies, strict=True):
        tree = sg.tree
        facts = sg.infosets
        reach = reach_probabilities(tree, pol)
        values = _node_values(tree, pol)
        for s in range(tree.num_infosets):
            nodes = tree.infoset_nodes[tree.infoset_node_ptr[s] : tree.infoset_node_ptr[s + 1]]
            player = int(tree.infoset_player[s])
            w = float(reach[nodes].sum())
            legal = tree.legal_actions(s)
            # The player's value of each action, averaged over the set's nodes by reach.
            weights = reach[nodes] if w > 0 else np.ones(len(nodes))
            action_values = np.zeros(len(legal))
            for node, wn in zip(nodes, weights, strict=True):
                first = tree.first_child[node]
                action_values += wn * values[first : first + len(legal), player]
            action_values /= weights.sum()
            decisive = float(np.ptp(action_values)) > 1e-9
            g = _group(facts[s].role)
            for key in ((g, False), (g, True)) if decisive else ((g, False),):
                m = mass[key]
                m["decisions"] += 1
                for j, a in enumerate(legal):
                    tone, token = ab.decode(int(a))
                    p = w * float(pol.probs[s, j])
                    m["tones"][ab.tones.index(tone)] += p
                    m["acts"][ab.acts.index(token)] += p

    def dist(names: Sequence[str], x: np.ndarray) -> dict[str, float | None]:
        total = x.sum()
        return {k: (float(v / total) if total > 0 else None) for k, v in zip(names, x, strict=True)}

    out: dict[str, dict[str, Any]] = {}
    for g in GROUPS:
        out[g] = {}
        for d, name in ((False, "all"), (True, "decisive")):
            m = mass[(g, d)]
            out[g][name] = {
                "decisions": m["decisions"],
                "reach": float(m["tones"].sum()),
                "tones": dist(ab.tones, m["tones"]),
                "acts": dist(ab.acts, m["acts"]),
            }
    return out


def listed_votes(subgames: Sequence[DaySubgame]) -> dict[str, int]:
    """Where each vote's choice stood in its prompt's list, over every tree's vote leaves.

    Returns:
      ``{"length:position": count}`` (a vote whose answer fell back is not counted).
    """
    counts: Counter[str] = Counter()
    for sg in subgames:
        for state in sg.states():
            if isinstance(state, DayState) and state.is_terminal():
                counts.update(f"{n}:{pos}" for n, pos in state.vote_listed if pos is not None)
    return dict(sorted(counts.items()))


def _tv(p: Mapping[str, float | None], q: Mapping[str, float | None]) -> float | None:
    """Total-variation distance of two distributions; None if either has an undefined entry."""
    pv = {k: v for k, v in p.items() if v is not None}
    qv = {k: v for k, v in q.items() if v is not None}
    if len(pv) < len(p) or len(qv) < len(q):
        return None
    return 0.5 * sum(abs(float(pv[k]) - float(qv[k])) for k in pv)


def _side_row(
    chance: DealChance, gain: np.ndarray, first: int, speaking: bool
) -> dict[str, Any] | None:
    """One day's row of :func:`_side_gains` (None: ``speaking`` and no werewolf speaks)."""
    total = wolf = village = 0.0
    for k, w in chance.probabilities():
        root = chance.deals[k].root
        if speaking and not any(root.role(p) == "werewolf" for p in root.speakers):
            continue
        wolves = [p for p, r in enumerate(root.start.roles) if r == "werewolf"]
        per = gain[first + k]
        total += w
        wolf += w * float(per[wolves].sum())
        village += w * float(per.sum() - per[wolves].sum())
    if total == 0.0:
        return None
    return {
        "werewolf_speaker_share": chance.wolf_speaker_share(),
        "werewolf_gain": wolf / total,
        "village_gain": village / total,
    }


def _side_gains(
    subgames: Sequence[DaySubgame],
    policies: Sequence[TreePolicy],
    baselines: Sequence[TreePolicy],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each day's CFR-Gain of each side: the sides' summed gains, expected over the deals.

    A seat's side changes with the deal, so the gain is taken per deal (each
    player's CFR-Gain term at the root chance node's child for the deal,
    :func:`_deviation_gains`, computed once per tree) and summed over that
    deal's werewolves (village: the others), then weighed by the deals'
    probabilities: over all deals the two sides add up to the day's CFR-Gain.

    Returns:
      The rows over all deals (one per day), and the rows over the deals in
      which a werewolf is among the speakers (one per day that has one).
    """
    every: list[dict[str, Any]] = []
    speaking: list[dict[str, Any]] = []
    for sg, pol, base in zip(subgames, policies, baselines, strict=True):
        gain = _deviation_gains(sg.tree, pol, base)
        first = int(sg.tree.first_child[0])
        for rows, only_speaking in ((every, False), (speaking, True)):
            row = _side_row(sg.day_root, gain, first, only_speaking)
            if row is not None:
                rows.append(row)
    return every, speaking


def _mean_std(xs: Sequence[float]) -> MeanStd:
    a = np.asarray(xs, dtype=float)
    if a.size == 0:
        return MeanStd(n=0, mean=None, std=None)
    mean, ci = mean_ci95(a)
    return MeanStd(n=int(a.size), mean=mean, std=float(a.std()), ci95=ci)


def _welch_difference(a: MeanStd, b: MeanStd) -> tuple[float | None, float | None]:
    """Welch's 95 % interval of ``b.mean - a.mean`` from the two summaries (None if n < 2)."""
    if a.std is None or b.std is None or a.mean is None or b.mean is None:
        return None, None
    # MeanStd keeps the ddof-0 spread: back to the sample variance.
    welch = welch_half_width(
        a.std**2 * a.n / max(a.n - 1, 1), a.n, b.std**2 * b.n / max(b.n - 1, 1), b.n
    )
    if welch is None:
        return None, None
    half, _ = welch
    d = b.mean - a.mean
    return d - half, d + half


def side_gains(rows: Sequence[Mapping[str, Any]]) -> SideGains:
    """Each side's CFR-Gain over the rows of :func:`_side_gains`."""
    return SideGains(
        werewolf=_mean_std([r["werewolf_gain"] for r in rows]),
        village=_mean_std([r["village_gain"] for r in rows]),
    )


def _questions(per_model: Mapping[str, ModelResult], label: str) -> Questions:
    answers = {}
    for m, v in per_model.items():
        s = v.strategies
        w, g = s["werewolf"]["decisive"], s["village"]["decisive"]
        tv_acts = _tv(w["acts"], g["acts"])
        tv_tones = _tv(w["tones"], g["tones"])
        if tv_acts is None or tv_tones is None:
            answer = "no decisive werewolf (or village) decision was solved"
            differs = None
        else:
            differs = max(tv_acts, tv_tones) >= DIFFERENCE_TV
            answer = "yes" if differs else "no"
        answers[m] = StrategyAnswer(
            differs=differs,
            answer=answer,
            tv_acts=tv_acts,
            tv_tones=tv_tones,
            tv_acts_all_decisions=_tv(s["werewolf"]["all"]["acts"], s["village"]["all"]["acts"]),
            werewolf=s["werewolf"],
            village=s["village"],
        )
    q1 = StrategyQuestion(
        label=label,
        threshold_tv=DIFFERENCE_TV,
        decided_on="decisive decisions (where the choice changes the speaker's own "
        "expected return under the CFR profile)",
        per_model=answers,
    )
    gains = {m: v.side_gain_werewolf_days.werewolf for m, v in per_model.items()}
    difference = None
    ci: tuple[float | None, float | None] = (None, None)
    if "none" in per_model and "gratr" in per_model:
        a, b = gains["none"], gains["gratr"]
        if a.mean is None or b.mean is None:
            falls = None
            answer = "no day with a werewolf speaker: nothing to compare"
        else:
            difference = b.mean - a.mean
            ci = _welch_difference(a, b)
            lo, hi = ci
            if lo is None or hi is None:
                falls, answer = None, "too few days for an interval (n < 2)"
            elif hi < 0:
                falls, answer = (
                    True,
                    f"yes (gratr - none {difference:.3f}, 95% CI [{lo:.3f}, {hi:.3f}])",
                )
            elif lo > 0:
                falls, answer = (
                    False,
                    f"no, it rises ({difference:.3f}, 95% CI [{lo:.3f}, {hi:.3f}])",
                )
            else:
                falls = None
                answer = (
                    f"not distinguishable from noise (gratr - none {difference:.3f}, "
                    f"95% CI [{lo:.3f}, {hi:.3f}] contains 0)"
                )
    else:
        falls = None
        answer = "needs both models none and gratr in --models"
    q2 = GainQuestion(
        label=label,
        per_model=gains,
        falls=falls,
        answer=answer,
        difference_gratr_minus_none=difference,
        difference_ci95=ci,
    )
    return Questions(strategy=q1, gain=q2)


def report_lines(summary: DaySolveSummary, out: Path | str) -> list[str]:
    """The command's printed report: headline numbers per model and the two answers."""
    label = summary.label.label
    lines = [f"werewolf day results in {out}  (model: {label})"]
    for m, v in summary.models.items():
        f = v.final
        w = v.side_gain_werewolf_days.werewolf
        wtxt = w.text() if w.n else "n/a (no werewolf speaker)"
        lines.append(
            f"  {m:10s} NashConv {metric_text(f, 'nash_conv')}   "
            f"CFR-Gain {metric_text(f, 'cfr_gain')}   "
            f"CFR-Gain > NashConv in {v.ess_days}/{len(v.ess_first_iteration)} days   "
            f"werewolf-side CFR-Gain {wtxt}"
        )
        # Answer quality beside the parse counts, from the model's ``parse``; then the noise.
        lines.extend(quality_lines(v.quality(), indent=f"  {'':10s} "))
        lines.extend(noise_lines(v.noise, indent=f"  {'':10s} "))
    q = summary.questions
    lines.append(f"Q1 does a werewolf's CFR strategy differ from a villager's? [{label}]")
    for m, a in q.strategy.per_model.items():

        def top(d: Mapping[str, float | None]) -> str:
            known = {k: x for k, x in d.items() if x is not None}
            return (
                ", ".join(
                    f"{k} {x:.2f}" for k, x in sorted(known.items(), key=lambda kv: -kv[1])[:3]
                )
                or "-"
            )

        tv = "" if a.tv_acts is None else f" (TV acts {a.tv_acts:.2f}, tones {a.tv_tones:.2f})"
        lines.append(
            f"  {m:10s} {a.answer}{tv}; werewolf acts: {top(a.werewolf['decisive']['acts'])}; "
            f"village acts: {top(a.village['decisive']['acts'])}"
        )
    lines.append(
        f"Q2 does the werewolf side's CFR-Gain fall with GRATR listeners instead of none? "
        f"{q.gain.answer} [{label}]"
    )
    if summary.llm_calls is not None:
        c = summary.llm_calls
        lines.append(f"  LLM calls: {c['misses']} made, {c['hits']} from the cache")
    return lines
