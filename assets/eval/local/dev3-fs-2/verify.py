import re

from helpers import named_nearest

# Shared costs 424.20, a share 106.05: Ana paid 222.80, Ben 87.50, Cleo 113.90, Dev nothing.
# Counting the personal costs, or splitting three ways among those who paid, gives others.
BALANCE = {"ana": 116.75, "ben": -18.55, "cleo": 7.85, "dev": -106.05}
MOST_OWING = "dev"
NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")


def _balances(path):
    """{name: balance} of the file's rows (the header, or a row without a number, skipped);
    None when a person has two rows or the file is missing."""
    if not path.is_file():
        return None
    out = {}
    for line in path.read_text().splitlines():
        cells = [cell.strip().strip("\"'") for cell in line.split(",")]
        if len(cells) < 2:
            continue
        amount = cells[-1].replace("\u2212", "-").replace("€", "").replace("EUR", "").strip()
        if not NUMBER.fullmatch(amount):
            continue
        name = cells[0].lower()
        if name in out:
            return None
        out[name] = float(amount)
    return out


def verify(workspace, answer):
    """Three quarters for balances.csv: the share of the four people whose balance is right
    (to the cent, with its sign), nothing if it lists anyone else; a quarter for naming Dev
    as the one who owes the most."""
    balances = _balances(workspace / "balances.csv")
    file_score = 0.0
    if balances and set(balances) <= set(BALANCE):
        file_score = sum(abs(balances.get(name, 1e9) - value) < 0.005
                         for name, value in BALANCE.items()) / len(BALANCE)
    return 0.75 * file_score + 0.25 * (named_nearest(answer, BALANCE, "most") == MOST_OWING)
