import re

# 3 of the 17 requests (502, 500, 503) are server errors: 17.647...% -> 17.6. Slips: 17.7
# (17.65 rounded again), 41.2 (every line with 500, 502 or 503 in it, or every 4xx and 5xx
# status: 7 of 17), 18.8 or 16.7 (16 or 18 requests counted).
RIGHT = 17.6
WRONG = {17.7, 17.65, 41.2, 41.18, 23.5, 29.4, 35.3, 18.8, 18.75, 16.7}


def verify(workspace, answer):
    """1.0 when the answer gives 17.6 (17,6 and 17.6 % too) and none of the numbers a slip
    gives."""
    text = re.sub(r"(?<=\d),(?=\d\b)", ".", answer)  # a decimal comma
    numbers = {float(n) for n in re.findall(r"(?<![\d.])\d+(?:\.\d+)?", text)}
    return float(RIGHT in numbers and not numbers & WRONG)
