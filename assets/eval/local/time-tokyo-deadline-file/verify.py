from helpers import convert


def verify(workspace, answer):
    """1.0 when the file holds just the London time of 17:30 in Tokyo today."""
    path = workspace / "deadline-london.txt"
    text = path.read_text().strip() if path.exists() else ""
    return float(text == convert("17:30", "Asia/Tokyo", "Europe/London"))
