import json

EXPECTED = {"theme": "dark", "font_size": 14, "autosave": True}


def verify(workspace, answer):
    try:
        fixed = json.loads((workspace / "settings.json").read_text()) == EXPECTED
    except (OSError, ValueError):
        fixed = False
    return (float(fixed) + float("autosave" in answer)) / 2
