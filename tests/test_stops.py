"""Stop strings found across arbitrary piece boundaries."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deskmate.app.llm.stops import StopMatcher


def run(pieces, stops):
    matcher = StopMatcher(stops)
    out = []
    for piece in pieces:
        emitted, stopped = matcher.feed(piece)
        out.append(emitted)
        if stopped:
            return "".join(out), True, matcher.text
    out.append(matcher.flush())
    return "".join(out), False, matcher.text


def test_stop_split_across_pieces():
    assert run(["Hello <|e", "nd|> tail"], ["<|end|>"]) == ("Hello ", True, "Hello ")


def test_partial_stop_at_end_is_released():
    assert run(["Hello <|e"], ["<|end|>"]) == ("Hello <|e", False, "Hello <|e")


def test_earliest_of_several_stops_wins():
    assert run(["a STOP b END"], ["END", "STOP"])[0] == "a "


@given(st.text(alphabet="ab<>|", max_size=40), st.lists(st.integers(1, 6), max_size=20),
       st.text(alphabet="ab<>|", min_size=1, max_size=4))
def test_any_split_gives_the_text_before_the_stop(text, cuts, stop):
    stops = [stop]
    pieces, rest = [], text
    for n in cuts:
        pieces.append(rest[:n])
        rest = rest[n:]
    pieces.append(rest)
    hits = [i for i in (text.find(s) for s in stops) if i >= 0]
    expected = text[: min(hits)] if hits else text
    emitted, stopped, kept = run(pieces, stops)
    assert emitted == expected == kept
    assert stopped == bool(hits)
