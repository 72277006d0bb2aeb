"""Command-line options every game's ``gt-llm <game> ...`` commands share.

Defined once here and added to each game's parsers with
:func:`add_common_options`; :func:`load_model_from_args` turns them into a
chat model (``load_model(spec, cache=..., timeout=..., retry_budget=...,
requests_per_minute=..., max_answer_bytes=...)``), and
:func:`open_results_dir` / :func:`results_folder` open the ``--out`` folder
for a run of given settings (manifest first with ``complete: false``, refusal
of a folder holding other results unless ``--force``; see
:mod:`runs.results`).

The order a writing command follows, so that nothing is paid for, and nothing
in ``--out`` is touched, before every option is known to be good: parse
(argparse types reject bad values in one line naming the flag),
:func:`check_backend`, the command's own checks (game preconditions, size
estimate), :func:`prepare_model` (backend, key, call options, cache file:
nothing is created), then :func:`open_results_dir` (which may clear an old
run with ``--force``), then :func:`attach_cache`, then the work.

A finished run can be re-solved or re-plotted without its key:
:func:`prepare_model` then answers from the cache only (same settings, no
``--force``), and a call missing from the cache fails in one line.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from games.engine.resources import (
    CallShape,
    WorkEstimate,
    format_bytes,
    format_duration,
    require_memory,
)
from gt_llm import inflight
from gt_llm.argtypes import (
    MAX_ANSWER_BYTES,
    MAX_CONCURRENCY,
    MAX_RETRY_BUDGET,
    MAX_RPM,
    MAX_SEED,
    MAX_TIMEOUT,
    add_check,
    bounded_float,
    bounded_int,
    check_backend_arg,
    non_empty,
)
from gt_llm.cache import CachedModel, CacheOnlyModel
from gt_llm.cache_store import check_cache_writable
from gt_llm.chat import ChatModel
from gt_llm.errors import ConfigurationError
from gt_llm.registry import load_model, model_endpoint, model_identity, parse_spec
from gt_llm.safety import public_spec
from runs.atomic import ResultsError
from runs.folders import check_results_dir
from runs.results import ResultsDir, prepare_results_dir, read_manifest

logger = logging.getLogger(__name__)

__all__ = [
    "COMMON_OPTIONS",
    "Writer",
    "NON_RESULT_OPTIONS",
    "add_common_options",
    "attach_cache",
    "cache_path",
    "check_backend",
    "check_out",
    "load_model_from_args",
    "model_options",
    "open_results_dir",
    "prepare_model",
    "result_settings",
    "results_folder",
    "say",
]

#: Where a command writes its lines (stdout by default; tests pass a collector).
Writer = Callable[[str], None]


def say(text: str) -> None:
    """Writes one line of a command's output to stdout (flushed: progress stays visible)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


#: The destinations of the shared options (the names on the argparse namespace).
COMMON_OPTIONS = (
    "backend",
    "cache",
    "concurrency",
    "rpm",
    "timeout",
    "retry_budget",
    "max_answer_bytes",
    "seed",
    "structured",
    "out",
    "no_progress",
    "force",
)


#: Options that never change a command's results: where and how calls are made, what
#: is shown, and argparse's own entries. Every other parsed option is a result
#: setting (:func:`result_settings`), so a new flag is compared unless declared here.
#: The backend is recorded and compared on its own (backend and model name).
NON_RESULT_OPTIONS = frozenset(
    {
        "backend",
        "cache",
        "concurrency",
        "rpm",
        "timeout",
        "retry_budget",
        "max_answer_bytes",
        "out",
        "no_progress",
        "force",
        "verbose",
        "quiet",
        "func",
        "command",
        "processes",
        "jobs",
    }
)


def result_settings(
    args: argparse.Namespace, *, also_ignore: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The parsed options that determine the results: all but :data:`NON_RESULT_OPTIONS`.

    Args:
      args: The parsed options of a command.
      also_ignore: The command's own options that do not change its results.
    """
    skip = NON_RESULT_OPTIONS | set(also_ignore)
    return {
        k: _public(list(v) if isinstance(v, tuple) else v)
        for k, v in sorted(vars(args).items())
        if k not in skip and not k.startswith("_")
    }


def _public(value: Any) -> Any:
    # Options naming backends (--agents, --seat-backends, --player-backends) may hold URL
    # credentials: a settings file gets every string's public label.
    if isinstance(value, str):
        return public_spec(value)
    if isinstance(value, list):
        return [_public(v) for v in value]
    return value


def add_common_options(
    parser: argparse.ArgumentParser,
    *,
    out: str,
    seed_help: str = "master seed (default 0)",
    cache_help: str = "SQLite call cache (default OUT/llm_cache.sqlite)",
) -> None:
    """Adds the shared options (see :data:`COMMON_OPTIONS`).

    ``--backend --cache --concurrency --rpm --timeout --retry-budget
    --max-answer-bytes --seed --structured --out --no-progress --force``.

    Args:
      parser: The command's parser.
      out: Default output folder.
      seed_help: Help of ``--seed`` (what the seed seeds in this game).
      cache_help: Help of ``--cache``.
    """
    parser.add_argument(
        "--backend",
        default="scripted",
        help="model spec (default scripted; e.g. groq:llama-3.3-70b-versatile)",
    )
    add_check(parser, check_backend_arg)  # known, well formed, its model file a GGUF file
    parser.add_argument("--out", type=non_empty, default=out, help=f"output folder (default {out})")
    parser.add_argument("--cache", type=non_empty, default=None, help=cache_help)
    parser.add_argument(
        "--seed", type=bounded_int(0, MAX_SEED), default=0, help=f"{seed_help}; at most {MAX_SEED}"
    )
    parser.add_argument(
        "--concurrency",
        type=bounded_int(1, MAX_CONCURRENCY),
        default=None,
        help=f"concurrent LLM calls (default: backend's; at most {MAX_CONCURRENCY})",
    )
    parser.add_argument(
        "--rpm",
        type=bounded_float(0, MAX_RPM, above=True),
        default=None,
        help=f"requests-per-minute limit of a remote backend (default: none; at most {MAX_RPM:g})",
    )
    parser.add_argument(
        "--timeout",
        type=bounded_float(0, MAX_TIMEOUT, above=True),
        default=None,
        help="per-request timeout of a remote backend, seconds (default: the backend's, 60; "
        f"at most {MAX_TIMEOUT:g})",
    )
    parser.add_argument(
        "--retry-budget",
        type=bounded_float(0, MAX_RETRY_BUDGET, above=True),
        default=None,
        help="total seconds one call may take with its retries and waits; then the run stops "
        f"and says how to resume (default: the backend's, 300; at most {MAX_RETRY_BUDGET:g})",
    )
    parser.add_argument(
        "--max-answer-bytes",
        type=bounded_int(1, MAX_ANSWER_BYTES),
        default=None,
        help="largest accepted answer in bytes; a larger one is an error, never cached "
        f"(default 65536; at most {MAX_ANSWER_BYTES})",
    )
    parser.add_argument(
        "--structured",
        choices=("on", "off"),
        default="on",
        help="on (default): every task asks for its JSON answer and the request carries the "
        "answer's schema, which the local and openai backends use to constrain decoding; "
        "off: free-text answers",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace results of other settings already in --out (clears them; the call "
        "cache is kept); without it such a folder is refused",
    )


def check_backend(args: argparse.Namespace) -> None:
    """Fails fast, before any work, on an unknown backend spec (ValueError)."""
    parse_spec(args.backend)


def check_out(args: argparse.Namespace) -> None:
    """Refuses an empty ``--out`` in one line (it would write into the current folder)."""
    if str(getattr(args, "out", "")).strip() == "":
        raise ResultsError("--out is empty (''); pass a results folder such as --out results/run")


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    """The call options the user gave, as :func:`gt_llm.load_model` keywords (others: defaults)."""
    given = {
        "timeout": getattr(args, "timeout", None),
        "retry_budget": getattr(args, "retry_budget", None),
        "requests_per_minute": getattr(args, "rpm", None),
        "max_answer_bytes": getattr(args, "max_answer_bytes", None),
        # The bound on calls in flight, across games played side by side too.
        "max_concurrency": getattr(args, "concurrency", None),
    }
    return {k: v for k, v in given.items() if v is not None}


def cache_path(args: argparse.Namespace) -> str:
    """``--cache``, or ``OUT/llm_cache.sqlite``."""
    return args.cache or os.path.join(args.out, "llm_cache.sqlite")


def load_model_from_args(args: argparse.Namespace) -> ChatModel:
    """The model the shared options name, through the cache (``--cache`` or OUT/llm_cache.sqlite)."""
    return attach_cache(args, prepare_model(args))


def prepare_model(args: argparse.Namespace) -> ChatModel:
    """The model ``--backend`` names, checked with its key, call options and cache file.

    Creates nothing and touches nothing in ``--out``: call it before
    :func:`open_results_dir`. Checks first that ``--out`` can hold results
    (:func:`runs.folders.check_results_dir`) and that the cache can be opened
    for writing (:func:`gt_llm.cache_store.check_cache_writable`), so that
    ``--force`` clears an old run only when the new one can start, and no
    model is loaded for a run that cannot. When the backend cannot be called
    here (no key) but ``--out`` holds a run of this model and its cache exists, and
    ``--force`` is not given, the model answers from that cache only (a
    finished run is re-solved or re-plotted without a key); otherwise the
    missing key is an error.

    Raises:
      ValueError: unknown backend, malformed spec, bad call option.
      gt_llm.errors.ConfigurationError: no key, or a cache file that is not a gt-llm
        cache or cannot be written.
      runs.atomic.ResultsError: ``--out`` is empty or cannot be created or written.
    """
    check_out(args)
    # --out first: the default cache lives in it, and its message names the right flag.
    check_results_dir(args.out)
    cache = cache_path(args)
    check_cache_writable(cache)
    try:
        model = load_model(args.backend, **model_options(args))
    except ConfigurationError as exc:
        backend, name = model_identity(args.backend)
        if getattr(args, "force", False) or not os.path.isfile(cache):
            raise
        try:
            old = read_manifest(args.out)
        except ResultsError:
            raise exc from None
        if not old or (old.get("backend"), old.get("model")) != (backend, name):
            raise
        return CacheOnlyModel(
            backend, name or "", reason=str(exc), endpoint=model_endpoint(args.backend)
        )
    return model


def prepare_models(args: argparse.Namespace, specs: Iterable[str]) -> dict[str, ChatModel]:
    """:func:`prepare_model` of each distinct spec, the other options as given (seats or
    players on different backends); a failure closes the models already prepared."""
    models: dict[str, ChatModel] = {}
    try:
        for spec in dict.fromkeys(specs):
            models[spec] = prepare_model(argparse.Namespace(**{**vars(args), "backend": spec}))
    except BaseException:
        for m in models.values():
            m.close()
        raise
    return models


def attach_caches(args: argparse.Namespace, models: dict[str, ChatModel]) -> None:
    """Puts every model of ``models`` (by spec) behind the one call cache, in place."""
    for spec in list(models):
        models[spec] = attach_cache(args, models[spec])


def check_local_run(
    args: argparse.Namespace, model: ChatModel | None, estimate: WorkEstimate, shape: CallShape
) -> None:
    """For a local model: refuses workers that cannot fit, then says how long the calls take.

    The workers' memory (one model and context each,
    :meth:`gt_llm.backends.local.LocalModel.worker_memory_bytes`) is added to the
    run's estimate and checked against the memory available, before any worker
    starts. Then the model's speed is measured on this machine
    (:meth:`~gt_llm.backends.local.LocalModel.measure_costs`, a few seconds) and
    the time of the estimate's calls (``shape`` each) goes to stderr (not with
    ``--no-progress``). Other backends: nothing (their time is the server's).

    Raises:
      ValueError: the workers and the run need more memory than is available.
    """
    from gt_llm.backends.local import WORKERS_VARIABLE, LocalModel

    if not isinstance(model, LocalModel):
        return
    if model.workers > 1:
        per_worker = model.worker_memory_bytes()
        require_memory(
            estimate.memory_bytes + model.workers * per_worker,
            what=f"the run with {model.workers} local model workers "
            f"({format_bytes(per_worker)} each)",
            fix=f"set {WORKERS_VARIABLE}=1 (one model, in this process) or make the run smaller",
        )
    if getattr(args, "no_progress", False):
        return
    costs = model.measure_costs()
    seconds = costs.seconds(
        estimate.model_calls,
        prompt_tokens=shape.prompt_tokens,
        completion_tokens=shape.completion_tokens,
        reused_share=shape.reused_share,
    )
    sys.stderr.write(
        f"time: about {format_duration(seconds)} on this machine for about "
        f"{estimate.model_calls:,} model calls "
        f"({model.spec}, {costs.workers} worker(s); measured {costs.prompt_tokens_per_s:.0f} "
        f"prompt and {costs.generated_tokens_per_s:.0f} generated tokens/s per worker; "
        f"~{shape.prompt_tokens:.0f} prompt tokens a call, {shape.reused_share:.0%} reused, "
        f"~{shape.completion_tokens:.0f} generated)\n"
    )


def attach_cache(args: argparse.Namespace, model: ChatModel) -> ChatModel:
    """``model`` behind the call cache (``--cache`` or OUT/llm_cache.sqlite)."""
    try:
        return CachedModel(model, cache_path(args))
    except BaseException:
        model.close()
        raise


def open_results_dir(
    args: argparse.Namespace,
    settings: Mapping[str, Any],
    model: ChatModel | None = None,
    *,
    folders: Sequence[str] = (),
) -> ResultsDir:
    """Opens ``--out`` for a run of ``settings`` (see :func:`runs.results.prepare_results_dir`).

    Takes the folder's lock (a folder another run is writing is refused in one
    line naming its process; the lock is held until the run finishes or is
    closed), writes the manifest (``complete: false``) with the backend and
    model of ``--backend`` and the command line; refuses, in one line, a folder
    holding results of other settings unless ``--force`` (which clears them,
    never the cache). Call before the first model call. From then on the
    remote calls in flight are measured (:mod:`gt_llm.inflight`): a run that
    made any ends its manifest with ``calls_in_flight`` (mean, peak, calls,
    seconds) and says it in one line on stderr.

    Args:
      args: Parsed shared options (``--out --backend --force``).
      settings: Everything that determines the results (JSON-like); call
        options such as ``--timeout`` or ``--concurrency`` do not belong here.
      model: The prepared model (from :func:`prepare_model`), if any; the
        manifest records its backend and model name (compared) and its public
        label (not compared: the same model behind another port is the same run).
      folders: Sub-folders the run writes in (``("logs",)``): a link or a file
        there is refused before anything is cleared or written.

    Raises:
      runs.atomic.ResultsError: empty, unwritable, locked or refused folder.
      ValueError: unknown backend.
    """
    check_out(args)
    if model is not None:
        backend, name, label = model.backend, (model.model or None), model.spec
    else:
        backend, name = model_identity(args.backend)
        label = public_spec(args.backend)
    run = prepare_results_dir(
        args.out,
        settings,
        force=bool(getattr(args, "force", False)),
        backend=backend,
        model=name,
        command=[public_spec(a) for a in sys.argv],
        spec=label,
        folders=folders,
    )
    run.on_finish(_in_flight_hook(inflight.start()))
    return run


def _in_flight_hook(span: inflight.Span) -> Callable[[], dict[str, Any]]:
    """The manifest entry and the closing line of a run's calls in flight on remote backends.

    Nothing for a run that made no remote call (a stand-in, a local model, a cached re-run).
    """

    def hook() -> dict[str, Any]:
        span.close()
        seen = span.result()
        if seen.calls == 0:
            return {}
        logger.info("%s", seen.line())
        sys.stderr.write(f"{seen.line()}\n")
        return {"calls_in_flight": seen.to_json()}

    return hook


@contextlib.contextmanager
def results_folder(
    args: argparse.Namespace,
    settings: Mapping[str, Any],
    model: ChatModel | None = None,
    *,
    folders: Sequence[str] = (),
) -> Iterator[ResultsDir]:
    """:func:`open_results_dir`, and :meth:`~runs.results.ResultsDir.finish` when the block succeeds.

    On an exception (a failed call, Ctrl-C, a kill) the manifest keeps
    ``complete: false``, so readers warn or refuse, and a re-run of the same
    command resumes into the same folder; the folder's lock is freed either way.
    """
    run = open_results_dir(args, settings, model, folders=folders)
    try:
        yield run
        run.finish()
    finally:
        run.close()
