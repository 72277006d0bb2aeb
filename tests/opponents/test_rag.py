"""The retrieval baselines retrieve what they should."""

from __future__ import annotations

from opponent_fixtures import werewolf_context

from gt_llm import load_model
from gt_llm.backends.scripted import SCRIPTED_MODEL_NAME
from gt_llm.opponents import Evidence, NativeRag, RerankRag, make_opponent_model
from gt_llm.opponents.rag import bm25_top, tokenize

MESSAGES = [
    ("Player 2", "Player 2", "Good morning everyone, I slept well."),
    ("Player 3", "Player 5", "Player 5 was very quiet last night, suspicious."),
    ("Player 4", "Player 4", "I am the seer and I checked Player 6: villager."),
    ("Player 5", "Player 3", "Player 3 is accusing me without evidence."),
    ("Player 6", "Player 6", "Let us vote carefully today."),
    ("Player 7", "Player 5", "I agree, Player 5 may be the werewolf we seek."),
    ("Player 8", "Player 8", "The weather in the village is nice."),
]


def _feed(m):
    for step, (speaker, about, text) in enumerate(MESSAGES):
        m = m.observe(Evidence(subject=about, actor=speaker, kind="message", text=text, step=step))
    return m


def test_tokenizer_keeps_player_numbers():
    assert tokenize("Player 5 is the Werewolf!") == ["player5", "werewolf"]


def test_bm25_top_ranks_relevant_documents():
    docs = [t for _, _, t in MESSAGES]
    top = bm25_top(docs, "werewolf Player 5", 3)
    # Only two messages contain a query term (player5); the one that also says
    # 'werewolf' ranks first, and nothing with a zero score is returned.
    assert top == [5, 1]
    assert bm25_top(docs, "", 3) == []
    assert bm25_top(docs, "zebra", 3) == []


def test_native_rag_retrieves_top_k_and_keeps_all_history():
    m = _feed(make_opponent_model("native-rag", werewolf_context(k=2, top_k=2)))
    assert isinstance(m, NativeRag)
    assert len(m.history) == len(MESSAGES)  # all kept for retrieval
    f = m.prompt_fields(goal="Who is the werewolf?", subjects=["Player 5"])
    assert [r["step"] for r in f["retrieved"]] == [5, 1]
    assert [h["step"] for h in f["history"]] == [5, 6]  # last K = 2
    assert f["players"] == []
    # No query, no retrieval.
    assert m.prompt_fields()["retrieved"] == []


def test_rerank_rag_lexical_rerank_prefers_coverage():
    texts = [
        "werewolf werewolf werewolf werewolf",
        "yesterday the werewolf story went on and on while the seer listened to all of the "
        "other long speeches made today",
        "seer",
        "Nice weather.",
        "Good morning.",
        "werewolf",
    ]

    def feed(m):
        for i, t in enumerate(texts):
            m = m.observe(
                Evidence(subject="Player 2", actor="Player 2", kind="message", text=t, step=i)
            )
        return m

    goal = "werewolf seer"
    # BM25 ranks 2 ("seer"), 0, 5, 1: the long message naming both terms comes last.
    native = feed(make_opponent_model("native-rag", werewolf_context(top_k=2)))
    assert [r["step"] for r in native.prompt_fields(goal=goal)["retrieved"]] == [2, 0]
    # The rerank sees 2 * 3 candidates and puts the one covering both terms first.
    rerank = feed(make_opponent_model("rerank-rag", werewolf_context(top_k=2)))
    assert isinstance(rerank, RerankRag)
    assert [r["step"] for r in rerank.prompt_fields(goal=goal)["retrieved"]] == [1, 2]
    # With rerank_factor 1 there is nothing else to rerank: BM25's top-2 in coverage order.
    narrow = feed(RerankRag(context=werewolf_context(top_k=2), rerank_factor=1))
    assert [r["step"] for r in narrow.prompt_fields(goal=goal)["retrieved"]] == [2, 0]


def test_rerank_rag_with_scripted_llm_scores():
    ctx = werewolf_context(top_k=2, chat=load_model("scripted"))
    m = _feed(make_opponent_model("rerank-rag", ctx))
    f = m.prompt_fields(goal="Is Player 3 lying about Player 5?", subjects=["Player 3"])
    # Scripted relevance: speaker in focus +6, about someone in focus +4.
    # Step 1 (Player 3 speaking about Player 5) scores 6, step 3 (about Player 3) 4.
    assert [r["step"] for r in f["retrieved"]] == [1, 3]
    assert m.snapshot()["reranker"] == f"scripted:{SCRIPTED_MODEL_NAME}"
