from helpers import convert


def verify(workspace, answer):
    path = workspace / "meeting.txt"
    expected = convert("16:00", "Europe/London", "America/Los_Angeles")
    return float(path.exists() and path.read_text().strip() == expected)
