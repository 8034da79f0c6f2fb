def verify(workspace, answer):
    """1.0 for MARMALADE; half for the right word not in upper case."""
    path = workspace / "word.txt"
    if not path.exists():
        return 0.0
    word = path.read_text().strip().strip("\"'")
    if word == "MARMALADE":
        return 1.0
    return 0.5 if word.lower() == "marmalade" else 0.0
