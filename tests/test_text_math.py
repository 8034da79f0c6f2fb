"""Text used as a number or a date in a cell: the hint names the operand, its value and
the conversion, through the real sandbox worker."""

from __future__ import annotations

import pytest

from deskmate.tools.sandbox import Sandbox


@pytest.fixture(scope="module")
def box():
    with Sandbox(lambda kind, payload: None) as sandbox:
        yield sandbox


def error(box, code: str) -> str:
    result = box.execute(code)
    assert result.status == "error", code
    return result.error


def test_a_csv_field_multiplied_is_named_with_its_conversion(box):
    code = ("import csv, io\n"
            "rows = list(csv.DictReader(io.StringIO('name,mark\\nAmara,95\\n')))\n"
            "for row in rows:\n"
            "    row['final'] = row['mark'] * 0.2\n")
    assert "Hint: row['mark'] is text ('95'): write float(row['mark'])" in error(box, code)


def test_iso_datetimes_subtracted_are_named_with_fromisoformat(box):
    code = ("a = '2026-12-06T07:10:08+11:00'\nb = '2026-12-05T20:10:08+00:00'\n"
            "print(a - b)")
    hint = error(box, code)
    assert "a is text ('2026-12-06T07:10:08+11:00'): write datetime.fromisoformat(a)" in hint
    assert "b is text" in hint


def test_a_sum_or_a_comparison_of_text_gets_the_hint(box):
    # sum() of a column's texts: the operands are inside sum, so the hint is the general one
    assert "convert what you read from text first" in error(box, "sum(['1', '2'])")
    assert "total is text ('12,5'): write float(total.replace(',', '.'))" in error(
        box, "total = '12,5'\nif total > 10:\n    print('big')")
    assert "name is text ('Ana'), not a number" in error(box, "name = 'Ana'\nname / 2")


def test_other_type_errors_get_no_such_hint(box):
    assert "is text" not in error(box, "len(5)")
    assert "is text" not in error(box, "{'a': 1} + 1")
    assert "convert what you read" not in error(box, "'a' + 1")


def test_a_number_put_into_text_is_not_told_to_convert_the_text(box):
    # `count + ' files'`: the fix is str(count), not float(); no hint is better than a
    # wrong one. A text that holds a number, added to one, is hinted.
    assert "Hint" not in error(box, "label = 'files'\n3 + label")
    assert "n is text ('3'): write float(n)" in error(box, "n = '3'\n1 + n")


def test_the_operands_are_named_in_the_order_the_line_reads(box):
    code = ("row = {'a': '1', 'b': '2', 'c': '3'}\n"
            "total = (row['a'] * 0.2) + (row['b'] * 0.3) + (row['c'] * 0.5)")
    hint = error(box, code)
    assert hint.index("row['a'] is text") < hint.index("row['b'] is text") < hint.index(
        "row['c'] is text")
