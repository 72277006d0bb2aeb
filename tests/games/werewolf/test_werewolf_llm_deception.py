"""Deception tracking: moving averages, the summary and detection numbers by hand."""

from __future__ import annotations

import json

import pytest

from games.werewolf.deception.summary import Detection, pooled_summary
from games.werewolf.deception.tracking import (
    DeceptionTracker,
    PeerAnalysis,
    SelfAnalysis,
    StatementRecord,
    tracker_from_events,
    weighted_average,
)


def peer(statement, observer, speaker, suspicion, deceptive=None, confidence=0.5):
    label = suspicion >= 0.5 if deceptive is None else deceptive
    return PeerAnalysis(statement, observer, speaker, label, confidence, suspicion, "r")


def test_weighted_average_by_hand():
    assert weighted_average(None, 0.9) == 0.9  # the first value is the first score
    assert weighted_average(0.5, 0.9) == pytest.approx(0.78)  # 0.7*0.9 + 0.3*0.5
    assert weighted_average(0.78, 0.2) == pytest.approx(0.7 * 0.2 + 0.3 * 0.78)


def test_scores_follow_the_70_30_average():
    t = DeceptionTracker(num_players=3)
    t = t.add_statement(StatementRecord(0, speaker=1, deceptive=True))
    t = t.add_statement(StatementRecord(1, speaker=1, deceptive=False))
    t = t.add_statement(StatementRecord(2, speaker=1, deceptive=True))
    assert t.score(0, 1) is None
    t = t.add_peer(peer(0, 0, 1, 0.5))
    assert t.score(0, 1) == 0.5
    t = t.add_peer(peer(1, 0, 1, 0.9))
    assert t.score(0, 1) == pytest.approx(0.78)
    t = t.add_peer(peer(2, 0, 1, 0.1))
    assert t.score(0, 1) == pytest.approx(0.7 * 0.1 + 0.3 * 0.78)  # 0.304
    # Other observers are independent.
    t = t.add_peer(peer(0, 2, 1, 0.4))
    assert t.score(2, 1) == 0.4 and t.scores_of(2) == {1: 0.4}
    assert t.score(0, 1) == pytest.approx(0.304)


def build():
    """Four players; statements 0, 1 by player 0 (0 deceptive), 2 by player 1 (truthful)."""
    t = DeceptionTracker(num_players=4)
    t = t.add_statement(StatementRecord(0, 0, 1, "I am the seer.", True))
    t = t.add_statement(StatementRecord(1, 0, 1, "Nothing new.", False))
    t = t.add_statement(StatementRecord(2, 1, 1, "P0 is lying.", False))
    t = t.add_self(SelfAnalysis(0, 0, True, "fabrication", 0.9))
    t = t.add_self(SelfAnalysis(1, 0, False, "none", 0.8))
    t = t.add_self(SelfAnalysis(2, 1, True, "distortion", 0.6))  # wrong self-report
    # Statement 0 (deceptive): 1 and 2 flag it, 3 does not -> majority detected.
    t = t.add_peer(peer(0, 1, 0, 0.8, True))
    t = t.add_peer(peer(0, 2, 0, 0.6, True))
    t = t.add_peer(peer(0, 3, 0, 0.2, False))
    # Statement 1 (truthful): 1 flags it (false positive), 2 does not.
    t = t.add_peer(peer(1, 1, 0, 0.7, True))
    t = t.add_peer(peer(1, 2, 0, 0.3, False))
    # Statement 2 (truthful): 0 flags it, 3 does not -> a tie is no majority.
    t = t.add_peer(peer(2, 0, 1, 0.9, True))
    t = t.add_peer(peer(2, 3, 1, 0.1, False))
    return t


def test_summary_by_hand():
    s = build().summary()
    assert s.total_statements == 3
    p0, p1, p2, p3 = s.players
    assert (p0.statements, p0.self_reported, p0.peer_analyses, p0.peer_flags, p0.peer_detected) == (
        2, 1, 5, 3, 1,
    )  # fmt: skip
    assert p0.average_suspicion == pytest.approx((0.8 + 0.6 + 0.2 + 0.7 + 0.3) / 5)
    assert (p1.statements, p1.self_reported, p1.peer_flags, p1.peer_detected) == (1, 1, 1, 0)
    assert p1.average_suspicion == pytest.approx(0.5)
    assert p2.statements == 0 and p2.average_suspicion is None
    # Peer labels vs truth: TP = 2 (stmt 0 by 1, 2), FN = 1 (stmt 0 by 3),
    # FP = 2 (stmt 1 by 1, stmt 2 by 0), TN = 2 -> precision 0.5, recall 2/3.
    d = s.peer_detection
    assert (d.true_positives, d.false_negatives, d.false_positives, d.true_negatives) == (
        2,
        1,
        2,
        2,
    )
    assert d.precision == pytest.approx(0.5)
    assert d.recall == pytest.approx(2 / 3)
    # Self-reports: TP 1, TN 1, FP 1 -> precision 0.5, recall 1.
    assert (s.self_detection.precision, s.self_detection.recall) == (0.5, 1.0)
    # Final matrix: observer 1 saw speaker 0 at 0.8 then 0.7 -> 0.7*0.7 + 0.3*0.8 = 0.73.
    assert s.score_matrix[1][0] == pytest.approx(0.73)
    assert s.score_matrix[2][0] == pytest.approx(0.7 * 0.3 + 0.3 * 0.6)
    assert s.score_matrix[3][0] == pytest.approx(0.2)
    assert s.score_matrix[0][1] == pytest.approx(0.9)
    assert s.score_matrix[0][0] is None and s.score_matrix[1][2] is None


def test_summary_is_json_ready_and_events_rebuild_the_tracker():
    t = build()
    d = json.loads(json.dumps(t.summary().to_dict()))
    assert d["peer_detection"]["precision"] == pytest.approx(0.5)
    assert d["score_matrix"][1][0] == pytest.approx(0.73)
    events = json.loads(json.dumps(t.events()))
    # Interleaved with other log records, which are skipped.
    log = [{"type": "header"}] + events + [{"type": "result"}]
    again = tracker_from_events(log, 4)
    assert again.summary() == t.summary()
    assert again.scores == t.scores


def test_precision_and_recall_undefined_without_cases():
    assert Detection().precision is None and Detection().recall is None
    assert Detection(0, 0, 3, 1).precision is None
    assert Detection(0, 0, 3, 1).recall == 0.0


def test_unknown_truth_is_not_counted():
    t = DeceptionTracker(num_players=2).add_statement(StatementRecord(0, 0, deceptive=None))
    t = t.add_peer(peer(0, 1, 0, 0.9, True))
    assert t.summary().peer_detection == Detection()
    assert t.summary().total_statements == 1


def test_pooled_summary_sums_counts():
    s = build().summary()
    pooled = pooled_summary([s, s])
    assert pooled.total_statements == 6
    assert pooled.players[0].peer_flags == 6
    assert pooled.players[0].average_suspicion == pytest.approx(s.players[0].average_suspicion)
    assert pooled.peer_detection.true_positives == 4
    assert pooled.peer_detection.precision == pytest.approx(0.5)
    assert pooled.score_matrix is None


def test_errors():
    t = DeceptionTracker(num_players=3).add_statement(StatementRecord(0, 1))
    with pytest.raises(KeyError, match="unknown statement"):
        t.add_peer(peer(5, 0, 1, 0.5))
    with pytest.raises(ValueError, match="is by player 1"):
        t.add_peer(peer(0, 0, 2, 0.5))
    with pytest.raises(ValueError, match="added twice"):
        t.add_statement(StatementRecord(0, 1))
    with pytest.raises(ValueError, match="not a player"):
        t.add_statement(StatementRecord(1, 7))
    with pytest.raises(ValueError, match="must differ"):
        peer(0, 1, 1, 0.5)
    with pytest.raises(ValueError, match="suspicion"):
        peer(0, 0, 1, 1.5)
    with pytest.raises(ValueError, match="kind"):
        SelfAnalysis(0, 1, True, "lies", 0.5)
