"""The Werewolf day as a game tree: a hand-worked day, information states, determinism."""

from __future__ import annotations

import json

import numpy as np
import pyspiel
import pytest

import games  # noqa: F401  (registers every game)
import gt_llm
import solvers
from games.engine.calls import run_sync
from games.engine.registry import get_game_spec
from games.engine.spiel import EngineGame
from games.werewolf import rules
from games.werewolf.day import abstraction, build, game, roots, state
from games.werewolf.day import steps as D
from games.werewolf.day.ranking import suspicion_ranking
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse
from gt_llm.opponents import Evidence, OpponentContext, make_opponent_model

ARENA = rules.preset("arena")


def _settings(**kw) -> state.DaySettings:
    # One fixed deal (the seeded game's): the hand-worked payoffs below are of that deal.
    base = dict(config=ARENA, speakers=2, num_seeds=1, deals=0)
    return state.DaySettings(**{**base, **kw})


# --- a day worked by hand ----------------------------------------------------------


class HandModel(ChatModel):
    """Answers statements and votes by a rule the test controls (no opponent calls).

    Votes: if only the werewolf speaker accused, everyone votes for ``innocent``;
    if only the village speaker accused, everyone but the werewolf votes for it;
    otherwise every voter votes for the next living seat (no majority).
    """

    backend = "stub"
    model = "hand"

    def __init__(self, wolf: int, villager: int, innocent: int, living: tuple[int, ...]):
        self.wolf, self.villager, self.innocent, self.living = wolf, villager, innocent, living

    def complete(self, request: ChatRequest) -> ChatResponse:
        f = request.fields
        if request.task == "werewolf.statement":
            text = json.dumps({"statement": f"I {f['act']['kind']} now."})
        elif request.task == "werewolf.vote":
            accusers = {int(s["speaker"]) for s in f["statements"] if s["kind"] == "accuse"}
            me = int(f["player"])
            if accusers == {self.wolf}:
                target = self.innocent if me != self.innocent else self.villager
            elif accusers == {self.villager}:
                target = self.wolf if me != self.wolf else self.innocent
            else:
                target = self.living[(self.living.index(me) + 1) % len(self.living)]
            text = json.dumps({"vote": target + 1, "reason": "rule"})
        else:
            raise AssertionError(f"unexpected task {request.task}")
        return ChatResponse(text=text, backend=self.backend, model=self.model)


@pytest.fixture(scope="module")
def hand_day():
    """A day whose first speaker is a werewolf and second a villager, under the hand model."""
    settings = _settings(
        order="seats",
        abstraction=abstraction.Abstraction(tones=("any",), acts=("nothing", "accuse:least")),
    )
    for seed in range(60):
        root = roots._root_without_models(settings, seed)
        if root is None:
            continue
        a, b = root.speakers
        if root.role(a) == "werewolf" and root.role(b) != "werewolf":
            break
    else:
        pytest.fail("no seed with a werewolf then a villager speaking")
    innocent = next(p for p in root.living if p not in (a, b) and root.role(p) != "werewolf")
    model = HandModel(a, b, innocent, root.living)
    (sg,) = build.build_days(settings, [seed], model, progress=False)
    return sg, settings, a, b, innocent


def test_hand_day_payoff_table(hand_day):
    sg, settings, wolf, villager, innocent = hand_day
    tree = sg.tree
    # Two decisions (2 actions each), one trivial seed node after each: 4 outcomes.
    assert tree.num_terminals == 4
    roles = sg.day_root.public.start.roles
    wolves = [p for p, r in enumerate(roles) if r == "werewolf"]
    # Walk the expanded tree: (wolf action, villager action) -> returns.
    table = {}
    ((deal, _),) = sg.root.children  # the root chance node: the one deal
    for (a1, _), n1 in sg.root.children[(deal, None)].children.items():
        for (a2, _), n2 in n1.children.items():
            table[(a1, a2)] = n2.state.returns()
            assert n2.state.is_terminal()
    nothing = settings.abstraction.action("any", "nothing")
    accuse = settings.abstraction.action("any", "accuse:least")
    plus_wolves = tuple(1.0 if p in wolves else -1.0 for p in range(len(roles)))
    minus_wolves = tuple(-x for x in plus_wolves)
    zero = (0.0,) * len(roles)
    assert table[(nothing, nothing)] == zero
    assert table[(accuse, nothing)] == plus_wolves  # an innocent is exiled
    assert table[(nothing, accuse)] == minus_wolves  # the werewolf is exiled
    assert table[(accuse, accuse)] == zero
    # The sum of payoffs is not constant: general-sum, as declared.
    assert len({sum(r) for r in table.values()}) == 3
    assert game.utility_of(ARENA) == pyspiel.GameType.Utility.GENERAL_SUM


class ListingHandModel(HandModel):
    """The hand model, keeping each vote prompt's list and the seat it voted for."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.votes: list[tuple[int, tuple[int, ...], int]] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        response = super().complete(request)
        if request.task == "werewolf.vote":
            offered = tuple(int(p) for p in request.fields["options"])
            target = json.loads(response.text)["vote"] - 1
            self.votes.append((int(request.fields["player"]), offered, target))
        return response


def test_day_votes_count_where_the_chosen_seat_stood_in_the_prompts_list(hand_day):
    from collections import Counter

    from games.werewolf.day.summary import listed_votes

    sg, settings, wolf, villager, innocent = hand_day
    living = sg.day_root.public.living
    model = ListingHandModel(wolf, villager, innocent, living)
    (again,) = build.build_days(settings, [sg.day_root.game_seed], model, progress=False)
    # Each prompt lists the voter's choices in an order of its own, not by seat.
    assert any(list(offered) != sorted(offered) for _, offered, _ in model.votes)
    asked = Counter()
    for voter, offered, target in model.votes:
        assert voter not in offered and sorted(offered) == [p for p in living if p != voter]
        asked[len(offered), offered.index(target) + 1] += 1
    leaves = [st for st in again.states() if st.is_terminal()]
    counted = Counter(listed for st in leaves for listed in st.vote_listed)
    assert all(len(st.vote_listed) == len(st.votes) == len(living) for st in leaves)
    assert counted == asked and sum(counted.values()) == 4 * len(living)
    tally = listed_votes([again])
    assert tally == {f"{n}:{pos}": c for (n, pos), c in sorted(counted.items())}
    assert len({pos for _, pos in counted}) > 1  # the chosen seat stands at several places


def test_hand_day_nash_conv_and_cfr_gain_by_hand(hand_day):
    """u_wolf = a_w - a_v and u_villager = a_v - a_w (accuse = 1): accusing dominates.

    Baseline (both say nothing): each speaker gains 1 by accusing, so
    NashConv(baseline) = 2. The equilibrium (both accuse) has NashConv 0, and
    its CFR-Gain is u_w(accuse, nothing) - 0 + u_v(nothing, accuse) - 0 = 2.
    """
    sg, settings, *_ = hand_day
    tree = sg.tree
    base_id = settings.abstraction.baseline_action()
    accuse = settings.abstraction.action("any", "accuse:least")
    base = solvers.pure_policy(tree, lambda key, legal: base_id)
    eq = solvers.pure_policy(tree, lambda key, legal: accuse)
    assert solvers.nash_conv(tree, base).nash_conv == pytest.approx(2.0, abs=1e-12)
    assert solvers.nash_conv(tree, eq).nash_conv == pytest.approx(0.0, abs=1e-12)
    assert solvers.cfr_gain(tree, eq, base).cfr_gain == pytest.approx(2.0, abs=1e-12)
    # CFR finds the equilibrium on the path. Off it (the villager after the werewolf
    # said nothing) the counterfactual reach is 0 from the first alternating update
    # on, so the villager's average strategy there stays uniform: CFR-Gain against
    # the baseline, which reaches exactly that information set, is then
    # 1 (werewolf) + 0.5 (villager: accuses with probability 1/2) = 1.5, not 2.
    curves = solvers.cfr_curves([tree], [base], 500, variant="cfr")
    wolf, villager = sg.day_root.speakers
    assert curves.nash_conv[0, -1] < 0.01
    assert curves.cfr_gain_per_player[0, -1, wolf] == pytest.approx(1.0, abs=0.01)
    assert curves.cfr_gain_per_player[0, -1, villager] == pytest.approx(0.5, abs=0.01)
    assert curves.cfr_gain[0, -1] == pytest.approx(1.5, abs=0.01)
    # CFR-Gain exceeds NashConv (approximate ESS) early.
    assert solvers.studies.ess_iterations(curves)[0] is not None


# --- information states, abstraction, beliefs ------------------------------------------


def test_information_states_hide_roles_but_show_partners():
    game = pyspiel.load_game("python_werewolf_day(game_seed=0,speakers=1,num_seeds=1,deals=3)")
    state = game.new_initial_state()
    state.apply_action(1)  # the second deal
    roles = state.inner.root.start.roles
    wolves = [p for p, r in enumerate(roles) if r == "werewolf"]
    for p, r in enumerate(roles):
        info = state.information_state_string(p)
        assert f"role player={p} role={r}" in info
        for q, rq in enumerate(roles):
            if q != p:
                assert f"role player={q} role={rq}" not in info
        partners = f"partners werewolves={wolves}"
        assert (partners in info) == (r == "werewolf")


def test_slots_follow_the_speakers_knowledge(scripted):
    settings = _settings(
        abstraction=abstraction.Abstraction(tones=("calm",), acts=("defend:most", "accuse:least"))
    )
    for seed in range(40):
        root = roots._root_without_models(settings, seed)
        wolf = next((p for p in root.living if root.role(p) == "werewolf"), None)
        if wolf is None:
            continue
        models = [
            run_sync(roots.seat_model_step(root, p), scripted) if root.start.alive[p] else None
            for p in range(8)
        ]
        ranking = suspicion_ranking(root, models, (), wolf)
        partners = [q for q in root.living if q != wolf and root.role(q) == "werewolf"]
        assert list(ranking[: len(partners)]) == partners  # a werewolf suspects its partners most
        assert root.role(ranking[-1]) != "werewolf"
        return
    pytest.fail("no day with a living werewolf")


def test_abstraction_validates_and_encodes():
    ab = abstraction.Abstraction(tones="calm/any", acts="nothing/accuse:most/check:least:werewolf")
    assert ab.num_actions == 6
    assert ab.decode(ab.action("any", "accuse:most")) == ("any", "accuse:most")
    assert ab.baseline_action() == ab.action("any", "nothing")
    with pytest.raises(ValueError, match="bad act token"):
        abstraction.Abstraction(acts=("accuse:middle",))
    with pytest.raises(ValueError, match="tones"):
        abstraction.Abstraction(tones=("loud",))
    with pytest.raises(ValueError, match="baseline needs"):
        abstraction.Abstraction(tones=("calm",)).baseline_action()
    with pytest.raises(ValueError, match="check result"):
        _settings(abstraction=abstraction.Abstraction(acts=("check:most:not_werewolf",)))
    with pytest.raises(ValueError, match="no role of this preset"):
        _settings(abstraction=abstraction.Abstraction(acts=("claim:witch",)))
    with pytest.raises(ValueError, match="opponent_model"):
        _settings(opponent_model="oracle")
    with pytest.raises(ValueError, match="speakers"):
        _settings(speakers=0)


def test_the_day_study_reads_each_model_by_its_belief():
    ctx = OpponentContext(
        players=("Player 1", "Player 2", "Player 3"),
        self_id="Player 1",
        hypotheses=("villager", "werewolf", "seer"),
        alignment={"villager": 1.0, "werewolf": -1.0, "seer": 1.0},
        self_role="villager",
    )
    m = make_opponent_model("gratr", ctx)
    out = D.werewolf_probabilities(m, [1, 2])
    assert out[1]["werewolf"] == pytest.approx(1 / 3)  # trust 0: the (uniform) prior
    assert out == {q: dict(m.belief(f"Player {q + 1}").distribution) for q in (1, 2)}
    m = m.observe(Evidence(subject="Player 3", value="werewolf", certain=True))
    assert D.werewolf_probabilities(m, [2])[2]["werewolf"] == 1.0
    none = make_opponent_model("none", ctx)
    assert D.werewolf_probabilities(none, [1])[1]["werewolf"] == pytest.approx(1 / 3)
    dirichlet = make_opponent_model("dirichlet", ctx).observe(
        Evidence(subject="Player 2", value="werewolf")
    )
    assert D.werewolf_probabilities(dirichlet, [1])[1]["werewolf"] == pytest.approx(2 / 4)


# --- determinism and the registry --------------------------------------------------


def _arrays(tree: solvers.GameTree):
    return tree.infoset_keys, tree.returns.tolist(), tree.kind.tolist()


@pytest.mark.parametrize("opponent_model", ["dirichlet", "gratr"])
def test_the_same_day_builds_the_same_tree_twice(opponent_model):
    settings = _settings(
        opponent_model=opponent_model,
        speakers=2,
        num_seeds=2,
        abstraction=abstraction.Abstraction(
            tones=("calm", "any"), acts=("nothing", "accuse:least")
        ),
    )
    model = gt_llm.load_model("scripted")
    first = build.build_days(settings, [3], model, progress=False)[0].tree
    second = build.build_days(settings, [3], gt_llm.load_model("scripted"), progress=False)[0].tree
    assert _arrays(first) == _arrays(second)
    # Listening changes beliefs, so the second speaker's options can differ by branch;
    # the tree is still finite and every leaf is a vote outcome.
    assert np.all(np.isin(first.returns[first.terminals], (-1.0, 0.0, 1.0)))


def test_the_day_game_is_registered_for_the_conformance_suite():
    spec = get_game_spec("werewolf-day")
    assert spec.short_name == state.SHORT_NAME
    # No builder of its own: the runner checks the engine's (EngineGame.build_tree).
    assert spec.conformance.build_tree is None and spec.conformance.tree_game_strings
    game = pyspiel.load_game(spec.conformance.tree_game_strings[0])
    assert isinstance(game, EngineGame)
    for gs in spec.conformance.game_strings:
        assert pyspiel.load_game(gs).get_type().short_name == state.SHORT_NAME


def test_a_game_that_ends_before_the_day_is_refused():
    settings = _settings(day=ARENA.max_rounds)
    with pytest.raises(ValueError, match="reach day"):
        D.day_roots(settings, 3)


def test_strategies_by_role_on_the_hand_day(hand_day):
    from games.werewolf.day.summary import strategy_by_role

    sg, *_ = hand_day
    policy = solvers.CFRSolver(sg.tree).run(500).average_policy()
    s = strategy_by_role([sg], [policy])
    # Every decision of the hand day changes the speaker's payoff: all are decisive.
    assert s["werewolf"]["decisive"]["decisions"] == 1
    assert s["village"]["decisive"]["decisions"] == 2
    assert s["werewolf"]["decisive"]["acts"]["accuse:least"] > 0.99
    # The villager's set after "nothing" is (almost) never reached: it weighs ~0.
    assert s["village"]["decisive"]["acts"]["accuse:least"] > 0.99
    assert s["village"]["all"]["reach"] == pytest.approx(1.0, abs=1e-9)


def test_day_models_are_built_and_pinned_like_the_arenas(scripted):
    from games.werewolf.players import beliefs as wb

    settings = _settings(opponent_model="dirichlet")
    for seed in range(40):
        root = roots._root_without_models(settings, seed)
        wolf = next((p for p in root.living if root.role(p) == "werewolf"), None)
        if wolf is None:
            continue
        m = run_sync(roots.seat_model_step(root, wolf), scripted)
        arena = wb.make_seat_model("dirichlet", settings.config, wolf, "werewolf")
        # One threshold rule and one prior everywhere.
        assert m.threshold == arena.threshold == wb.BeliefSettings().threshold
        assert dict(m.context.prior) == dict(arena.context.prior)
        # A werewolf knows every side: partners are werewolves, everyone else is not.
        for q in range(settings.config.num_players):
            if q != wolf:
                p_wolf = m.belief(f"Player {q + 1}").distribution["werewolf"]
                assert p_wolf == (1.0 if root.role(q) == "werewolf" else 0.0)
        return
    pytest.fail("no day with a living werewolf")
