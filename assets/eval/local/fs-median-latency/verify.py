def verify(workspace, answer):
    """1.0 for 125 (the mean of the two middle values of six) in median.txt."""
    path = workspace / "median.txt"
    if not path.exists():
        return 0.0
    try:
        return float(float(path.read_text().strip().removesuffix("ms")) == 125.0)
    except ValueError:
        return 0.0
