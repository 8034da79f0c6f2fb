import re
import tomllib
from pathlib import Path

# The four .jpg files dated 2024 (one from a Pixel, PXL_); IMG_20230520_202405.jpg was taken
# at 20:24:05 in 2023, and the 2024 video, scan and note are no photos.
MOVED = ["IMG_20240117_101512.jpg", "IMG_20240603_184400.jpg", "IMG_20240809_134502.jpg",
         "PXL_20241224_090101.jpg"]


def _setup():
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    return task["setup"]["files"]


def _count(answer):
    """The counts the answer gives: whole numbers below 100 that stand alone (not part of a
    file name, a date or a time), and number words."""
    words = {"three": 3, "four": 4, "five": 5, "six": 6}
    counts = {int(n) for n in re.findall(r"(?<![\w./:-])(\d{1,2})(?![\w/:-]|\.\d)", answer)}
    return counts | {n for word, n in words.items() if re.search(rf"\b{word}\b", answer.lower())}


def verify(workspace, answer):
    """A sixth for each of the four photos in photos/2024 with its content and no longer in
    the inbox; a sixth for everything else where it was (nothing more in photos/2024); a
    sixth for the count, 4, in the answer and not 5 (a numbered list of the four is fine,
    and so is the count of the files left)."""
    files = _setup()
    target = workspace / "photos" / "2024"
    checks = []
    for name in MOVED:
        moved = target / name
        checks.append(moved.is_file() and moved.read_text() == files[f"inbox/{name}"]
                      and not (workspace / "inbox" / name).exists())
    stayed = all((workspace / rel).is_file() and (workspace / rel).read_text() == content
                 for rel, content in files.items() if Path(rel).name not in MOVED)
    extra = target.is_dir() and any(p.name not in MOVED for p in target.iterdir())
    checks.append(stayed and not extra)
    counts = _count(answer)
    checks.append(4 in counts and 5 not in counts)
    return sum(checks) / len(checks)
