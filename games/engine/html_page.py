"""Self-contained HTML pages: one template for every result viewer.

A page is one file: inline CSS, inline JavaScript and the data as JSON in a
``<script type="application/json">`` block. Nothing is fetched when it is
opened (a Content-Security-Policy with ``default-src 'none'`` forbids it), so a
page opens from disk, from an e-mail attachment or inside a notebook.

Model text is data, never markup. Three layers keep it so:

* :func:`script_json` escapes ``<``, ``>``, ``&`` and U+2028/U+2029 as ``\\uXXXX``
  inside the JSON, so no model answer can close the data block or start a tag;
* the page scripts insert every string with ``textContent`` (the shared helpers
  in ``page/base.js`` have no path to ``innerHTML``);
* the policy allows only the page's own scripts, by their SHA-256 hashes, so a
  script that somehow reached the DOM would still not run.

Pages are written through the project's one atomic writer
(:func:`runs.atomic.write_text`).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from runs.atomic import write_text

__all__ = ["asset", "href", "iframe", "render_page", "script_json", "write_page"]

#: Characters that could end the JSON block or start markup, and the two line
#: separators that JavaScript (before ES2019) refused inside string literals.
_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_ESCAPE_TABLE = str.maketrans(_ESCAPES)


def script_json(data: Any) -> str:
    """``data`` as JSON safe to place inside a ``<script>`` element.

    Raises:
      ValueError: ``data`` holds NaN or an infinity (write ``None`` instead).
    """
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.translate(_ESCAPE_TABLE)


def href(target: str | os.PathLike[str], start: str | os.PathLike[str]) -> str:
    """A relative link from a page in the folder ``start`` to the file ``target``.

    Percent-encoded (``game 1.html`` -> ``game%201.html``, ``jeu_é`` -> ``jeu_%C3%A9``):
    any file name works, and a link holds only the characters the pages' ``href``
    check allows (``page/base.js``), never a scheme such as ``javascript:``.
    """
    rel = PurePath(os.path.relpath(target, start)).as_posix()
    return quote(rel, safe="/")


@cache
def asset(package: str, name: str) -> str:
    """The text of a page asset shipped with ``package`` (e.g. ``page/base.js``)."""
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def render_page(
    *,
    title: str,
    data: Any,
    scripts: Sequence[str],
    styles: Sequence[str] = (),
) -> str:
    """The full HTML text of a page.

    Args:
      title: The document title (escaped).
      data: JSON-ready data the scripts read with ``pageData()``.
      scripts: JavaScript sources, run in order after the data block; the shared
        helpers (``page/base.js``) come first without being listed.
      styles: CSS added after the shared stylesheet (``page/base.css``).

    Returns:
      The document; its Content-Security-Policy names each script by hash.
    """
    js = [asset("games.engine", "page/base.js"), *scripts]
    css = "\n".join([asset("games.engine", "page/base.css"), *styles])
    for src in js:
        if "</script" in src.lower():
            raise ValueError("render_page: a script source contains '</script'")
    if "</style" in css.lower():
        raise ValueError("render_page: a stylesheet contains '</style'")
    hashes = " ".join(f"'sha256-{_sha256(s)}'" for s in js)
    policy = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {hashes}; base-uri 'none'; form-action 'none'"
    )
    body_scripts = "".join(f"<script>{s}</script>\n" for s in js)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{css}\n</style>\n</head>\n"
        f'<body>\n<main id="app"><noscript>This page needs JavaScript.</noscript></main>\n'
        f'<script type="application/json" id="page-data">{script_json(data)}</script>\n'
        f"{body_scripts}</body>\n</html>\n"
    )


def write_page(path: str | os.PathLike[str], page: str) -> Path:
    """Writes a page atomically (its folder is created) and returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text(path, page)


def iframe(page: str, *, height: int = 720) -> str:
    """A page inside an ``<iframe srcdoc>`` (for a notebook's HTML output).

    The frame is sandboxed with scripts allowed and nothing else: the page runs
    in an opaque origin and cannot reach the notebook around it.
    """
    return (
        f'<iframe srcdoc="{html.escape(page, quote=True)}" sandbox="allow-scripts" '
        f'style="width: 100%; height: {int(height)}px; border: 1px solid #ddd"></iframe>'
    )
