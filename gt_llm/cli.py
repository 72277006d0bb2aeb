"""The ``gt-llm`` command line.

Subcommands:

* ``gt-llm backends`` lists the registered backends and whether each is usable here;
* ``gt-llm ask --backend SPEC "PROMPT"`` sends one prompt and prints the answer.

and one command group per game in the game registry
(:mod:`games.engine.registry`): ``gt-llm <game> ...`` (e.g. ``gt-llm
fruit-trading run``). Each registered game's ``add_parser(subparsers)`` adds
its group and sets ``func`` (``func(args) -> int``) as a default.

Errors print one line ``gt-llm: error: ...`` on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

import gt_llm
from gt_llm.errors import GtLlmError
from gt_llm.retry import RetryPolicy

logger = logging.getLogger("gt_llm.cli")

PROG = "gt-llm"
EXIT_ERROR = 2


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (the error becomes a one-line usage error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, got {text}")
    return value


def _add_game_parsers(subparsers: argparse._SubParsersAction) -> None:
    """Adds ``gt-llm <game> ...`` for every game in the registry (importing ``games`` registers them)."""
    try:
        importlib.import_module("games")
        from games.engine.registry import registered_game_specs
    except ModuleNotFoundError as exc:
        # Only "the games package is not installed" is silent; a missing dependency
        # *inside* it is a real problem worth a warning.
        if exc.name == "games" or (exc.name or "").startswith("games."):
            logger.debug("no games package: %s", exc)
            return
        logger.warning("gt-llm: cannot load the game commands: %s", exc)
        return
    except Exception as exc:  # a broken game must not break the built-in commands
        logger.warning("gt-llm: cannot load the game commands: %s", exc)
        return
    for spec in registered_game_specs():
        try:
            spec.add_parser(subparsers)
        except Exception as exc:
            logger.warning("gt-llm: the %s commands failed to load: %s", spec.name, exc)


# --- Built-in subcommands ---------------------------------------------------------------


def _cmd_backends(args: argparse.Namespace) -> int:
    rows = []
    for info in gt_llm.registered_backends():
        ok, why = info.usable()
        rows.append((info.name, "yes" if ok else "no", why, info.example, info.description))
    name_w = max(len("backend"), *(len(r[0]) for r in rows))
    ex_w = max(len("example spec"), *(len(r[3]) for r in rows))
    lines = [f"{'backend':<{name_w}}  {'usable':<6}  {'example spec':<{ex_w}}  description"]
    for name, ok, why, example, description in rows:
        lines.append(f"{name:<{name_w}}  {ok:<6}  {example:<{ex_w}}  {description}")
        if ok == "no":
            lines.append(f"{'':<{name_w}}  {'':<6}  not usable here: {why}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _cmd_ask(args: argparse.Namespace) -> int:
    options = {}
    # Only options the user gave: the scripted backend accepts none.
    if args.timeout is not None:
        options["timeout"] = args.timeout
    if args.max_attempts is not None:
        options["retry"] = RetryPolicy(max_attempts=args.max_attempts)
    if args.rpm is not None:
        options["requests_per_minute"] = args.rpm
    model = gt_llm.load_model(args.backend, cache=args.cache, **options)
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
    text = response.text
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _add_backends_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "backends",
        help="list chat-model backends and whether they are usable here",
        description="List the registered chat-model backends, an example spec for each, "
        "and whether each is usable in this environment (and why not).",
    )
    p.set_defaults(func=_cmd_backends)


def _add_ask_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ask",
        help="send one prompt to a backend and print the answer",
        description="Send one prompt to a chat-model backend and print the answer text.",
    )
    p.add_argument("prompt", help="the user message")
    p.add_argument(
        "--backend",
        "-b",
        default="scripted",
        metavar="SPEC",
        help="backend spec: scripted, groq[:MODEL], openai:MODEL@BASE_URL (default: scripted)",
    )
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    p.add_argument(
        "--temperature", type=float, default=1.0, help="sampling temperature (default: 1.0)"
    )
    p.add_argument(
        "--max-tokens", type=int, default=512, help="bound on answer tokens (default: 512)"
    )
    p.add_argument("--system", default=None, help="optional system message")
    p.add_argument("--timeout", type=float, default=None, help="per-attempt timeout, seconds")
    p.add_argument(
        "--max-attempts",
        type=int,
        default=None,
        help="attempts per call, including the first (remote backends; default 6)",
    )
    p.add_argument(
        "--rpm",
        type=positive_float,
        default=None,
        help="requests-per-minute limit (remote backends; default: none)",
    )
    p.add_argument("--cache", default=None, metavar="PATH", help="SQLite call cache to use")
    p.set_defaults(func=_cmd_ask)


class _OneLineErrorParser(argparse.ArgumentParser):
    """Reports usage errors as one line (``gt-llm: error: ...``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        sys.exit(EXIT_ERROR)


def build_parser() -> argparse.ArgumentParser:
    """The ``gt-llm`` argument parser, with the built-in and the game subcommands."""
    parser = _OneLineErrorParser(
        prog=PROG,
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
    _add_game_parsers(subparsers)
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


def _error(message: str) -> int:
    first = " ".join(str(message).split()) or "unknown error"
    sys.stderr.write(f"{PROG}: error: {first}\n")
    return EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status.

    Args:
      argv: Arguments without the program name (default ``sys.argv[1:]``).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose, args.quiet)
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except (GtLlmError, ValueError, OSError) as exc:
        # Expected failures (bad spec, missing key, unreachable server, bad path):
        # one line, no traceback; -vv shows it for debugging.
        logger.debug("traceback", exc_info=True)
        return _error(str(exc))


if __name__ == "__main__":
    sys.exit(main())
