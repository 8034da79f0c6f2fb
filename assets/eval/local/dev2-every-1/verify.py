import re


def verify(workspace, answer):
    """Half for the humidity, 48 (and not New York's or Chicago's 82); half for the
    conditions, sunny or clear (and not their cloudy or rainy weather)."""
    text = answer.lower()
    numbers = {float(n) for n in re.findall(r"\d+(?:\.\d+)?", text)}
    checks = [
        48.0 in numbers and 82.0 not in numbers,
        bool(re.search(r"\b(sunny|clear)\b", text))
        and not re.search(r"\b(cloudy|rain|drizzle)\b", text),
    ]
    return sum(checks) / len(checks)
