import re
import unicodedata

# In UTC on 10 June 2026: Sydney 05:00, Berlin 06:30, Tokyo 09:00, Mumbai 10:30, New York
# 11:00, Sao Paulo 16:30. The order is the same with any day's offsets (a conversion for
# "today"), and none of it is the order of the local times.
ORDER = ["sydney", "berlin", "tokyo", "mumbai", "new york", "sao paulo"]


def _plain(text):
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in text if not unicodedata.combining(c))


def _cities(path):
    """The city each line names, in order (a line naming none is skipped; a line naming
    two makes it None)."""
    cities = []
    for line in path.read_text().splitlines():
        named = [city for city in ORDER if re.search(rf"\b{city}\b", _plain(line))]
        if len(named) > 1:
            return None
        cities += named
    return cities


def verify(workspace, answer):
    """1.0 for the six cities in the order their launches happen; a quarter for the six,
    each once, in another order."""
    path = workspace / "launch-order.txt"
    cities = _cities(path) if path.is_file() else None
    if not cities or sorted(cities) != sorted(ORDER):
        return 0.0
    return 1.0 if cities == ORDER else 0.25
