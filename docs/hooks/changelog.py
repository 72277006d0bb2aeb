"""MkDocs hook: the site's changelog page shows the repository's CHANGELOG.md.

``docs/changelog.md`` is a placeholder that keeps the page in the navigation;
its text is replaced by ``CHANGELOG.md`` (next to ``mkdocs.yml``) when the
site is built, so the history is written once. CHANGELOG.md links to no file,
so its text reads the same from the repository root and from ``docs/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PAGE = "changelog.md"


def _changelog(config: Any) -> Path:
    return Path(config["config_file_path"]).resolve().parent / "CHANGELOG.md"


def on_config(config: Any) -> Any:
    """Rebuilds the site when CHANGELOG.md changes under ``mkdocs serve``."""
    config["watch"].append(str(_changelog(config)))
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """The changelog page's text is CHANGELOG.md; every other page is left alone."""
    if page.file.src_uri != PAGE:
        return markdown
    return _changelog(config).read_text(encoding="utf-8")
