"""``gt-llm werewolf view PATH [--out FILE]``: a log or a results folder as HTML pages.

* a game log (``.jsonl``): its page (default: the log's name with ``.html``);
* a series (``werewolf play --games N --out DIR``) or arena folder: ``DIR/view/index.html``
  and every game's page beside it (``--out`` names the index instead);
* a day study (``werewolf solve --out DIR``): ``DIR/view/days.html``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from games.engine.cli_options import Writer, say

__all__ = ["add_view_parser", "run_view"]


def run_view(args: argparse.Namespace, *, write: Writer | None = None) -> int:
    """Writes the page(s) of ``args.path`` and says where they are."""
    from games.werewolf.view.index import folder_kind, not_a_log, write_folder_pages
    from games.werewolf.view.page import write_game_page
    from games.werewolf.view.solve import write_solve_page

    write = write or say
    path = Path(args.path)
    if args.out is not None and not str(args.out).endswith((".html", ".htm")):
        raise ValueError("werewolf view --out: end the file name in .html")
    if path.exists() and not path.is_dir():
        # A log (a FIFO or a device is refused by the reader, never read).
        out = Path(args.out) if args.out else path.with_suffix(".html")
        try:
            page = write_game_page(path, out)
        except ValueError:
            other = not_a_log(path, "werewolf view")  # e.g. tournament.json: say what it is
            if other is None:
                raise
            raise other from None
        write(str(page))
        return 0
    if not path.is_dir():
        raise ValueError(
            f"werewolf view: no such log or folder {path}; give a game log (.jsonl) or a "
            "results folder of werewolf play --games, arena or solve"
        )
    kind = folder_kind(path)  # a one-line error naming what each folder holds
    if kind == "solve":
        if args.out is None:
            from runs.folders import folder_inside

            folder_inside(path, "view")  # the page's folder, never through a link
        write(str(write_solve_page(path, args.out)))
        return 0
    pages: list[Path] = []
    index = write_folder_pages(path, args.out, games=not args.no_games, on_page=pages.append)
    write(str(index))
    if pages:
        write(f"{len(pages)} game pages beside it")
    return 0


def add_view_parser(sub: argparse._SubParsersAction) -> None:
    """Adds ``view`` to the ``gt-llm werewolf`` command group."""
    view = sub.add_parser(
        "view",
        help="a game log or a results folder as self-contained HTML pages",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    view.add_argument("path", metavar="LOG|DIR", help="a game log or a results folder")
    view.add_argument("--out", default=None, help="the page to write (.html)")
    view.add_argument(
        "--no-games",
        action="store_true",
        help="for a series or arena folder: write the index only, not every game's page",
    )
    view.set_defaults(func=run_view)
