import json
import re

EXPECTED = {
    "name": "trailmap",
    "version": "2.3.0",
    "private": True,
    "scripts": {"build": "vite build", "test": "vitest run"},
    "dependencies": {"leaflet": "^1.9.4"},
}


def verify(workspace, answer):
    """Half for package.json as it should be (version 2.3.0, all else the same), half for
    naming the old version 2.2.9 in the answer."""
    try:
        fixed = json.loads((workspace / "package.json").read_text()) == EXPECTED
    except (OSError, ValueError):
        fixed = False
    said = re.search(r"(?<![\d.])v?2\.2\.9(?![\d])", answer) is not None
    return (float(fixed) + float(said)) / 2
