REPORT = "Annual report 2023\nRevenue: 1.2M EUR"


def verify(workspace, answer):
    """A third each: archive/report-2023.txt with the report, no report-2023.txt left at
    the top, report-2024.txt and notes.txt still at the top."""
    moved = workspace / "archive" / "report-2023.txt"
    checks = [
        moved.is_file() and moved.read_text().strip() == REPORT,
        not (workspace / "report-2023.txt").exists(),
        (workspace / "report-2024.txt").is_file() and (workspace / "notes.txt").is_file(),
    ]
    return sum(checks) / len(checks)
