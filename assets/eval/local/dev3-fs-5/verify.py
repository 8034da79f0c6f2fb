import re

# Shortfalls: B-230 20, A-104 18, A-221 6, B-112 6 (the tie, by SKU: A before B, though
# B-112 comes first in the file), C-101 4. Left out: B-017 (6) and C-188 (3), discontinued;
# C-045, at its reorder level and not below it.
ORDER = ["B-230", "A-104", "A-221", "B-112", "C-101"]
SKU = re.compile(r"\b[A-D]-\d{3}\b")
FIVE = r"(?<![\w.,/-])(5|five)(?![\w/-])(?![.,]\d)"  # not inside a SKU or a number


def _skus(path):
    """The SKU each line names, in order (a line naming none is skipped; a line naming two
    makes it None)."""
    skus = []
    for line in path.read_text().splitlines():
        named = SKU.findall(line.upper())
        if len(named) > 1:
            return None
        skus += named
    return skus


def verify(workspace, answer):
    """Half for reorder.txt naming exactly the five items to reorder, each once; a quarter
    more for their order (shortfall, then SKU); a quarter for 5 (or "five") in the
    answer."""
    path = workspace / "reorder.txt"
    skus = _skus(path) if path.is_file() else None
    listed = skus is not None and sorted(skus) == sorted(ORDER)
    count = re.search(FIVE, answer.lower()) is not None
    return 0.5 * listed + 0.25 * (listed and skus == ORDER) + 0.25 * count
