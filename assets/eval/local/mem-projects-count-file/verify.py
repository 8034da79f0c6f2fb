def verify(workspace, answer):
    """Half for 2 in active-projects.txt; half for naming Halcyon and Lantern."""
    path = workspace / "active-projects.txt"
    count_ok = path.exists() and path.read_text().strip() == "2"
    said = answer.lower()
    names_ok = "halcyon" in said and "lantern" in said
    return 0.5 * count_ok + 0.5 * names_ok
