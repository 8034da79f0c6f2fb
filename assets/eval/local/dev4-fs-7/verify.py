import re

# The car's fill-ups only (the scooter's rows are another tank). From the first car fill-up
# (12480 km) to the last (15530 km) it drove 3050 km and burned what the five later
# fill-ups put back, 38.60 + 36.10 + 39.40 + 38.90 + 35.80 = 188.80 l: 6.19 l/100 km, 6.2.
# (The mean of the five intervals' consumptions rounds to 6.2 as well.)
RIGHT = {6.2, 6.19}
# Slips: the first fill-up's 41.20 l counted too (230.00 l: 7.54); the last one left out
# instead of the first (6.37); the scooter's litres added (6.89, or 8.24 with the first
# rows'); litres over the last odometer reading (1.48, 1.22); the scooter's own (2.48).
WRONG = {7.5, 7.54, 6.4, 6.37, 6.9, 6.89, 8.2, 8.24, 1.5, 1.48, 1.2, 1.22, 2.5, 2.48}


def verify(workspace, answer):
    """1.0 when the answer gives 6.2 (6.19, 6,2 and "6.2 l/100 km" too) and none of the
    numbers a slip gives."""
    text = re.sub(r"(?<=\d),(?=\d{1,2}\b)", ".", answer)  # a decimal comma
    numbers = {round(float(n), 2) for n in re.findall(r"(?<![\d.])\d+(?:\.\d+)?", text)}
    return float(bool(numbers & RIGHT) and not numbers & WRONG)
