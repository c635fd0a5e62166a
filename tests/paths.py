"""Where the tests find the shared material: beside the checkout (as CI lays it out), else /work/shared."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _shared() -> Path:
    for candidate in (REPO.parent / "shared", Path("/work/shared")):
        if (candidate / "corpus" / "upstream").is_dir():
            return candidate
    return REPO.parent / "shared"


SHARED = _shared()
CORPUS = SHARED / "corpus" / "upstream"
