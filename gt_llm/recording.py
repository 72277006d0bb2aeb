"""A model that records what it is asked: for benchmarks and tests that replay requests.

:class:`RecordingModel` answers through another model and keeps every request
in order (``requests``) and the batches they came in (``rounds``: a
``complete_batch`` is one round, a lone ``complete`` a round of one), so the
engine's rounds can be replayed on another backend as the engine sent them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gt_llm.chat import ChatModel, ChatRequest, ChatResponse

__all__ = ["RecordingModel"]


class RecordingModel(ChatModel):
    """Answers through ``inner``, one request at a time, recording every request and round.

    Args:
      inner: The model that answers (e.g. the scripted stand-in); its backend,
        model name and endpoint are this model's.
    """

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model
        self.endpoint = inner.endpoint
        self.requests: list[ChatRequest] = []
        self.rounds: list[list[ChatRequest]] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        self.rounds.append([request])
        return self.inner.complete(request)

    def complete_batch(
        self,
        requests: Sequence[ChatRequest],
        *,
        max_concurrency: int | None = None,
        on_done: Callable[[ChatResponse], None] | None = None,
    ) -> list[ChatResponse]:
        """Records the batch as one round, then answers it in order (one call at a time)."""
        batch = list(requests)
        self.requests.extend(batch)
        self.rounds.append(batch)
        return self.inner.complete_batch(batch, max_concurrency=1, on_done=on_done)
