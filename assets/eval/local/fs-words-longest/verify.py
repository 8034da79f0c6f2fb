def verify(workspace, answer):
    """Half for trip.txt (19 words) named in longest.txt, half for its count in the answer."""
    path = workspace / "longest.txt"
    named = path.exists() and "trip" in path.read_text().lower() and \
        "ideas" not in path.read_text().lower()
    import re
    counted = "19" in re.findall(r"\d+", answer)
    return (named + counted) / 2
