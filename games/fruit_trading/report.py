"""The paper's tables from expanded negotiations (pure functions of the states).

Each function takes the :class:`~games.fruit_trading.tree.Subgame` objects of
one variant and counts over every dialogue state of every tree, i.e. over
every distinct history (as the paper counts over its game trees):

* :func:`guess_table` — Table 1: % correct guesses of the opponent's most
  wanted fruit after messages 1–3 (correct = one of the opponent's
  highest-valued fruits; with ties any of them counts);
* :func:`agreement_rates` — Fig. 6: % of histories of length m that end in an
  agreement at message m;
* :func:`payoff_signs` — Tables 2 and 3: among agreements at message m, % with
  a positive (negative) payoff for player 1, player 2 and both;
* :func:`payoff_disagreements` — agreed trades whose LLM-computed payoff
  differs from the payoff computed exactly from the parsed trade
  (:func:`payoff_disagreement_text`: the end-of-run line).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from games.engine.noise_report import metric_text, noise_table
from games.engine.quality import answer_quality
from games.fruit_trading.dialogue import DialogueState
from games.fruit_trading.tree import Subgame


def _states(subgames: Iterable[Subgame]) -> list[DialogueState]:
    return [s for sg in subgames for s in sg.states()]


def _pct(num: int, den: int) -> float:
    return 100.0 * num / den if den else float("nan")


def guess_table(
    subgames: Sequence[Subgame], messages: Sequence[int] = (1, 2, 3)
) -> list[dict[str, Any]]:
    """Table 1 rows: message, correct, total, percentage."""
    correct = dict.fromkeys(messages, 0)
    total = dict.fromkeys(messages, 0)
    for s in _states(subgames):
        # Each state owns the guess made right after its last message.
        if s.guesses and s.guesses[-1].message == s.num_messages and s.num_messages in total:
            g = s.guesses[-1]
            total[g.message] += 1
            correct[g.message] += int(g.correct)
    return [
        {
            "message": m,
            "correct": correct[m],
            "total": total[m],
            "percentage": _pct(correct[m], total[m]),
        }
        for m in messages
    ]


def guess_table_distinct(
    subgames: Sequence[Subgame], messages: Sequence[int] = (1, 2, 3)
) -> list[dict[str, Any]]:
    """Table 1 over distinct dialogues: each dialogue text counted once per subgame.

    Tree nodes are distinct histories of (tone, seed) choices; several of them
    can produce the same dialogue text (and so the same guess request). The
    paper counts the dialogues of its own (larger) tree; this count removes
    the duplicates our tone x seed branching creates.
    """
    seen: dict[tuple[int, int, str], bool] = {}
    for sg in subgames:
        for s in sg.states():
            if s.guesses and s.guesses[-1].message == s.num_messages and s.num_messages in messages:
                g = s.guesses[-1]
                seen[(sg.scenario.init, g.message, s.dialogue_text())] = g.correct
    rows = []
    for m in messages:
        hits = [c for (_, msg, _), c in seen.items() if msg == m]
        rows.append(
            {
                "message": m,
                "correct": sum(hits),
                "total": len(hits),
                "percentage": _pct(sum(hits), len(hits)),
            }
        )
    return rows


def agreement_rates(subgames: Sequence[Subgame], max_messages: int) -> list[dict[str, Any]]:
    """Fig. 6 rows: message, agreements, histories, percentage."""
    agreed = dict.fromkeys(range(1, max_messages + 1), 0)
    total = dict.fromkeys(range(1, max_messages + 1), 0)
    for s in _states(subgames):
        if s.num_messages in total:
            total[s.num_messages] += 1
            agreed[s.num_messages] += int(s.agreement)
    return [
        {
            "message": m,
            "agreements": agreed[m],
            "histories": total[m],
            "percentage": _pct(agreed[m], total[m]),
        }
        for m in total
    ]


def payoff_signs(
    subgames: Sequence[Subgame], messages: Sequence[int] = (3, 4)
) -> list[dict[str, Any]]:
    """Tables 2 and 3 rows: message, agreements, % positive and % negative per player and both."""
    rows = []
    states = [s for s in _states(subgames) if s.agreement]
    for m in messages:
        pay = [s.returns() for s in states if s.num_messages == m]
        n = len(pay)
        rows.append(
            {
                "message": m,
                "agreements": n,
                "positive_p1": _pct(sum(p[0] > 0 for p in pay), n),
                "positive_p2": _pct(sum(p[1] > 0 for p in pay), n),
                "positive_both": _pct(sum(p[0] > 0 and p[1] > 0 for p in pay), n),
                "negative_p1": _pct(sum(p[0] < 0 for p in pay), n),
                "negative_p2": _pct(sum(p[1] < 0 for p in pay), n),
                "negative_both": _pct(sum(p[0] < 0 and p[1] < 0 for p in pay), n),
            }
        )
    return rows


def answer_quality_report(
    subgames: Sequence[Subgame], variant: Mapping[str, Any]
) -> dict[str, Any]:
    """The variant's answer quality (:func:`games.engine.quality.answer_quality`).

    Copied answers per task (from the parse counts), the largest share of one
    opening message and of one agreed trade, agreements per message, the
    judge's verdicts of agreement whose summarised trade was not a real
    exchange (so the negotiation went on), and the degeneracy counts.
    """
    states = _states(subgames)
    openings = Counter(s.turns[0].text for s in states if s.num_messages == 1)
    trades = Counter(s.payoff.trade_text for s in states if s.agreement and s.payoff is not None)
    return answer_quality(
        variant["parse"],
        {"opening_message": openings, "agreed_trade": trades},
        {
            "agreements_per_message": {
                str(r["message"]): r["agreements"] for r in variant["agreements"]
            },
            # Each state whose own last message got such a verdict (its children inherit it).
            "not_exchange_verdicts": sum(
                bool(s.not_exchanges) and s.not_exchanges[-1] == s.num_messages for s in states
            ),
            "degeneracy": variant["degeneracy"],
        },
    )


def payoff_disagreements(subgames: Sequence[Subgame]) -> dict[str, Any]:
    """How often the LLM payoff differs from the exact payoff of the parsed trade."""
    recs = [s.payoff for s in _states(subgames) if s.agreement and s.payoff is not None]
    unparsed = sum(r.exact is None for r in recs)
    differ = [r for r in recs if r.exact is not None and r.disagrees]
    infeasible = sum(r.feasible is False for r in recs)
    return {
        "agreements": len(recs),
        "trade_unparsed": unparsed,
        "llm_vs_exact_differ": len(differ),
        "infeasible_trades": infeasible,
        "examples": [
            {
                "message": r.message,
                "llm": list(r.llm),
                "exact": list(r.exact or ()),  # always set in ``differ``
                "trade": r.trade_text,
            }
            for r in differ[:5]
        ],
    }


def payoff_disagreement_text(counts: Mapping[str, Any], payoff: str) -> str:
    """One line of :func:`payoff_disagreements`' counts, naming the payoffs the run used."""
    n, differ = counts["agreements"], counts["llm_vs_exact_differ"]
    share = f" ({100.0 * differ / n:.0f} %)" if n else ""
    return (
        f"LLM payoff differs from the exact payoff in {differ} of {n} agreed histories{share}; "
        f"payoffs used: {payoff}"
    )


def _judge_markdown(judge: Mapping[str, Any]) -> list[str]:
    """The agreement judge's scores on the labelled set as a Markdown table."""

    def cell(p: Mapping[str, Any]) -> str:
        if p["value"] is None:
            return f"– | – | {p['n']}"
        return f"{p['value']:.2f} | [{p['low']:.2f}, {p['high']:.2f}] | {p['n']}"

    v, t = judge["verdict"], judge["trade_summary"]
    rows = [
        ("verdict precision", v["precision"]),
        ("verdict recall", v["recall"]),
        ("verdict accuracy", v["accuracy"]),
        ("trade summary accuracy", t["accuracy"]),
        ("trade summary accuracy on agreements", t["on_agreements"]),
        ("trade summary accuracy on non-agreements", t["on_non_agreements"]),
    ]
    out = [
        "",
        f"**The agreement judge ({judge.get('spec', '?')}) on the labelled set** "
        f"({judge['judge_set']['dialogues']} dialogues; Wilson 95 % intervals; "
        "`gt-llm fruit-trading judge-check`).",
        "",
        "| measure | value | 95 % interval | n |",
        "|---|---|---|---|",
    ]
    out += [f"| {name} | {cell(p)} |" for name, p in rows]
    if judge.get("below_floor"):
        out += [
            "",
            f"The verdict precision's lower end is below {judge['precision_floor']:.2f}: "
            "the agreements above are not to be trusted.",
        ]
    return out


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "–"
    return f"{x:.2f}%" if isinstance(x, float) else str(x)


def markdown_tables(summary: dict[str, Any]) -> str:
    """Tables 1–3 (and the ESS and payoff-check counts) of a ``summary.json`` as Markdown."""
    out = [f"Model: **{summary['label']}**", ""]
    variants = summary["variants"]
    with_guesses = {v: d for v, d in variants.items() if "guesses" in d}
    if with_guesses:
        out += [
            "**Table 1.** Correct guesses of the opponent's most valued fruit, over every "
            "history of the tree (tree nodes) and over distinct dialogue texts.",
            "",
            "| Prompting | Message | Correct | Histories | % | Correct (distinct) | "
            "Distinct dialogues | % (distinct) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for v, d in with_guesses.items():
            distinct = {r["message"]: r for r in d.get("guesses_distinct", [])}
            for r in d["guesses"]:
                q = distinct.get(r["message"])
                tail = (
                    f"{q['correct']} | {q['total']} | {_fmt(q['percentage'])}" if q else "– | – | –"
                )
                out.append(
                    f"| {v} | {r['message']} | {r['correct']} | {r['total']} | "
                    f"{_fmt(r['percentage'])} | {tail} |"
                )
        out.append("")
    for title, sign in (("Table 2.** Positive", "positive"), ("Table 3.** Negative", "negative")):
        out += [
            f"**{title} trade payoffs, per message with an agreement.",
            "",
            "| Prompting | Message | Agreements | Player 1 | Player 2 | Both |",
            "|---|---|---|---|---|---|",
        ]
        for v, d in variants.items():
            for r in d["payoff_signs"]:
                out.append(
                    f"| {v} | {r['message']} | {r['agreements']} | {_fmt(r[sign + '_p1'])} | "
                    f"{_fmt(r[sign + '_p2'])} | {_fmt(r[sign + '_both'])} |"
                )
        out.append("")
    out += [
        "**Agreements per message (Fig. 6 data).**",
        "",
        "| Prompting | Message | Agreements | Histories | % |",
        "|---|---|---|---|---|",
    ]
    for v, d in variants.items():
        for r in d["agreements"]:
            out.append(
                f"| {v} | {r['message']} | {r['agreements']} | {r['histories']} | {_fmt(r['percentage'])} |"
            )
    out += [
        "",
        "**CFR after the last iteration and the approximate-ESS test** (mean over "
        "subgames [Student-t 95 % interval], n).",
        "",
        "| Prompting | NashConv | CFR-Gain | subgames with CFR-Gain > NashConv | median first iteration |",
        "|---|---|---|---|---|",
    ]
    for v, d in variants.items():
        f = d["final"]
        ess = sorted(x for x in d["ess_first_iteration"] if x is not None)
        med = ess[len(ess) // 2] if ess else "–"
        out.append(
            f"| {v} | {metric_text(f, 'nash_conv')} | {metric_text(f, 'cfr_gain')} "
            f"| {len(ess)}/{len(d['ess_first_iteration'])} | {med} |"
        )
    noise = {v: d.get("noise") for v, d in variants.items()}
    if any(n is not None for n in noise.values()):
        out += [
            "",
            "**Above noise?** In-sample CFR-Gain and NashConv with their intervals over "
            "subgames; the solved policy scored on held-out LLM seeds (carried over by "
            "each player's own earlier tones) and, beside it, the same carried-over policy "
            "on the solved samples; subgames whose CFR-Gain beats its label-shuffled null "
            "(Benjamini-Hochberg); the permutation p-value of the mean CFR-Gain. Method: "
            "the noise page of the docs.",
            "",
            *noise_table(noise),
        ]
    if any("degeneracy" in d for d in variants.values()):
        out += [
            "",
            "**How degenerate the trees are** (subgames; `solvers.degeneracy_counts`, "
            'baseline: always "any").',
            "",
            "| Prompting | subgames | a tone choice changes some payoff | "
            "NashConv(any) > 0 | constant payoff |",
            "|---|---|---|---|---|",
        ]
        for v, d in variants.items():
            g = d.get("degeneracy")
            if g:
                out.append(
                    f"| {v} | {g['trees']} | {g['decision_changes_outcome']} | "
                    f"{g['baseline_nash_conv_positive']} | {g['constant_payoff']} |"
                )
    if "judge" in summary:
        out += _judge_markdown(summary["judge"])
    return "\n".join(out)
