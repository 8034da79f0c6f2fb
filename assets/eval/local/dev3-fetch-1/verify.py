import re

# Tuesday, 4 h 25 min: 2.50 + 4 started further hours x 1.80 = 9.70. Saturday, 6 h 35 min:
# 2.00 + 6 x 1.20 = 9.20, capped at the weekend maximum, 8.00. Together 17.70.
TOTAL = 17.70
# Slips: no daily maximum (18.90); only whole further hours (7.90 + 8.00 = 15.90); the
# weekday tariff for Saturday too (9.70 + 13.30 = 23.00); the weekend one for both (6.80 +
# 8.00 = 14.80).
WRONG = {18.90, 15.90, 23.00, 14.80}


def verify(workspace, answer):
    """1.0 when the answer gives the total, 17.70 (17.7, 17,70, €17.70 too), and no total a
    slip gives; a stay's own price (9.70, 8.00) may be there too."""
    text = re.sub(r"(?<=\d),(?=\d{1,2}\b)", ".", answer)  # a decimal comma
    numbers = {round(float(n), 2) for n in re.findall(r"(?<![\d.])\d+(?:\.\d+)?", text)}
    return float(TOTAL in numbers and not numbers & WRONG)
