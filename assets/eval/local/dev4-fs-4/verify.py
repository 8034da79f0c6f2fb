import re
import tomllib
from pathlib import Path

# Every time 2500 ms earlier, borrowing across seconds, minutes and the hour:
# 00:00:59,800 -> 00:00:57,300; 00:01:03,000 -> 00:01:00,500; 01:00:02,300 ->
# 00:59:59,800. The last subtitle now starts at 00:59:56,400. Slips: shifted later
# (01:00:01,400), by 0.25 s (00:59:58,650) or 25 s, only the seconds field changed
# (negative or unborrowed fields), the text's "00:40" touched.
SHIFT_MS = -2500
STAMP = re.compile(r"(\d{2}):(\d{2}):(\d{2}),(\d{3})")
LAST = "00:59:56,400"
WRONG = ("01:00:01,400", "00:59:58,650", "00:59:33,900")


def _ms(stamp):
    h, m, s, ms = map(int, STAMP.fullmatch(stamp).groups())
    return ((h * 60 + m) * 60 + s) * 1000 + ms


def _stamp(ms):
    s, ms = divmod(ms, 1000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"


def expected_lines():
    """The file's non-blank lines with each cue's timing line shifted."""
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    lines = []
    for line in task["setup"]["files"]["harbour-lights.srt"].strip().splitlines():
        if "-->" in line:
            start, end = (part.strip() for part in line.split("-->"))
            line = f"{_stamp(_ms(start) + SHIFT_MS)} --> {_stamp(_ms(end) + SHIFT_MS)}"
        if line.strip():
            lines.append(line.strip())
    return lines


def _lines(text):
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _times(answer):
    """The times the answer gives as HH:MM:SS,mmm (written with a decimal point, or with
    a one-digit hour, too)."""
    found = re.findall(r"(?<![\d:])(\d{1,2}):(\d{2}):(\d{2})[,.](\d{3})(?!\d)", answer)
    return {f"{int(h):02d}:{m}:{s},{ms}" for h, m, s, ms in found}


def _cues(text):
    """How many blank-line separated blocks the file has (6 cues)."""
    return len(re.split(r"\n\s*\n", text.strip()))


def verify(workspace, answer):
    """Three quarters for the file: its six cues still apart, and its lines (blank ones
    aside) exactly the original ones with every start and end 2.5 s earlier; a quarter for
    00:59:56,400 (or .400) in the answer and no time a slip gives."""
    path = workspace / "harbour-lights.srt"
    text = path.read_text() if path.is_file() else ""
    shifted = _cues(text) == 6 and _lines(text) == expected_lines()
    times = _times(answer)
    told = LAST in times and not any(time in times for time in WRONG)
    return 0.75 * shifted + 0.25 * told
