"""Compact Python signatures from MCP tools' JSON Schemas (tools/signatures.py)."""

from __future__ import annotations

import ast
import keyword
import statistics
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deskmate.tools.catalog import Catalog
from deskmate.tools.schema_types import type_text
from deskmate.tools.signatures import (
    Param,
    Signature,
    py_identifier,
    return_type,
    signature,
    summary_line,
)
from deskmate.tools.spec import ToolSpec

TOOLSPACE = Path(__file__).resolve().parents[1].parent / "shared" / "toolspace"


def sig(properties: dict[str, Any], required: list[str] | None = None, description: str = "",
        **extra: Any) -> Signature:
    schema = {"type": "object", "properties": properties, **extra}
    if required is not None:
        schema["required"] = required
    return signature(ToolSpec("srv", "tool", description, schema))


def param(s: Signature, name: str) -> Param:
    return next(p for p in s.params if p.name == name)


def assert_valid_python(s: Signature) -> None:
    # compile(), unlike ast.parse alone, also rejects duplicate argument names.
    compile(s.def_line() + ": ...", "<def_line>", "exec")
    compile(s.text(), "<text>", "exec")
    ast.parse(s.def_line() + ": ...")


# --- names -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "expected"), [
    ("path", "path"),
    ("api-version", "api_version"),
    ("x.loc.city", "x_loc_city"),
    ("first name", "first_name"),
    ("a--b", "a_b"),
    ("from", "from_"),
    ("None", "None_"),
    ("class", "class_"),
    ("__debug__", "__debug___"),
    ("2fa", "_2fa"),
    ("$meta", "_meta"),
    ("café", "cafe"),
    ("", "_"),
    ("type", "type"),  # soft keywords are fine as parameter names
    ("camelCase", "camelCase"),
])
def test_py_identifier(name: str, expected: str) -> None:
    assert py_identifier(name) == expected
    assert expected.isidentifier() and not keyword.iskeyword(expected)


@given(st.text(max_size=30))
def test_py_identifier_is_always_a_stable_identifier(name: str) -> None:
    ident = py_identifier(name)
    assert ident.isidentifier() and ident.isascii()
    assert not keyword.iskeyword(ident) and ident != "__debug__"
    assert py_identifier(name) == ident


def test_odd_names_round_trip_through_to_arguments() -> None:
    s = sig({"api-version": {"type": "string"}, "api_version": {"type": "string"},
             "from": {"type": "string"}, "x-loc-city": {"type": "string"},
             "2fa": {"type": "boolean"}, "$meta": {"type": "object"}})
    names = [p.name for p in s.params]
    # The name that is already valid keeps it; the hyphenated one gets a suffix.
    assert names == ["api_version_2", "api_version", "from_", "x_loc_city", "_2fa", "_meta"]
    assert len(set(names)) == len(names)
    call = {p.name: i for i, p in enumerate(s.params)}
    assert s.to_arguments(call) == {p.original: i for i, p in enumerate(s.params)}
    assert_valid_python(s)


def test_to_arguments_omits_unset_optionals_and_passes_unknown_names() -> None:
    s = sig({"q": {"type": "string"}, "limit": {"type": "integer"},
             "mode": {"type": ["string", "null"], "default": "fast"}}, required=["q"])
    assert s.to_arguments({"q": "x", "limit": None}) == {"q": "x"}
    assert s.to_arguments({"q": None, "mode": None}) == {"q": None, "mode": None}
    assert s.to_arguments({"q": "x", "extra": 1}) == {"q": "x", "extra": 1}


def test_tool_name_becomes_an_identifier() -> None:
    s = signature(ToolSpec("srv", "get-file.v2", "", {}))
    assert (s.tool, s.name, s.server) == ("get-file.v2", "get_file_v2", "srv")
    assert s.def_line() == "def get_file_v2() -> Any"


# --- types -------------------------------------------------------------------------------


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "string"}, "str"),
    ({"type": "integer"}, "int"),
    ({"type": "number"}, "float"),
    ({"type": "boolean"}, "bool"),
    ({"type": "null"}, "None"),
    ({}, "Any"),
    ({"type": "wat"}, "Any"),
    ({"type": "array", "items": {"type": "string"}}, "list[str]"),
    ({"type": "array"}, "list"),
    ({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
     "list[str | int]"),
    ({"type": "object"}, "dict"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, "dict[str, int]"),
    ({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
      "required": ["a"]}, '{"a": int, "b?": str}'),
    ({"enum": ["asc", "desc"]}, 'Literal["asc", "desc"]'),
    ({"enum": ["a", None]}, 'Literal["a"] | None'),
    ({"enum": [1, 2.5, True]}, "Literal[1, 2.5, True]"),
    ({"const": "x"}, 'Literal["x"]'),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "str | None"),
    ({"oneOf": [{"type": "integer"}, {"type": "string"}, {"type": "integer"}]}, "int | str"),
    ({"anyOf": [{"type": "null"}, {"type": "string"}]}, "str | None"),
    ({"anyOf": [{"type": "string"}, {}]}, "Any"),
    ({"type": ["string", "number", "null"]}, "str | float | None"),
    ({"type": "string", "nullable": True}, "str | None"),
    ({"allOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "integer"}}}]}, '{"a": str, "b?": int}'),
    ({"type": "object", "properties": {"a": {"type": "object", "properties": {
        "b": {"type": "object", "properties": {"c": {"type": "integer"}}}}}}},
     '{"a?": {"b?": dict}}'),
])
def test_type_text(schema: dict, expected: str) -> None:
    assert type_text(schema) == expected


def test_refs_resolve_through_defs_and_definitions() -> None:
    s = sig({"mode": {"$ref": "#/$defs/Mode"}, "point": {"$ref": "#/definitions/Point"},
             "gone": {"$ref": "#/$defs/Missing"}, "remote": {"$ref": "https://x/y.json"}},
            required=["mode", "point"],
            **{"$defs": {"Mode": {"enum": ["r", "w"], "description": "Open mode."}},
               "definitions": {"Point": {"type": "object", "required": ["x", "y"], "properties": {
                   "x": {"type": "number"}, "y": {"type": "number"}}}}})
    assert s.def_line() == ('def tool(mode: Literal["r", "w"], point: {"x": float, "y": float}, '
                            "gone: Any = None, remote: Any = None) -> Any")
    assert param(s, "mode").description == "Open mode."


def test_recursive_refs_end() -> None:
    tree = {"type": "object", "properties": {"name": {"type": "string"},
                                             "children": {"type": "array",
                                                          "items": {"$ref": "#/$defs/Node"}}}}
    s = sig({"root": {"$ref": "#/$defs/Node"}, "self": {"$ref": "#"}}, required=["root"],
            **{"$defs": {"Node": tree, "Loop": {"$ref": "#/$defs/Loop"}}})
    assert param(s, "root").type == '{"name?": str, "children?": list[dict]}'
    assert type_text({"$ref": "#/$defs/Loop", "$defs": {"Loop": {"$ref": "#/$defs/Loop"}}}) \
        == "Any"
    assert_valid_python(s)


def test_long_types_degrade_and_docstring_names_the_keys() -> None:
    wide = {f"field_number_{i}": {"type": "string"} for i in range(12)}
    s = sig({"config": {"type": "object", "properties": wide, "description": "Settings."}},
            required=["config"])
    config = param(s, "config")
    assert config.type == "dict"
    assert config.description.startswith("Settings. Keys: field_number_0?, field_number_1?")
    assert config.description.endswith("…")


def test_large_enums_read_as_their_base_type_with_values_in_the_docstring() -> None:
    s = sig({"country": {"type": "string", "enum": [f"C{i}" for i in range(30)],
                         "description": "Country code."}}, required=["country"])
    country = param(s, "country")
    assert country.type == "str"
    assert country.description.startswith('Country code. One of: "C0", "C1", "C2"')


def test_format_hints_show_in_the_docstring() -> None:
    s = sig({"id": {"type": "string", "format": "uuid", "description": "Row id."},
             "when": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}})
    assert param(s, "id").description == "(uuid) Row id."
    assert param(s, "when").description == "(date-time)"
    assert "id: (uuid) Row id." in s.text()


# --- parameters and defaults -------------------------------------------------------------


def test_required_first_then_optionals_with_defaults() -> None:
    s = sig({"head": {"type": "integer"}, "path": {"type": "string"},
             "encoding": {"type": "string", "default": "utf-8"},
             "follow": {"type": "boolean", "default": False},
             "opts": {"type": "object", "default": {"a": [1, 2]}},
             "blob": {"type": "string", "default": "x" * 100},
             "tag": {"type": ["string", "null"], "default": None}},
            required=["path"])
    assert s.def_line() == (
        'def tool(path: str, head: int | None = None, encoding: str = "utf-8", '
        'follow: bool = False, opts: dict = {"a": [1, 2]}, blob: str = ..., '
        "tag: str | None = None) -> Any")
    enc = param(s, "encoding")
    assert (enc.required, enc.has_default, enc.default, enc.original) == (
        False, True, "utf-8", "encoding")
    head = param(s, "head")
    assert (head.has_default, head.default, head.type) == (False, None, "int")


def test_required_param_with_a_default_stays_required() -> None:
    s = sig({"q": {"type": "string", "default": "x"}}, required=["q", "unlisted"])
    assert s.def_line() == "def tool(q: str, unlisted: Any) -> Any"


def test_malformed_schemas_never_raise() -> None:
    for schema in [None, [], "x", {"properties": []}, {"properties": {"a": 5}},
                   {"required": "a"}, {"required": [1, None, "b"]},
                   {"properties": {"a": {"type": 3, "enum": "x", "items": 4}}},
                   {"$ref": "#/nope"}, {"allOf": [{"properties": [1]}, 3]},
                   {"properties": {"a": {"anyOf": "x", "oneOf": []}}}]:
        s = signature(ToolSpec("srv", "t", "", schema))  # type: ignore[arg-type]
        assert_valid_python(s)


def test_root_ref_and_all_of_give_parameters() -> None:
    s = signature(ToolSpec("srv", "t", "", {
        "$ref": "#/$defs/Args", "$defs": {"Args": {"allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}}]}}}))
    assert s.def_line() == "def t(a: str, b: int | None = None) -> Any"


# --- summaries and docstrings ------------------------------------------------------------


@pytest.mark.parametrize(("description", "expected"), [
    ("Read a file. Then more.", "Read a file."),
    ("\n    Read the contents of\n    multiple files.\n\n    Details.",
     "Read the contents of multiple files."),
    ("Search things, e.g. books. More.", "Search things, e.g. books."),
    ("List tools:\n- one\n- two", "List tools:"),
    ("## Create page\nBody.", "Create page Body."),
    ("Version 1.2 is used. Next.", "Version 1.2 is used."),
    ("", ""),
    ("No period here", "No period here"),
])
def test_summary_line(description: str, expected: str) -> None:
    assert summary_line(description) == expected


def test_summary_line_truncates_at_a_word() -> None:
    line = summary_line("word " * 50, limit=30)
    assert len(line) <= 30 and line.endswith("…") and " wor…" not in line


def test_text_is_compact_valid_python_with_args() -> None:
    s = sig({"path": {"type": "string", "description": "File   path,\n relative."},
             "quiet": {"type": "boolean"}}, required=["path"],
            description='Read a file. Uses """quotes""" and C:\\temp\\x.')
    assert s.text() == (
        'def tool(path: str, quiet: bool | None = None) -> Any:\n'
        '    """Read a file.\n'
        "    Args:\n"
        "        path: File path, relative.\n"
        '    """')
    assert s.summary == "Read a file."
    assert s.doc == "Read a file.\nArgs:\n    path: File path, relative."
    quoted = sig({}, description='Say "hi"')
    assert quoted.text() == 'def tool() -> Any:\n    """Say "hi\\""""'
    assert ast.literal_eval(ast.parse(quoted.text()).body[0].body[0].value) == 'Say "hi"'
    odd = sig({"a": {"type": "string", "description": 'ends """ \\N{x} \\'}})
    assert_valid_python(odd)
    assert ast.get_docstring(ast.parse(odd.text()).body[0]).endswith('a: ends """ \\N{x} \\')


def test_long_param_descriptions_keep_whole_sentences() -> None:
    long = "Maximum number of results. " + "Very long explanation " * 10
    s = sig({"n": {"type": "integer", "description": long},
             "m": {"type": "integer", "description": "(Optional) " + "word " * 40}})
    assert param(s, "n").description == "Maximum number of results."
    m = param(s, "m").description
    assert m.startswith("word word") and m.endswith("…") and len(m) <= 80


def test_param_docs_come_from_an_args_section_when_the_schema_has_none() -> None:
    description = """Get a policy.

    Args:
        policy_id: The ID of the policy
            to retrieve.
        verbose (bool): Include details.

    Returns:
        The policy.
    """
    s = sig({"policy_id": {"type": "string", "title": "Policy Id"},
             "verbose": {"type": "boolean", "description": "From the schema."}},
            required=["policy_id"], description=description)
    assert param(s, "policy_id").description == "The ID of the policy to retrieve."
    assert param(s, "verbose").description == "From the schema."
    assert s.summary == "Get a policy."


# --- the recorded toolspace --------------------------------------------------------------


def toolspace() -> list[ToolSpec]:
    if not TOOLSPACE.is_dir():
        pytest.skip(f"no recorded toolspace at {TOOLSPACE} (the shared checkout is absent)")
    return list(Catalog.from_snapshots(TOOLSPACE))


def test_every_recorded_tool_gets_a_valid_compact_signature() -> None:
    specs = toolspace()
    assert len(specs) > 1000
    sizes = []
    for spec in specs:
        s = signature(spec)
        ast.parse(s.def_line() + ": ...")
        assert_valid_python(s)
        assert "\n" not in s.summary and len(s.summary) <= 100
        call = {p.name: i for i, p in enumerate(s.params)}
        assert s.to_arguments(call) == {p.original: i for i, p in enumerate(s.params)}
        sizes.append(len(s.text()))
    # A regression guard on compactness: measured at ~430 mean, ~1,100 p95.
    assert statistics.mean(sizes) < 500
    assert sorted(sizes)[int(0.95 * len(sizes))] < 1300


# --- generated schemas -------------------------------------------------------------------

NAMES = st.one_of(st.sampled_from(["a", "from", "api-version", "api_version", "2fa", "$meta",
                                   "x.y", "", " ", "None", "é", "__debug__", "type"]),
                  st.text(max_size=8))
DEF_NAMES = st.sampled_from(["A", "B", "C~1", "with space", "Missing"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=6),
                    st.floats(allow_nan=True, allow_infinity=True))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)


def refs() -> st.SearchStrategy[dict]:
    return st.one_of(st.builds(lambda n: {"$ref": f"#/$defs/{n}"}, DEF_NAMES),
                     st.builds(lambda n: {"$ref": f"#/definitions/{n}"}, DEF_NAMES),
                     st.sampled_from([{"$ref": "#"}, {"$ref": "#/properties/a"},
                                      {"$ref": "other.json#/x"}, {"$ref": 7}]))


LEAVES = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(
        ["string", "integer", "number", "boolean", "null", "object", "array", "bogus"])),
    st.builds(lambda ts: {"type": ts}, st.lists(st.sampled_from(
        ["string", "integer", "null", "object", "array"]), max_size=3)),
    st.builds(lambda vs: {"enum": vs}, st.lists(SCALARS | JSON, max_size=12)),
    st.builds(lambda v: {"const": v}, JSON),
    st.builds(lambda f: {"type": "string", "format": f}, st.text(max_size=20)),
    refs(),
    st.sampled_from([{}, True, False, None, 3, "x", []]),
)


def extend(inner: st.SearchStrategy) -> st.SearchStrategy:
    props = st.dictionaries(NAMES, inner, max_size=4)
    return st.one_of(
        st.builds(lambda p, r: {"type": "object", "properties": p, "required": r},
                  props, st.lists(NAMES, max_size=3)),
        st.builds(lambda i: {"type": "array", "items": i}, inner),
        st.builds(lambda i: {"prefixItems": i}, st.lists(inner, max_size=3)),
        st.builds(lambda i: {"type": "object", "additionalProperties": i}, inner),
        st.builds(lambda k, m: {k: m}, st.sampled_from(["anyOf", "oneOf", "allOf"]),
                  st.lists(inner, max_size=3)),
        st.builds(lambda s, d, n: {**s, "default": d, "nullable": n} if isinstance(s, dict)
                  else s, inner, JSON, st.booleans()),
    )


SCHEMAS = st.recursive(LEAVES, extend, max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(props=st.dictionaries(NAMES, SCHEMAS, max_size=6), required=st.lists(NAMES, max_size=4),
       defs=st.dictionaries(DEF_NAMES, SCHEMAS, max_size=4), description=st.text(max_size=60),
       tool_name=NAMES)
def test_generated_schemas_give_valid_signatures(props: dict, required: list, defs: dict,
                                                 description: str, tool_name: str) -> None:
    schema = {"type": "object", "properties": props, "required": required,
              "$defs": defs, "definitions": defs}
    s = signature(ToolSpec("srv", tool_name, description, schema))
    assert_valid_python(s)
    assert [p.required for p in s.params] == sorted((p.required for p in s.params), reverse=True)
    assert {p.original for p in s.params} == set(props) | set(required)
    call = {p.name: i for i, p in enumerate(s.params)}
    assert s.to_arguments(call) == {p.original: i for i, p in enumerate(s.params)}


@settings(max_examples=200, deadline=None)
@given(SCHEMAS)
def test_generated_types_are_python_expressions(schema: Any) -> None:
    text = type_text(schema, {"$defs": {"A": schema, "B": {"$ref": "#/$defs/A"}}})
    ast.parse(text, mode="eval")


@pytest.mark.parametrize(("output_schema", "expected"), [
    (None, "Any"),
    ({"type": "object", "properties": {"result": {"type": "integer"}}}, "int"),
    # The filesystem server's wrapper: ToolResult.value() hands back the string.
    ({"type": "object", "properties": {"content": {"type": "string"}},
      "required": ["content"]}, "str"),
    ({"type": "object", "properties": {"text": {"$ref": "#/$defs/T"}},
      "$defs": {"T": {"type": "string"}}}, "str"),
    # One field that is not a string stays an object: its name says what the list holds.
    ({"type": "object", "properties": {"entities": {"type": "array",
                                                    "items": {"type": "string"}}},
      "required": ["entities"]}, '{"entities": list[str]}'),
    ({"type": "object", "properties": {"path": {"type": "string"},
                                       "size": {"type": "integer"}},
      "required": ["path", "size"]}, '{"path": str, "size": int}'),
])
def test_return_type_reads_the_result_as_value_unwraps_it(output_schema: Any,
                                                          expected: str) -> None:
    assert return_type(output_schema) == expected
