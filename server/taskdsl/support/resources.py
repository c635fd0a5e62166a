"""Files shipped with the package: inside the installed wheel, else in the source tree."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[3]  # the checkout, when running from source


def installed(packaged: str, source: str) -> Path:
    """``taskdsl/<packaged>`` inside the wheel when it is there, else ``<checkout>/<source>``."""
    try:
        found = importlib.resources.files("taskdsl").joinpath(*packaged.split("/"))
        if found.is_file() or found.is_dir():
            return Path(str(found))
    except (ModuleNotFoundError, NotADirectoryError):  # pragma: no cover - odd installs
        pass
    return SOURCE_ROOT / source
