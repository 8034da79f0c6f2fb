def verify(workspace, answer):
    """A third for port = 8080 in the file, a third for the other lines kept, a third for
    80800 named in the answer."""
    path = workspace / "config.ini"
    lines = [line.strip() for line in path.read_text().splitlines()] if path.exists() else []
    port = any(line.replace(" ", "") == "port=8080" for line in lines)
    kept = all(line in lines for line in ("[server]", "host = 0.0.0.0", "workers = 4"))
    return (port + kept + ("80800" in answer)) / 3
