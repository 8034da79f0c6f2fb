from helpers import convert


def verify(workspace, answer):
    path = workspace / "london.txt"
    want = convert("16:45", "Asia/Kathmandu", "Europe/London")
    return float(path.exists() and path.read_text().strip() == want)
