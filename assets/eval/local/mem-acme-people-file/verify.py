def verify(workspace, answer):
    """1.0 for the three Acme people in alphabetical order, one a line; 0.5 for the same
    people in another order; else 0."""
    path = workspace / "acme.txt"
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()] \
        if path.exists() else []
    want = ["Ben Ito", "Mila Novak", "Zoe Park"]
    if lines == want:
        return 1.0
    return 0.5 if sorted(lines) == want else 0.0
