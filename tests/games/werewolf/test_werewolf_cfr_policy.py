"""A CFR-solved day policy in full games: loading, the joint per group, choosing, ranking."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import games  # noqa: F401  (registers every game)
from games.engine.calls import run_sync
from games.werewolf import rules
from games.werewolf.day import exports, roots, state, summary
from games.werewolf.day.ranking import observer_beliefs, suspicion_ranking
from games.werewolf.day.solve import SolveSettings, run_solve
from games.werewolf.players.cfr_policy import (
    GROUPS,
    DayPolicy,
    PolicyChoice,
    choose_speech,
    full_game_ranking,
    load_day_policy,
)
from games.werewolf.rules import Event, Knowledge, SpeechAct
from tests.games.werewolf_helpers import dealt

ACTS = ("nothing", "accuse:most", "accuse:least", "defend:most")
FAST = dict(
    days=1,
    iterations=30,
    models=("none", "gratr"),
    tones=("calm", "any"),
    acts=ACTS,
    order="seats",
    deals=2,
    progress=False,
)
ARENA_ROLES = rules.preset("arena").roles.as_dict()


@pytest.fixture(scope="session")
def solved(tmp_path_factory):
    """A small scripted ``werewolf solve`` folder (both role groups speak in it)."""
    out = tmp_path_factory.mktemp("cfr_policy_solve")
    run_solve(SolveSettings(out=str(out), **FAST))
    return out


def _decisions(folder):
    return json.loads((folder / "decisions.json").read_text())


def _by_hand(doc, model, group):
    """The reach-weighted average joint of ``group``, recomputed with plain floats."""
    tones, acts = doc["tones"], doc["acts"]
    mass = [[0.0] * len(acts) for _ in tones]
    n = 0
    for day in doc["days"]:
        if day["opponent_model"] != model:
            continue
        for dec in day["decisions"]:
            if ("werewolf" if dec["role"] == "werewolf" else "village") != group:
                continue
            n += 1
            for i in range(len(tones)):
                for j in range(len(acts)):
                    p = dec["probs"][i][j]
                    mass[i][j] += dec["reach"] * (p or 0.0)
    total = sum(map(sum, mass))
    return [[m / total for m in row] for row in mass], n


# --- loading a real solve -------------------------------------------------------------------


@pytest.mark.parametrize("model", ["none", "gratr"])
def test_a_solved_folder_loads_as_the_reach_weighted_joint(solved, model):
    policy = load_day_policy(solved, model)
    doc = _decisions(solved)
    assert policy.source == str(solved) and policy.opponent_model == model
    assert policy.label == doc["label"] and "scripted stand-in" in policy.label
    assert policy.tones == ("calm", "any") and policy.acts == ACTS
    assert dict(policy.roles) == ARENA_ROLES
    for g in GROUPS:
        joint = np.asarray(policy.groups[g])
        assert joint.shape == (2, len(ACTS))
        assert joint.sum() == pytest.approx(1.0, abs=1e-12)
        assert (joint >= 0).all()
        expected, n = _by_hand(doc, model, g)
        assert n > 0 and policy.decisions[g] == n
        assert joint == pytest.approx(np.asarray(expected), abs=1e-12)


def test_the_joint_has_the_marginals_of_the_solvers_own_strategies(solved):
    # summary.json's strategies are computed per information set from the trees
    # (games.werewolf.day.summary.strategy_by_role): another path to the same numbers.
    s = json.loads((solved / "summary.json").read_text())
    for model in ("none", "gratr"):
        policy = load_day_policy(solved, model)
        for g in GROUPS:
            joint = np.asarray(policy.groups[g])
            st = s["models"][model]["strategies"][g]["all"]
            tones = dict(zip(policy.tones, joint.sum(axis=1), strict=True))
            acts = dict(zip(policy.acts, joint.sum(axis=0), strict=True))
            assert tones == pytest.approx(st["tones"], abs=1e-9)
            assert acts == pytest.approx(st["acts"], abs=1e-9)


def test_the_policy_is_json_ready_and_frozen(solved):
    policy = load_day_policy(solved, "gratr")
    d = json.loads(json.dumps(policy.to_json(), allow_nan=False))
    assert d["opponent_model"] == "gratr" and d["roles"] == ARENA_ROLES
    assert d["groups"]["werewolf"] == [list(r) for r in policy.groups["werewolf"]]
    assert DayPolicy(**{**d, "groups": d["groups"]}) == policy
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.label = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        policy.groups["village"] = ()  # type: ignore[index]


def test_groups_and_format_are_the_solvers():
    assert GROUPS == summary.GROUPS
    assert exports.FORMAT == "gt-llm.werewolf.day_decisions/2"


# --- a hand-made decisions.json ---------------------------------------------------------------


def _decision(role, reach, probs):
    group = "werewolf" if role == "werewolf" else "village"
    return {
        "speaker": 0,
        "role": role,
        "turn": 0,
        "reach": reach,
        "history": [],
        "probs": probs,
        "features": f"{group}|",
    }


def _write(folder, days, *, tones=("calm", "any"), acts=("nothing", "accuse:most"), **top):
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": exports.FORMAT,
        "backend": "stub",
        "model": "hand",
        "label": "stub:hand",
        "tones": list(tones),
        "acts": list(acts),
        "days": days,
        **top,
    }
    (folder / "decisions.json").write_text(json.dumps(doc))
    (folder / "summary.json").write_text(json.dumps({"settings": {"preset": "arena"}}))
    return folder


def _day(model, *decisions, roles=None):
    day = {"opponent_model": model, "decisions": list(decisions)}
    if roles is not None:  # one deal (decisions.json keeps every deal's roles)
        day["deals"] = {"roles": [roles]}
    return day


HAND_DAYS = [
    _day(
        "none",
        _decision("werewolf", 1.0, [[0.5, 0.5], [0.0, 0.0]]),
        _decision("villager", 0.25, [[1.0, 0.0], [0.0, 0.0]]),
        roles=["werewolf"] * 2 + ["seer", "doctor"] + ["villager"] * 4,
    ),
    _day(
        "none",
        # null: not legal at this node (counts 0)
        _decision("werewolf", 0.5, [[0.0, 0.0], [None, 1.0]]),
        _decision("seer", 0.0, [[0.0, 0.0], [0.0, 1.0]]),  # never reached: weight 0
        _decision("doctor", 0.75, [[0.0, 0.0], [1.0, 0.0]]),
    ),
    _day("gratr", _decision("werewolf", 1.0, [[0.0, 0.0], [0.0, 1.0]])),  # another model
]


def test_a_hand_made_file_gives_exactly_the_expected_joint(tmp_path):
    policy = load_day_policy(_write(tmp_path / "hand", HAND_DAYS), "none")
    # werewolf: 1.0 * [[.5, .5], [0, 0]] + 0.5 * [[0, 0], [0, 1]] = [[.5, .5], [0, .5]] / 1.5
    assert policy.groups["werewolf"] == ((1 / 3, 1 / 3), (0.0, 1 / 3))
    # village: 0.25 * [[1, 0], [0, 0]] + 0 * ... + 0.75 * [[0, 0], [1, 0]]
    assert policy.groups["village"] == ((0.25, 0.0), (0.75, 0.0))
    assert dict(policy.decisions) == {"werewolf": 2, "village": 3}
    assert policy.label == "stub:hand" and dict(policy.roles) == ARENA_ROLES
    other = load_day_policy(tmp_path / "hand", "gratr")
    assert other.groups["werewolf"] == ((0.0, 0.0), (0.0, 1.0))
    assert other.groups["village"] == () and other.decisions["village"] == 0


# --- refusals ---------------------------------------------------------------------------------


def _damage(folder, name, text):
    (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize(
    "make, model, words",
    [
        (lambda d: d / "absent", "none", ["no folder", "--out folder of a finished"]),
        (
            lambda d: d.mkdir() or d,
            "none",
            ["decisions.json is missing", "re-run `gt-llm werewolf solve"],
        ),
        (
            lambda d: (_write(d, HAND_DAYS) / "summary.json").unlink() or d,
            "none",
            ["summary.json is missing", "re-run `gt-llm werewolf solve"],
        ),
        (
            lambda d: _write(d, HAND_DAYS, format="gt-llm.werewolf.day_decisions/0"),
            "none",
            ["decisions.json has format", "day_decisions/0", "re-run `gt-llm werewolf solve"],
        ),
        (
            lambda d: _write(d, HAND_DAYS),
            "dirichlet",
            ["decisions.json", "'dirichlet' was not solved", "solved: gratr, none", "--models"],
        ),
        (
            lambda d: _write(d, [_day("none", _decision("werewolf", 0.0, [[1, 0], [0, 0]]))]),
            "none",
            ["decisions.json is damaged", "werewolf decisions", "zero reach", "re-run"],
        ),
        (
            lambda d: _damage(_write(d, HAND_DAYS), "decisions.json", '{"format": '),
            "none",
            ["decisions.json is not valid JSON", "re-run `gt-llm werewolf solve"],
        ),
        (
            lambda d: _write(d, [_day("none", _decision("werewolf", 1.0, [[1, 0]]))]),
            "none",
            ["decisions.json is damaged", "days[0].decisions[0].probs", "re-run"],
        ),
        (
            lambda d: _write(d, [_day("none", _decision("village", -1.0, [[1, 0], [0, 0]]))]),
            "none",
            ["decisions.json is damaged", "reach", "re-run"],
        ),
        (
            lambda d: _write(d, [_day("none", _decision("village", None, [[1, 0], [0, 0]]))]),
            "none",
            ["decisions.json is damaged", "reach", "re-run"],
        ),
        (
            lambda d: _write(d, HAND_DAYS, tones=("calm", "loud")),
            "none",
            ["decisions.json is damaged", "tones", "re-run"],
        ),
        (
            lambda d: _damage(_write(d, HAND_DAYS), "summary.json", '{"settings": {"preset": 1}}'),
            "none",
            ["summary.json is damaged", "preset", "re-run"],
        ),
        (
            lambda d: _write(
                d,
                [
                    _day(
                        "none",
                        _decision("villager", 1.0, [[1, 0], [0, 0]]),
                        roles=["werewolf"] * 3 + ["villager"] * 5,
                    )
                ],
            ),  # fmt: skip
            "none",
            ["decisions.json is damaged", "days[0] deal 0", "preset", "re-run"],
        ),
    ],
    ids=[
        "no-folder",
        "no-decisions",
        "no-summary",
        "format",
        "model-not-solved",
        "zero-reach",
        "not-json",
        "probs-shape",
        "negative-reach",
        "null-reach",
        "bad-tone",
        "bad-preset",
        "other-roles",
    ],
)
def test_every_refusal_names_the_function_the_file_and_the_fix(tmp_path, make, model, words):
    folder = make(tmp_path / "solve")
    with pytest.raises(ValueError) as info:
        load_day_policy(folder, model)
    message = str(info.value)
    assert message.startswith("load_day_policy: ") and "\n" not in message
    for w in words:
        assert w in message, (w, message)


def test_a_folder_whose_run_did_not_finish_loads_with_a_warning(tmp_path, caplog):
    folder = _write(tmp_path / "solve", HAND_DAYS)
    (folder / "manifest.json").write_text(json.dumps({"settings": {}, "complete": False}))
    with caplog.at_level("WARNING"):
        load_day_policy(folder, "none")
    assert "did not finish" in caplog.text


# --- choosing a statement ---------------------------------------------------------------------


def _policy(village, werewolf=None, *, tones=("calm", "any"), acts=ACTS):
    def grid(cell):
        if cell is None:
            return ()
        return tuple(
            tuple(1.0 if (t, a) == cell else 0.0 for a in acts) for t in tones
        )  # fmt: skip

    return DayPolicy(
        source="hand",
        opponent_model="none",
        label="stub:hand",
        tones=tones,
        acts=acts,
        roles=ARENA_ROLES,
        groups={"village": grid(village), "werewolf": grid(werewolf)},
        decisions={"village": int(village is not None), "werewolf": int(werewolf is not None)},
    )


def _legal(speaker=4, dead=()):
    s = dealt()
    s = dataclasses.replace(s, alive=tuple(p not in dead for p in range(s.num_players)))
    return rules.speech_options(s, speaker)


def test_a_point_mass_gives_the_act_its_slot_names():
    policy = _policy(("calm", "accuse:least"), ("any", "defend:most"))
    ranking = (3, 5, 1)
    rng = np.random.default_rng(0)
    village = choose_speech(policy, "seer", _legal(), ranking, rng)
    assert village == PolicyChoice(
        SpeechAct("accuse", "calm", target=1), "calm", "accuse:least", "matched"
    )
    wolf = choose_speech(policy, "werewolf", _legal(), ranking, rng)
    assert wolf.act == SpeechAct("defend", "any", target=3) and wolf.outcome == "matched"
    nothing = choose_speech(_policy(("any", "nothing")), "villager", _legal(), (), rng)
    assert nothing.act == SpeechAct("nothing", "any")


def test_every_outcome_is_reached():
    rng = np.random.default_rng(0)
    acts = ("nothing", "accuse:most2", "check:most:werewolf")
    # no_group: no werewolf decision was solved
    no_group = choose_speech(
        _policy(("calm", "nothing"), acts=acts), "werewolf", _legal(), (1,), rng
    )
    assert no_group == PolicyChoice(None, None, None, "no_group")
    # no_slot: one living other has no second place
    no_slot = choose_speech(
        _policy(("calm", "accuse:most2"), acts=acts), "doctor", _legal(), (1,), rng
    )
    assert no_slot == PolicyChoice(None, "calm", "accuse:most2", "no_slot")
    # illegal: the ranking names a dead player (the rules refuse to accuse the dead)
    illegal = choose_speech(
        _policy(("calm", "accuse:most2"), acts=acts), "doctor", _legal(dead=(6,)), (1, 6), rng
    )
    assert illegal == PolicyChoice(None, "calm", "accuse:most2", "illegal")
    # illegal: a check result outside the legal acts given
    only_nothing = [SpeechAct("nothing", t) for t in rules.TONES]
    check = choose_speech(
        _policy(("any", "check:most:werewolf"), acts=acts), "seer", only_nothing, (1,), rng
    )
    assert check.outcome == "illegal" and check.act is None
    matched = choose_speech(
        _policy(("any", "check:most:werewolf"), acts=acts), "seer", _legal(), (1,), rng
    )
    assert matched.act == SpeechAct("share_check", "any", target=1, result="werewolf")


def test_the_same_seed_draws_the_same_choice_and_draws_follow_the_joint(tmp_path):
    policy = load_day_policy(_write(tmp_path / "hand", HAND_DAYS), "none")
    ranking, legal = (1, 2, 3), _legal()

    # Every hand-made werewolf decision has the features of a day's first speaker.
    def draw(seed):
        return choose_speech(
            policy, "werewolf", legal, ranking, np.random.default_rng(seed), features="werewolf|"
        )

    assert [draw(s) for s in range(20)] == [draw(s) for s in range(20)]
    rng = np.random.default_rng(7)
    n = 6000
    counts: dict[tuple[str | None, str | None], int] = {}
    for _ in range(n):
        c = choose_speech(policy, "werewolf", legal, ranking, rng, features="werewolf|")
        counts[(c.tone, c.token)] = counts.get((c.tone, c.token), 0) + 1
    expected = {("calm", "nothing"): 1 / 3, ("calm", "accuse:most"): 1 / 3}
    expected[("any", "accuse:most")] = 1 / 3
    assert set(counts) == set(expected)  # never the zero-probability pair
    for key, p in expected.items():
        assert counts[key] / n == pytest.approx(p, abs=0.03)


def test_a_policy_that_does_not_sum_to_one_is_refused():
    good = _policy(("calm", "nothing"))
    bad = {"village": ((0.5, 0, 0, 0), (0, 0, 0, 0)), "werewolf": ()}
    with pytest.raises(ValueError, match="sums to"):
        dataclasses.replace(good, groups=bad)
    with pytest.raises(ValueError, match="rows"):
        dataclasses.replace(good, groups={"village": ((1.0,),), "werewolf": ()})
    with pytest.raises(ValueError, match="missing"):
        dataclasses.replace(good, groups={"village": good.groups["village"]})


# --- the ranking in a full game ---------------------------------------------------------------


def _knowledge(player, role, *, partners=(), checks=(), dead=(), speeches=()):
    config = rules.preset("arena")
    events = tuple(
        Event("speech", 1, {"player": p, "turn": 0, "act": rules.action_to_json(a)})
        for p, a in speeches
    )
    return Knowledge(
        player=player,
        role=role,
        partners=tuple(partners),
        checks=tuple(checks),
        alive=tuple(p not in dead for p in range(config.num_players)),
        round=2,
        phase="day_speak",
        events=events,
        config=config,
    )


def test_the_full_game_ranking_follows_the_day_trees_rule_and_reads_the_twins_signal():
    accuse = [
        (0, SpeechAct("accuse", "calm", target=5)),
        (1, SpeechAct("accuse", "calm", target=6)),
    ]
    accuse.append((2, SpeechAct("share_check", "calm", target=6, result="werewolf")))
    # a villager without beliefs: accusations (6 twice, 5 once), then seat
    k = _knowledge(3, "villager", dead=(7,), speeches=accuse)
    assert full_game_ranking(k) == (6, 5, 0, 1, 2, 4)
    # beliefs come before accusations; a missing player counts 0
    beliefs = {0: {"werewolf": 0.6, "villager": 0.4}, 5: {"werewolf": 0.2}, 6: {"werewolf": 0.1}}
    assert full_game_ranking(k, beliefs) == (0, 5, 6, 1, 2, 4)
    # the deception scores alone, where there are no beliefs
    assert full_game_ranking(k, {}, {4: 0.9}) == (4, 6, 5, 0, 1, 2)
    # with beliefs, the mean of the two where both are given, the one given otherwise:
    # 4 reads 0.9 (score only), 0 reads (0.6 + 0.0) / 2 = 0.3, 5 reads 0.2 and 6 0.1
    assert full_game_ranking(k, beliefs, {4: 0.9, 0: 0.0}) == (4, 0, 5, 6, 1, 2)
    # a score can overturn a belief: 5 reads (0.2 + 0.9) / 2 = 0.55 > 0's 0.3
    assert full_game_ranking(k, beliefs, {0: 0.0, 5: 0.9}) == (5, 0, 6, 1, 2, 4)
    # the scores never outrank knowledge: the seer's cleared player stays last
    seer_k = _knowledge(2, "seer", checks=((6, "villager"),), speeches=accuse)
    assert full_game_ranking(seer_k, {}, {6: 1.0})[-1] == 6
    # a werewolf knows its partners (first) and that the others are none (after the unknown)
    wolf = _knowledge(0, "werewolf", partners=(1,), speeches=accuse)
    assert full_game_ranking(wolf, {2: {"werewolf": 0.9}})[0] == 1
    # the seer: a found werewolf first, a cleared player last
    seer = _knowledge(2, "seer", checks=((4, "werewolf"), (6, "villager")), speeches=accuse)
    ranked = full_game_ranking(seer)
    assert ranked[0] == 4 and ranked[-1] == 6 and 2 not in ranked


@pytest.mark.parametrize("model", ["gratr", "dirichlet"])
def test_the_full_game_ranking_equals_the_solvers_on_real_days(scripted, model):
    settings = state.DaySettings(
        config=rules.preset("arena"), day=2, speakers=2, num_seeds=1, opponent_model=model
    )
    checked = 0
    for seed in range(12):
        root = roots._root_without_models(settings, seed)
        if root is None:
            continue
        models = [
            run_sync(roots.seat_model_step(root, p), scripted) if root.start.alive[p] else None
            for p in range(settings.config.num_players)
        ]
        first, act = root.living[0], SpeechAct("accuse", "calm", root.living[-1])
        today = (state.Statement(first, act, 0, ""),)
        heard = Event("speech", root.round, {"player": first, "act": rules.action_to_json(act)})
        said = dataclasses.replace(root.start, events=(*root.start.events, heard))
        for p in root.living:
            for statements, game_state in (((), root.start), (today, said)):
                day = suspicion_ranking(root, models, statements, p)
                full = full_game_ranking(
                    rules.knowledge(game_state, p), observer_beliefs(root, models[p], p)
                )
                assert full == day, (seed, p, root.role(p))
                checked += 1
        if checked >= 20:
            break
    assert checked >= 20
