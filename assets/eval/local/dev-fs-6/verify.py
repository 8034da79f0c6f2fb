RENAMED = {"beach": "fake jpeg: beach", "harbour-at-night": "fake jpeg: harbour",
           "forest": "fake jpeg: forest"}
KEPT = {"logo.png": "fake png: logo", "captions.txt": "beach: Praia da Luz, August"}


def verify(workspace, answer):
    """One check per photo (NAME.jpg with its content, NAME.JPEG gone) and one for the
    other files left as they were; the mean."""
    photos = workspace / "photos"
    if not photos.is_dir():
        return 0.0
    names = {p.name for p in photos.iterdir()}
    checks = []
    for stem, content in RENAMED.items():
        new = photos / f"{stem}.jpg"
        checks.append(f"{stem}.jpg" in names and f"{stem}.JPEG" not in names
                      and content in new.read_text())
    checks.append(all(name in names and text in (photos / name).read_text()
                      for name, text in KEPT.items())
                  and len(names) == len(RENAMED) + len(KEPT))
    return sum(checks) / len(checks)
