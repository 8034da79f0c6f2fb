def verify(workspace, answer):
    path = workspace / "full.txt"
    if not path.exists():
        return 0.0
    words = path.read_text().split()
    expected = ("It was a bright cold day in April, and the clocks were striking thirteen.").split()
    return float(words == expected)
