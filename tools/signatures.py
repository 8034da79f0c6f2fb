"""Compact Python signatures for MCP tools, as the model sees them in the sandbox.

``signature(tool)`` turns a tool's JSON Schema into a ``def`` line and a short docstring::

    def read_file(path: str, head: int | None = None) -> str:
        \"\"\"Read the complete contents of a file.
        Args:
            head: If provided, returns only the first N lines of the file
        \"\"\"

Types are the readable text of ``tools.schema_types``. The return type is the tool's
``outputSchema`` read the way ``ToolResult.value()`` unwraps the result: an object reads as
``{"path": str, "size": int}``, FastMCP's ``{"result": X}`` wrapper as ``X``, an object of
one string field as ``str``; a tool that
declares no schema returns ``Any``. Parameter names that are not
Python identifiers (``api-version``, ``from``, ``$meta``) get stable identifiers, and
``Signature.to_arguments`` maps a call's keyword arguments back to the JSON names. The
docstring lists only parameters with something to say; the ``def`` line carries the types.
Nothing here raises on a malformed schema: the worst case is ``def tool() -> Any``.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from deskmate.tools.schema_types import (
    deref,
    enum_values,
    format_hint,
    merge_all_of,
    object_keys,
    py_literal,
    type_text,
)
from deskmate.tools.spec import ToolSpec

SUMMARY_CHARS = 100
RETURN_CHARS = 70  # a longer result type reads plainer (``dict``): the index budget
PARAM_DOC_CHARS = 80  # one Args line's description
NOTE_CHARS = 60  # the allowed values or the keys of a parameter, when its type omits them
DEFAULT_CHARS = 30  # longer defaults read as ``...``


@dataclass(frozen=True)
class Param:
    name: str  # the Python identifier the model writes
    original: str  # the JSON property name the server expects
    type: str = "Any"
    required: bool = False
    default: Any = None
    has_default: bool = False  # ``default`` is meaningful only when this is set
    description: str = ""  # its line in the docstring: trimmed, with format, values, keys

    def text(self) -> str:
        """This parameter as it appears in the ``def`` line."""
        if self.required:
            return f"{self.name}: {self.type}"
        kind = self.type
        if self.has_default and self.default is not None:
            value = py_literal(self.default, DEFAULT_CHARS)
        else:  # absent means "leave it out": written ``= None``, so it must admit None
            value = "None"
            if kind != "Any" and kind != "None" and not kind.endswith(" | None"):
                kind += " | None"
        return f"{self.name}: {kind} = {value}"


@dataclass(frozen=True)
class Signature:
    server: str
    tool: str  # the MCP tool name
    name: str  # its Python identifier
    params: tuple[Param, ...] = ()
    summary: str = ""  # one line
    doc: str = ""  # the docstring's text: summary, then an ``Args:`` block
    returns: str = "Any"  # the type text of what a call gives back

    def call_text(self) -> str:
        """``name(a: str, b: int | None = None)``: the call without its return type (the
        one-line form ``search_tools`` lists)."""
        return f"{self.name}({', '.join(p.text() for p in self.params)})"

    def def_line(self) -> str:
        """``def name(a: str, b: int | None = None) -> Any``: valid Python, no colon."""
        return f"def {self.call_text()} -> {self.returns}"

    def text(self) -> str:
        """The ``def`` line with its docstring, as ``tool_help`` shows it (valid Python)."""
        body = self.doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
        if "\n" not in body:
            if body.endswith('"'):
                body = body[:-1] + '\\"'
            return f'{self.def_line()}:\n    """{body}"""'
        lines = "\n".join(f"    {line}" if line else "" for line in body.split("\n"))
        return f'{self.def_line()}:\n    """{lines.lstrip()}\n    """'

    def to_arguments(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments by Python name → the tool's arguments by JSON name.

        An optional parameter passed as None with no default of its own is left out (its
        ``= None`` means "not given"). Names that are not parameters pass through
        unchanged, for the host's schema check to report.
        """
        by_name = {p.name: p for p in self.params}
        arguments: dict[str, Any] = {}
        for key, value in kwargs.items():
            param = by_name.get(key)
            if param is None:
                arguments[key] = value
            elif value is None and not param.required and not param.has_default:
                continue
            else:
                arguments[param.original] = value
        return arguments


def py_identifier(name: str) -> str:
    """A valid, stable Python identifier for a tool or parameter name.

    Accents are dropped and every other run of non-identifier characters becomes one
    ``_`` (ASCII only, because Python NFKC-normalizes non-ASCII identifiers); keywords
    get a trailing ``_`` and a leading digit a leading ``_``.
    """
    ascii_name = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode()
    ident = re.sub(r"[^0-9A-Za-z_]+", "_", ascii_name) or "_"
    if ident[0].isdigit():
        ident = "_" + ident
    if keyword.iskeyword(ident) or ident == "__debug__":
        ident += "_"  # soft keywords (``type``, ``match``) are fine as names
    return ident


def summary_line(description: str, limit: int = SUMMARY_CHARS) -> str:
    """The first sentence of the first paragraph, on one line, at most ``limit`` chars."""
    lines: list[str] = []
    for raw in _clean(description).split("\n"):
        line = raw.strip()
        if not line:
            if lines:
                break
            continue
        if lines and re.match(r"([-*+]|\d+[.)]|#+)\s|\w+:$", line):
            break  # a list, heading or section starts: the paragraph is over
        lines.append(line)
    text = re.sub(r"^#+\s*|\*\*|__", "", " ".join(lines))
    return _trim(_first_sentence(" ".join(text.split())), limit)


def signature(tool: ToolSpec) -> Signature:
    """The compact signature of ``tool``; never raises on a malformed schema."""
    root = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    schema = deref(root, root)
    if isinstance(schema, dict) and isinstance(schema.get("allOf"), list):
        schema = merge_all_of(schema)
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = schema.get("required")
    required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    originals = list(props) + [r for r in dict.fromkeys(required) if r not in props]
    names = _python_names(originals)
    described = _described_args(tool.description or "")
    params = [
        _param(original, names[original], props.get(original, {}), original in required,
               described.get(original, ""), root)
        for original in originals
    ]
    params.sort(key=lambda p: not p.required)  # stable: schema order within each group
    summary = summary_line(tool.description or "")
    doc = _docstring(summary, params)
    return Signature(server=tool.server, tool=tool.name, name=py_identifier(tool.name),
                     params=tuple(params), summary=summary, doc=doc,
                     returns=return_type(tool.output_schema))


def return_type(output_schema: Any) -> str:
    """The type text of a tool's result, from its ``outputSchema`` ("Any" when none).

    ``ToolResult.value()`` hands back structured content, with FastMCP's wrapper
    ``{"result": X}`` taken off: the type says the same, so ``count(text) -> int`` rather
    than ``-> {"result": int}``; an object of one string field (``{"content": str}``)
    reads as ``str``.
    """
    if not isinstance(output_schema, dict) or not output_schema:
        return "Any"
    schema = deref(output_schema, output_schema)
    props = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(props, dict) and list(props) == ["result"]:
        schema = props["result"]
    elif isinstance(props, dict) and len(props) == 1:
        # One string field is the text itself (ToolResult.value() hands back the string).
        (field,) = props.values()
        target = deref(field, output_schema)
        if isinstance(target, dict) and target.get("type") == "string":
            return "str"
    return type_text(schema, output_schema, max_chars=RETURN_CHARS)


def _param(original: str, name: str, schema: Any, required: bool, fallback: str,
           root: Any) -> Param:
    kind = type_text(schema, root)
    has_default = isinstance(schema, dict) and "default" in schema
    description = ""
    for source in (schema, deref(schema, root)):
        if isinstance(source, dict) and isinstance(source.get("description"), str):
            description = source["description"]
            break
    description = _trim_sentences(" ".join(_clean(description or fallback).split()),
                                  PARAM_DOC_CHARS)
    notes = [description] if description else []
    hint = format_hint(schema, root)
    if hint:
        notes.insert(0, f"({hint})")
    values = enum_values(schema, root)
    if values and "Literal[" not in kind:
        shown = ", ".join(py_literal(v, DEFAULT_CHARS) for v in values)
        notes.append(f"One of: {_trim(shown, NOTE_CHARS)}")
    # Keys the type did not spell out (too deep or too long to read): name them here.
    keys = [] if "{" in kind else [_clean(key) for key in object_keys(schema, root)]
    if keys:
        notes.append(f"Keys: {_trim(', '.join(keys), NOTE_CHARS)}")
    description = " ".join(" ".join(notes).split())  # keys can hold any character

    return Param(name=name, original=original, type=kind, required=required,
                 default=schema.get("default") if has_default else None,
                 has_default=has_default, description=description)


def _python_names(originals: list[str]) -> dict[str, str]:
    """Identifiers for all parameters of one tool, unique; names already valid keep theirs."""
    names = {o: o for o in originals if py_identifier(o) == o}
    taken = set(names.values())
    for original in originals:
        if original in names:
            continue
        base = candidate = py_identifier(original)
        suffix = 2
        while candidate in taken:
            candidate = f"{base}_{suffix}"
            suffix += 1
        names[original] = candidate
        taken.add(candidate)
    return names


def _docstring(summary: str, params: list[Param]) -> str:
    lines = [f"    {p.name}: {p.description}"
             for p in params if p.description]
    if not lines:
        return summary
    return "\n".join([summary, "Args:", *lines] if summary else ["Args:", *lines])


def _described_args(description: str) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section of a tool description.

    FastMCP servers often put them there instead of in the schema.
    """
    text = _clean(description)
    header = re.search(r"^([ \t]*)(?:Args|Arguments|Parameters|Params):[ \t]*$", text,
                       re.MULTILINE | re.IGNORECASE)
    if not header:
        return {}
    base = len(header.group(1).expandtabs())
    found: dict[str, str] = {}
    current, current_indent = "", 0
    for line in text[header.end():].split("\n"):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= base:
            break
        entry = re.match(r"\s*[-*]?\s*`?([\w.$-]+)`?\s*(?:\([^)]*\))?\s*:\s*(.*)", line)
        if entry and (not current or indent <= current_indent):
            current, current_indent = entry.group(1), indent
            found[current] = entry.group(2).strip()
        elif current:
            found[current] = f"{found[current]} {line.strip()}".strip()
    return found


_ABBREVIATIONS = {"e.g", "i.e", "etc", "vs", "approx", "incl", "eg", "ie", "cf", "no"}


def _first_sentence(text: str) -> str:
    for match in re.finditer(r"[.!?](?=\s|$)", text):
        word = text[: match.start()].rsplit(" ", 1)[-1].lower()
        if match.group() == "." and word.lstrip("(") in _ABBREVIATIONS:
            continue
        return text[: match.end()]
    return text


def _trim_sentences(text: str, limit: int) -> str:
    """Whole sentences of ``text`` while they fit in ``limit``, else a cut first sentence."""
    text = re.sub(r"^\(?optional\)?[.:,]?\s+", "", text, flags=re.IGNORECASE)
    if len(text) <= limit:
        return text
    kept, rest = "", text
    while rest:
        sentence = _first_sentence(rest)
        if len(kept) + len(sentence) + 1 > limit:
            break
        kept = f"{kept} {sentence}".lstrip()
        rest = rest[len(sentence):].lstrip()
    if not rest:
        return text
    return kept or _trim(text, limit)


def _trim(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, at a word boundary where one is near."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 1)]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-(") + "…"


def _clean(text: Any) -> str:
    """Text safe to put in source: control characters and lone surrogates removed."""
    text = str(text).replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    return _CONTROL.sub("", text)


# C0/C1 controls except newline (NUL cannot be in source at all) and lone surrogates
# (which cannot be encoded).
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
