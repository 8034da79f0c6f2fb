import re

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


def _named(answer):
    """The person the answer names as owing the most: in its first sentence that says
    "most", the person named nearest that word; without one, the one person it names."""
    text = answer.lower()
    for sentence in re.split(r"[.\n;!?]+(?:\s|$)", text):
        words = [m.start() for m in re.finditer(r"\bmost\b", sentence)]
        named = [(abs(m.start() - word), name) for name in BALANCE
                 for m in re.finditer(rf"\b{name}\b", sentence) for word in words]
        if named:
            return min(named)[1]
    named = {name for name in BALANCE if re.search(rf"\b{name}\b", text)}
    return named.pop() if len(named) == 1 else None


def verify(workspace, answer):
    """Three quarters for balances.csv: the share of the four people whose balance is right
    (to the cent, with its sign), nothing if it lists anyone else; a quarter for naming Dev
    as the one who owes the most."""
    balances = _balances(workspace / "balances.csv")
    file_score = 0.0
    if balances and set(balances) <= set(BALANCE):
        file_score = sum(abs(balances.get(name, 1e9) - value) < 0.005
                         for name, value in BALANCE.items()) / len(BALANCE)
    return 0.75 * file_score + 0.25 * (_named(answer) == MOST_OWING)
