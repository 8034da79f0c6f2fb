def verify(workspace, answer):
    """A third each: weather/README.md whose first two lines are the title and the
    sentence (case and a missing final full stop aside), the folders weather/src and
    weather/tests."""
    project = workspace / "weather"
    readme = project / "README.md"
    lines = []
    if readme.is_file():
        lines = [line.strip().rstrip(".").lower() for line in readme.read_text().splitlines()
                 if line.strip()]
    checks = [
        lines[:2] == ["# weather", "daily forecasts for my garden"],
        (project / "src").is_dir(),
        (project / "tests").is_dir(),
    ]
    return sum(checks) / len(checks)
