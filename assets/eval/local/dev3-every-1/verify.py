import re

# Los Angeles 73 °F, Chicago 36 °F, New York 33 °F: LA is 40 °F warmer than New York, 40 * 5/9
# = 22.2 °C. Taking 32 off the difference as well gives 4.4; Chicago as the coldest, 20.6.
CITIES = ("los angeles", "new york", "chicago")
WARMEST = "los angeles"
DIFFERENCE = 22.2
WRONG = 4.4


def _warmest(text):
    """The city named nearest (by the gap between them) the answer's first "warmest"
    (warmer, hottest...); without such a word, the city it names first."""
    named = [(m.start(), m.end(), city) for city in CITIES for m in re.finditer(city, text)]
    if not named:
        return None
    word = re.search(r"\b(warm|warmer|warmest|hottest|hotter)\b", text)
    if word is None:
        return min(named)[2]
    return min((max(start - word.end(), word.start() - end), city)
               for start, end, city in named)[1]


def verify(workspace, answer):
    """Half for Los Angeles as the warmest; half for a difference of 22.2 °C (22.22 is fine)
    and not 4.4 (32 taken off a difference)."""
    text = answer.lower().replace(",", ".")
    numbers = {float(n) for n in re.findall(r"(?<![\d.])\d+(?:\.\d+)?", text)}
    difference = (any(abs(n - DIFFERENCE) < 0.05 for n in numbers)
                  and not any(abs(n - WRONG) < 0.05 for n in numbers))
    return 0.5 * (_warmest(text) == WARMEST) + 0.5 * difference
