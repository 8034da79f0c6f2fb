import re
import tomllib
from pathlib import Path

BROKEN = '<a href="contcat.html">Contact</a>'
FIXED = re.compile(r"""<a href=["'](\./)?contact\.html["']>Contact</a>""")


def _lines(text):
    return [line.strip() for line in text.strip().splitlines()]


def _original():
    """index.html as task.toml writes it, a line a list item, stripped."""
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    return _lines(task["setup"]["files"]["www/index.html"])


def _fixed(text):
    """Every line as it was (any indentation) except the broken link's, now to contact.html."""
    lines, original = _lines(text), _original()
    if len(lines) != len(original):
        return False
    return all(bool(FIXED.fullmatch(line)) if old == BROKEN else line == old
               for line, old in zip(lines, original, strict=True))


def verify(workspace, answer):
    """Two thirds for index.html with the link to contcat.html now to contact.html and
    nothing else changed; a third for the broken link, contcat.html, in the answer."""
    path = workspace / "www" / "index.html"
    fixed = path.is_file() and _fixed(path.read_text())
    return (2 * fixed + ("contcat" in answer.lower())) / 3
