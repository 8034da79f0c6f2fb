import re

WORDS = {"two": 2.0, "three": 3.0}


def verify(workspace, answer):
    """1.0 when the answer names 2 (or "two") and not 3, the waffles' and omelette's count."""
    said = {float(n) for n in re.findall(r"\d+(?:\.\d+)?", answer)}
    said |= {WORDS[w] for w in re.findall(r"[a-z]+", answer.lower()) if w in WORDS}
    return float(2.0 in said and 3.0 not in said)
