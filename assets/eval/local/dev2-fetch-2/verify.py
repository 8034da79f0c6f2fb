import re

# 384 / 0.96 + 62.50 + 45 + 120 / 0.80 + 28 / 0.80 + 250 / 1.25 + 3200 / 160
TOTAL = 400.00 + 62.50 + 45.00 + 150.00 + 35.00 + 200.00 + 20.00  # 912.50


def verify(workspace, answer):
    """1.0 when total-eur.txt holds one number, 912.50 (912.5, 912,50, "EUR 912.50",
    "€912.50" too)."""
    path = workspace / "total-eur.txt"
    if not path.is_file():
        return 0.0
    text = path.read_text()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # a thousands separator
    text = re.sub(r"(?<=\d),(?=\d{1,2}\b)", ".", text)  # a decimal comma
    numbers = re.findall(r"\d+(?:\.\d+)?", text)
    return float(len(numbers) == 1 and abs(float(numbers[0]) - TOTAL) < 0.005)
