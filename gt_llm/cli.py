"""The ``gt-llm`` command line.

Subcommands:

* ``gt-llm backends [SPEC ...] [--check]`` lists the registered backends, whether
  each is configured here and, for named specs (and Groq with ``--check``),
  whether its server answers;
* ``gt-llm ask --backend SPEC "PROMPT"`` sends one prompt and prints the answer,
  control characters escaped.

and the command groups of the plugin packages (:data:`COMMAND_PLUGINS`,
loaded by name: ``gt_llm`` imports nothing from them): ``games`` adds one
group per registered game, ``gt-llm <game> ...`` (e.g. ``gt-llm
fruit-trading run``), each setting ``func`` (``func(args) -> int``) as a
default; a game that failed to load is listed at the end of ``--help``.

The argparse types every command shares are in :mod:`gt_llm.argtypes`.

Errors print one line ``gt-llm: error: ...`` on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, NoReturn

import gt_llm
from gt_llm.argtypes import (
    MAX_ANSWER_BYTES,
    MAX_RETRY_BUDGET,
    MAX_RPM,
    MAX_SEED,
    MAX_TIMEOUT,
    add_check,
    bounded_float,
    bounded_int,
    check_backend_arg,
    non_empty,
    run_checks,
)
from gt_llm.backends.openai_compat import parse_spec_rest
from gt_llm.errors import GtLlmError
from gt_llm.registry import backend_info
from gt_llm.retry import RetryPolicy, interrupt_cancels_calls
from gt_llm.safety import RedactingFilter, public_spec, redact, terminal_safe
from gt_llm.startup import INTERRUPTED_MESSAGE, INTERRUPTED_STATUS, end_startup

logger = logging.getLogger("gt_llm.cli")

PROG = "gt-llm"
EXIT_ERROR = 2
#: Most answer tokens ``ask`` may request, and most attempts of one call.
MAX_ANSWER_TOKENS = 1_000_000
MAX_ATTEMPTS = 100


#: Packages that add command groups: each has ``add_command_parsers(subparsers) -> list[str]``
#: (problem lines for the help). Loaded by name at run time, so gt_llm never imports them.
COMMAND_PLUGINS: tuple[str, ...] = ("games",)


def _add_plugin_parsers(subparsers: argparse._SubParsersAction) -> list[str]:
    """Adds the command groups of :data:`COMMAND_PLUGINS`; returns lines for what failed."""
    problems: list[str] = []
    for name in COMMAND_PLUGINS:
        try:
            plugin = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            # Only "the plugin package is not installed" is silent; a missing dependency
            # *inside* it is a real problem worth a warning.
            if exc.name == name:
                logger.debug("no %s package: %s", name, exc)
                continue
            logger.warning("gt-llm: cannot load the %s commands: %s", name, exc)
            problems.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the built-ins
            logger.warning("gt-llm: cannot load the %s commands: %s", name, exc)
            problems.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        problems.extend(plugin.add_command_parsers(subparsers))
    return problems


# --- Built-in subcommands ---------------------------------------------------------------


def _backend_rows(args: argparse.Namespace) -> tuple[list[tuple[str, ...]], list[str], bool]:
    """Rows (name, configured, reachable, example, description), notes, and whether all is well."""
    rows: list[tuple[str, ...]] = []
    notes: list[str] = []
    healthy = True
    if args.specs:
        targets = []
        for spec in args.specs:
            name, rest = gt_llm.parse_spec(spec)
            # Shown by its public label: a URL's user, password and query values removed.
            targets.append((public_spec(spec), backend_info(name), rest, True))
    else:
        targets = [(i.name, i, "", False) for i in gt_llm.registered_backends()]
    for label, info, rest, explicit in targets:
        configured, why = info.usable(rest)
        if explicit and info.name == "openai":
            parse_spec_rest(rest)  # a malformed spec is a usage error, reported in one line
        if not configured:
            reach = "-"
            notes.append(f"{label}: not configured: {redact(why)}")
            healthy = healthy and not explicit
        elif not info.remote:
            reach = "yes (local)"
        elif info.name == "openai" and not rest:
            reach = "per spec"
            notes.append(f"{label}: to check a server: {PROG} backends openai:MODEL@URL")
        elif explicit and info.name == "openai" or args.check:
            ok, detail = info.reachable(rest, timeout=args.timeout)
            reach = "yes" if ok else "no"
            # The label is public already; the detail may echo what a server sent.
            notes.append(f"{label}: {redact(detail)}")
            healthy = healthy and ok
        else:
            reach = "not checked"
        shown_configured = (
            "per spec" if info.name == "openai" and not rest else ("yes" if configured else "no")
        )
        rows.append((label, shown_configured, reach, info.example, info.description))
    if any(r[2] == "not checked" for r in rows):
        notes.append(f"reachability of remote servers: {PROG} backends --check [SPEC ...]")
    return rows, notes, healthy


def _cmd_backends(args: argparse.Namespace) -> int:
    rows, notes, healthy = _backend_rows(args)
    header = ("backend", "configured", "reachable", "example spec", "description")
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(4)]
    lines = []
    for row in [header, *rows]:
        cells = [f"{row[i]:<{widths[i]}}" for i in range(4)]
        lines.append("  ".join([*cells, row[4]]).rstrip())
    lines.extend(notes)
    sys.stdout.write("\n".join(terminal_safe(line) for line in lines) + "\n")
    # Explicitly named specs that cannot be used are a failure scripts can test for.
    return 0 if healthy else 1


def _cmd_ask(args: argparse.Namespace) -> int:
    options: dict[str, Any] = {}
    if args.max_attempts is not None:
        options["retry"] = RetryPolicy(max_attempts=args.max_attempts)
    model = gt_llm.load_model(
        args.backend,
        cache=args.cache,
        timeout=args.timeout,
        retry_budget=args.retry_budget,
        requests_per_minute=args.rpm,
        max_answer_bytes=args.max_answer_bytes,
        **(options if backend_info(args.backend).remote else {}),
    )
    try:
        response = model.complete(
            gt_llm.user_request(
                args.prompt,
                seed=args.seed,
                temperature=args.temperature,
                max_tokens=args.max_tokens,
                system=args.system,
            )
        )
    finally:
        model.close()
    logger.info(
        "%s: %s in %.3f s, %d prompt + %d completion tokens%s",
        model.spec,
        "cache hit" if response.cached else "answered",
        response.latency_s,
        response.usage.prompt_tokens,
        response.usage.completion_tokens,
        f" (cache {args.cache})" if args.cache else "",
    )
    # Raw control characters (ESC sequences, NUL, BEL, bidi overrides) would act on the terminal.
    text = terminal_safe(response.text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _add_backends_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "backends",
        help="list chat-model backends: configured here, and reachable",
        description="List the registered chat-model backends, whether each is configured here "
        "(SDK, key) and, for remote ones, whether its server is reachable. Named "
        "openai:MODEL@URL specs are checked with a short request; Groq only with --check. "
        "Exit status 1 when a named spec is not configured or not reachable.",
    )
    p.add_argument(
        "specs", nargs="*", metavar="SPEC", help="backend specs to check (default: all backends)"
    )
    p.add_argument(
        "--check", action="store_true", help="also check that remote servers answer (e.g. Groq)"
    )
    p.add_argument(
        "--timeout",
        type=bounded_float(0, 600, above=True),
        default=3.0,
        help="seconds to wait for a server's answer when checking (default 3, at most 600)",
    )
    p.set_defaults(func=_cmd_backends)


def _add_ask_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ask",
        help="send one prompt to a backend and print the answer",
        description="Send one prompt to a chat-model backend and print the answer text "
        "(control characters shown as escapes).",
    )
    p.add_argument("prompt", help="the user message")
    p.add_argument(
        "--backend",
        "-b",
        default="scripted",
        metavar="SPEC",
        help="backend spec: scripted, groq[:MODEL], openai:MODEL@BASE_URL (default: scripted)",
    )
    p.add_argument(
        "--seed",
        type=bounded_int(0, MAX_SEED),
        default=0,
        help=f"sampling seed (default: 0, at most {MAX_SEED})",
    )
    p.add_argument(
        "--temperature",
        type=bounded_float(0, 2),
        default=1.0,
        help="sampling temperature, 0 to 2 (default: 1.0)",
    )
    p.add_argument(
        "--max-tokens",
        type=bounded_int(1, MAX_ANSWER_TOKENS),
        default=512,
        help=f"bound on answer tokens (default: 512, at most {MAX_ANSWER_TOKENS})",
    )
    p.add_argument("--system", default=None, help="optional system message")
    p.add_argument(
        "--timeout",
        type=bounded_float(0, MAX_TIMEOUT, above=True),
        default=None,
        help=f"per-request timeout in seconds (remote backends; default 60, at most {MAX_TIMEOUT:g})",
    )
    p.add_argument(
        "--retry-budget",
        type=bounded_float(0, MAX_RETRY_BUDGET, above=True),
        default=None,
        metavar="SECONDS",
        help="total seconds per call, retries of transient faults included (remote; default 300, "
        f"at most {MAX_RETRY_BUDGET:g})",
    )
    p.add_argument(
        "--max-attempts",
        type=bounded_int(1, MAX_ATTEMPTS),
        default=None,
        help="attempts per call, including the first (remote; default: as the budget allows; "
        f"at most {MAX_ATTEMPTS})",
    )
    p.add_argument(
        "--rpm",
        type=bounded_float(0, MAX_RPM, above=True),
        default=None,
        help=f"requests-per-minute limit (remote backends; default: none; at most {MAX_RPM:g})",
    )
    p.add_argument(
        "--max-answer-bytes",
        type=bounded_int(1, MAX_ANSWER_BYTES),
        default=None,
        metavar="N",
        help="refuse answers larger than N bytes, never caching them (remote; default 65536, "
        f"at most {MAX_ANSWER_BYTES})",
    )
    p.add_argument(
        "--cache", type=non_empty, default=None, metavar="PATH", help="SQLite call cache to use"
    )
    add_check(p, check_backend_arg)  # known, well formed, its model file a GGUF file
    p.set_defaults(func=_cmd_ask)


class _OneLineErrorParser(argparse.ArgumentParser):
    """Reports usage errors as one line (``gt-llm: error: ...``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        # argparse quotes the bad value: a backend URL's password would be printed otherwise.
        text = terminal_safe(redact(" ".join(message.split())))
        sys.stderr.write(f"{self.prog}: error: {text} (see {self.prog} --help)\n")
        sys.exit(EXIT_ERROR)


def build_parser() -> argparse.ArgumentParser:
    """The ``gt-llm`` argument parser, with the built-in and the game subcommands."""
    parser = _OneLineErrorParser(
        prog=PROG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="gt-llm: LLM agents inside real game theory (OpenSpiel, CFR, NashConv).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {gt_llm.__version__}")
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging (-v INFO, -vv DEBUG)"
    )
    verbosity.add_argument("-q", "--quiet", action="store_true", help="only errors")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_OneLineErrorParser
    )
    _add_backends_parser(subparsers)
    _add_ask_parser(subparsers)
    problems = _add_plugin_parsers(subparsers)
    if problems:
        # Listed by --help, one line each, so a broken game is visible and not just absent.
        parser.epilog = "commands that failed to load:\n" + "\n".join(
            f"  {terminal_safe(p)}" for p in problems
        )
    return parser


def _configure_logging(verbose: int, quiet: bool) -> None:
    if quiet:
        level = logging.ERROR
    elif verbose >= 2:
        level = logging.DEBUG
    elif verbose == 1:
        level = logging.INFO
    else:
        level = logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", force=True)
    # Every line and traceback logged by any module is redacted on its way out.
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())


def _redacting_excepthook(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    # An unexpected error still prints its traceback, without the secrets it may quote.
    import traceback

    sys.stderr.write(redact("".join(traceback.format_exception(kind, value, tb))))


def _error(message: str) -> int:
    # Messages may quote a server's body: no secrets, no raw control characters.
    first = terminal_safe(redact(" ".join(str(message).split()))) or "unknown error"
    sys.stderr.write(f"{PROG}: error: {first}\n")
    return EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status.

    Ctrl-C exits 130 with one line, ``gt-llm: interrupted``, at any moment: during the
    program's start-up through :mod:`gt_llm.startup` (at once, no traceback), before
    the command starts (called in-process) and while it runs through
    ``KeyboardInterrupt``.

    Args:
      argv: Arguments without the program name (default ``sys.argv[1:]``).
    """
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # Only before the command started (it has its own handler below): a caller
        # that imported gt_llm itself, without gt_llm.startup's handler.
        sys.stderr.write(f"{INTERRUPTED_MESSAGE}\n")
        return INTERRUPTED_STATUS


def _main(argv: Sequence[str] | None) -> int:
    # Credentials in any argument (a backend URL's user:password, query keys) are
    # registered before anything can print them, and the command line itself, which
    # manifests record, keeps only the public labels.
    raw = list(sys.argv[1:] if argv is None else argv)
    for arg in raw:
        public_spec(arg)
    sys.argv = [public_spec(a) for a in sys.argv]
    sys.excepthook = _redacting_excepthook
    parser = build_parser()
    args = parser.parse_args(raw)
    _configure_logging(args.verbose, args.quiet)
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        # What one argparse type cannot see (a value valid only with another flag's):
        # refused naming the flag, before the command starts.
        run_checks(args)
    except ValueError as exc:
        return _error(str(exc))
    try:
        # Start-up is over: from here Ctrl-C raises KeyboardInterrupt, which the command
        # and the line below handle (partial results kept), instead of exiting at once.
        end_startup()
        # Ctrl-C also cancels the remote calls of worker threads, so the run stops at once.
        with interrupt_cancels_calls():
            return int(func(args) or 0)
    except KeyboardInterrupt:
        sys.stderr.write(f"{INTERRUPTED_MESSAGE}\n")
        return INTERRUPTED_STATUS
    except (GtLlmError, ValueError, OSError) as exc:
        # Expected failures (bad spec, missing key, unreachable server, bad path):
        # one line, no traceback; -vv shows it for debugging.
        logger.debug("traceback", exc_info=True)
        return _error(str(exc))


if __name__ == "__main__":
    sys.exit(main())
