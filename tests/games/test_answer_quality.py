"""Answer quality beside the parse counts, and the fruit-trading judge."""

from __future__ import annotations

from games.engine.calls import run_sync
from games.engine.quality import answer_quality, largest_share, pool_counts, quality_lines
from games.fruit_trading import dialogue, prompts
from games.fruit_trading.rules import PrivateInfo, Trade
from games.werewolf.play.quality import QualityTally, series_quality
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse


def test_largest_share_and_pooling():
    assert largest_share({}) is None
    assert largest_share({"3": 4, "1": 2, "2": 2}) == {
        "value": "3", "count": 4, "total": 8, "share": 0.5,
    }  # fmt: skip
    pooled = pool_counts([{"votes": {"1": 2}, "n": 1}, {"votes": {"1": 1, "2": 5}, "n": 2}])
    assert pooled == {"votes": {"1": 3, "2": 5}, "n": 3}
    q = answer_quality(
        {"parsed": {"a": 4, "b": 2}, "copied": {"a": 1}}, {"votes": pooled["votes"]}, {"x": 0}
    )
    assert q["copied"]["a"] == {"copied": 1, "parsed": 4, "share": 0.25}
    assert (q["copied_answers"], q["answers"], q["x"]) == (1, 6, 0)
    assert q["largest_share"]["votes"]["value"] == "2"
    assert any("5/8" in line for line in quality_lines(q))


def _event(kind, **data):
    return {"type": "event", "kind": kind, "round": 1, **data}


def test_werewolf_tally_counts_contradictions_of_certain_knowledge():
    t = QualityTally()
    records = [
        _event("partners", werewolves=[2, 5]),
        _event("check", player=0, target=2, result="werewolf"),
        _event("check", player=0, target=4, result="villager"),
        {"type": "action", "phase": "night_wolves", "action": {"type": "Target", "player": 3}},
        {"type": "action", "phase": "night_doctor", "action": {"type": "Target", "player": 3}},
        {"type": "action", "phase": "day_vote", "action": {"type": "Target", "player": 1}},
        _event("speech", player=0, act={"kind": "defend", "target": 2}),  # defends a wolf
        _event("speech", player=0, act={"kind": "accuse", "target": 4}),  # accuses a cleared
        _event("speech", player=0, act={"kind": "accuse", "target": 2}),  # consistent
        _event("speech", player=1, act={"kind": "defend", "target": 2}),  # not a seer
        _event("votes", votes={"2": 5, "1": 1, "0": 2, "3": None}),  # partner, self, fine
        {"type": "peer_analysis", "deceptive": True, "confidence": 0.5, "suspicion": 0.5},
        {"type": "peer_analysis", "deceptive": True, "confidence": 0.5, "suspicion": 0.5},
        {"type": "peer_analysis", "deceptive": False, "confidence": 0.9, "suspicion": 0.1},
    ]
    for r in records:
        t.observe(r)
    c = t.counts()
    assert c["contradictions"] == {
        "seer_defends_werewolf": 1, "seer_accuses_cleared": 1, "wolf_votes_partner": 1,
        "self_vote": 1, "seer_votes_cleared": 0, "witch_votes_attacked": 0,
    }  # fmt: skip
    assert c["night_targets"] == {"3": 2}  # the day vote is not a night action
    assert c["votes"] == {"5": 1, "1": 1, "2": 1}
    q = series_quality({"parsed": {}}, [c, c])
    assert q["contradictions"]["self_vote"] == 2
    assert q["largest_share"]["night_targets"]["share"] == 1.0
    assert q["largest_share"]["peer_answers"]["count"] == 4


def test_a_real_exchange_gives_something_each_way_within_the_endowments():
    infos = [PrivateInfo("A", (1, 1, 1), (1, 1, 1)), PrivateInfo("B", (2, 2, 2), (1, 1, 1))]
    assert Trade(((1, 0, 0), (0, 2, 0))).is_exchange(infos)
    assert not Trade(((1, 0, 0), (0, 0, 0))).is_exchange(infos)  # a gift
    assert not Trade(((1, 0, 0), (1, 0, 0))).is_exchange(infos)  # the same fruit both ways
    assert not Trade(((2, 0, 0), (0, 1, 0))).is_exchange(infos)  # more than A has


class _Judge(ChatModel):
    """Answers by task: proposals, a judge that says yes to everything, a fixed trade."""

    backend, model = "judge", "j"

    def __init__(self, trade: str) -> None:
        self.trade = trade
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        answer = {
            "fruit_trading.agreement": "Yes",
            "fruit_trading.summarize_trade": self.trade,
            "fruit_trading.compute_payoff": "Value for X: 1",
            "fruit_trading.extract_payoff": "1",
        }.get(request.task, "I would like to trade you 1 apple for 1 banana.")
        return ChatResponse(answer, self.backend, self.model)


def _play(model, messages=3):
    cfg = dialogue.Config(max_messages=messages, structured=False)
    state = dialogue.initial_state(cfg.scenario(0), cfg)
    while not state.is_terminal():
        state = run_sync(dialogue.step(state, "calm", 0), model)
    return state


def test_the_judge_waits_for_both_players_and_is_asked_in_both_label_orders():
    names = dialogue.Config().scenario(0).players
    a, b = names[0], names[1]
    give_a = next(i for i in range(3) if a.endowment[i])
    give_b = next(i for i in range(3) if b.endowment[i] and i != give_a)
    fruit = ("apple", "banana", "orange")
    trade = (
        f"Player {a.name}: Receives 1 {fruit[give_b]} Gives 1 {fruit[give_a]}\n"
        f"Player {b.name}: Receives 1 {fruit[give_a]} Gives 1 {fruit[give_b]}"
    )
    model = _Judge(trade)
    state = _play(model)
    judged = [r for r in model.requests if r.task == prompts.AGREEMENT.task]
    # Not after the opening; after message 2, once per label order, reading the dialogue.
    assert state.agreement and state.num_messages == 2
    assert sorted(tuple(r.fields["labels"]) for r in judged) == sorted(prompts.LABEL_ORDERS)
    assert all(len(r.fields["turns"]) == 2 for r in judged)
    assert all(r.fields["turns"][0]["text"] in r.messages[-1].content for r in judged)
    assert state.payoff is not None and state.payoff.exact is not None


def test_a_verdict_whose_trade_is_no_exchange_does_not_end_the_negotiation():
    model = _Judge(
        "Player A: Receives nothing Gives nothing\nPlayer B: Receives nothing Gives nothing"
    )
    state = _play(model)
    assert not state.agreement and state.num_messages == 3
    assert state.not_exchanges == (2, 3)
    assert not any(r.task == prompts.COMPUTE_PAYOFF.task for r in model.requests)
