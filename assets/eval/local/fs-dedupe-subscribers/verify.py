import re

KEPT = ["ana@example.org", "ben@example.org", "chloe@example.org", "dev@example.org",
        "emre@example.org"]


def verify(workspace, answer):
    """Half for the file holding each address once, in order; half for saying 2 were removed."""
    lines = [line.strip() for line in (workspace / "subscribers.txt").read_text().splitlines()
             if line.strip()]
    told = re.search(r"\b(2|two)\b", answer, re.IGNORECASE) is not None
    return 0.5 * (lines == KEPT) + 0.5 * told
