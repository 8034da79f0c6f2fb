import re


def verify(workspace, answer):
    """The support line, written with or without spaces, +44 or a leading 0."""
    path = workspace / "support-phone.txt"
    if not path.exists():
        return 0.0
    digits = re.sub(r"\D", "", path.read_text())
    return float(digits in ("441134960788", "01134960788", "4401134960788"))
