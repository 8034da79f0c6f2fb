"""Signatures folded to a panel's width: nothing lost, brackets and quotes respected."""

from __future__ import annotations

from deskmate.app.ui.wrap_signature import fold, split_top_level


def test_commas_inside_brackets_and_quotes_do_not_split():
    assert split_top_level('a: str, b: dict[str, int] = {"x,y": 1}, c') == [
        "a: str", 'b: dict[str, int] = {"x,y": 1}', "c"]


def test_a_long_def_gets_one_parameter_a_line_and_a_wrapped_docstring():
    text = ('def search(path: str, pattern: str, exclude: list[str] = ["a,b"]) '
            '-> {"path": str}:\n    """Search for files and folders matching a pattern, '
            'recursively, from the path given."""')
    folded = fold(text, 40)
    assert folded.splitlines()[:5] == ["def search(", "    path: str,", "    pattern: str,",
                                       '    exclude: list[str] = ["a,b"],',
                                       ') -> {"path": str}:']
    assert all(len(line) <= 40 for line in folded.splitlines()[5:])
    assert " ".join(folded.split()).replace("( ", "(").replace(", )", ")").replace(
        ",)", ")") == " ".join(text.split()), "nothing dropped"


def test_a_short_signature_is_left_alone():
    text = 'def add(a: int, b: int) -> int:\n    """Add two numbers."""'
    assert fold(text, 60) == text
