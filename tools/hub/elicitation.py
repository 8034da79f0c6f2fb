"""A server's question to the user (MCP elicitation), and who answers it.

A tool may ask the user for something mid-call: a small form (a flat JSON Schema of
strings, numbers, integers, booleans and enums, single or multiple choice) or, in URL
mode, consent to open a link (a sign-in, a payment). The hub turns the SDK's request
into an ``ElicitRequest`` and hands it to an ``Asker``; the answer is an
``ElicitAnswer``: accept (with the form's content), decline or cancel.

Askers: the app's modal, ``deskmate run``'s terminal prompt, ``decline`` (headless
runs, eval, training: no one is there to ask) and ``AcceptDefaults`` (accepts every
form with its schema's defaults: the conformance driver's answerer). The hub calls an
asker on a worker thread, never on its event loop, so an asker may block while a person
thinks; the call's timeout is stopped meanwhile.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from deskmate.tools.hub.results import ToolCallError
from deskmate.tools.policy import DecidedBy

Action = Literal["accept", "decline", "cancel"]
FieldKind = Literal["string", "number", "integer", "boolean", "enum", "multi"]
Answer = str | int | float | bool | list[str]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class UnsupportedForm(ValueError):
    """The requested schema is not a flat form deskmate can show."""


class LinkRefused(ToolCallError):
    """A call that needs the user to open a link first, and they did not."""


class BadAnswer(ValueError):
    """One field's answer does not fit its schema; ``name`` is the field."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(f"{name}: {message}")


@dataclass(frozen=True)
class ElicitField:
    """One property of a form, as the schema declares it."""

    name: str
    kind: FieldKind
    title: str = ""  # the schema's title, else the name
    description: str = ""
    required: bool = False
    default: Answer | None = None
    options: tuple[tuple[str, str], ...] = ()  # (value, label) of an enum or multi
    format: str = ""  # email, uri, date, date-time (strings)
    minimum: float | None = None  # numbers; string lengths use min_length/max_length
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None  # multi
    max_items: int | None = None

    @property
    def label(self) -> str:
        return self.title or self.name


@dataclass(frozen=True)
class ElicitRequest:
    """What a server asks, with where it comes from."""

    server: str
    message: str
    mode: Literal["form", "url"] = "form"
    fields: tuple[ElicitField, ...] = ()  # form mode
    schema: Mapping[str, Any] = field(default_factory=dict)  # form mode, as sent
    url: str = ""  # url mode
    elicitation_id: str = ""  # url mode
    tool: str = ""  # the tool call it arrived during ("" if none was running)

    @property
    def host(self) -> str:
        """The URL's host, what a person should check before opening it."""
        return urlsplit(self.url).hostname or ""


@dataclass(frozen=True)
class ElicitAnswer:
    action: Action
    content: Mapping[str, Answer] = field(default_factory=dict)  # accepted forms only
    decided_by: DecidedBy = "user"
    reason: str = ""  # why, when no person answered (no one to ask, timed out)


class Asker(Protocol):
    """Answers a server's question; may block (it runs on a worker thread)."""

    def __call__(self, request: ElicitRequest) -> ElicitAnswer: ...


def decline(request: ElicitRequest) -> ElicitAnswer:
    """The asker where no person can answer: headless runs, eval, training."""
    return ElicitAnswer("decline", decided_by="policy", reason="no one can be asked here")


class AcceptDefaults:
    """Accepts every form with its schema's defaults (and URL requests without opening
    anything): for drivers that test the protocol, never for a user's session."""

    def __call__(self, request: ElicitRequest) -> ElicitAnswer:
        return ElicitAnswer("accept", defaults(request.fields), decided_by="policy",
                            reason="accepted with the defaults")


# ---------------------------------------------------------------- the SDK's request

def from_params(server: str, params: Any, tool: str = "") -> ElicitRequest:
    """An ``ElicitRequest`` from the SDK's ``ElicitRequestFormParams`` or
    ``ElicitRequestURLParams``; ``UnsupportedForm`` if the form cannot be shown."""
    if getattr(params, "mode", "form") == "url":
        return ElicitRequest(server, params.message, "url", url=params.url,
                             elicitation_id=params.elicitation_id, tool=tool)
    schema = dict(params.requested_schema or {})
    return ElicitRequest(server, params.message, "form", parse_form(schema), schema,
                         tool=tool)


def parse_form(schema: Mapping[str, Any]) -> tuple[ElicitField, ...]:
    """The fields of a flat object schema, in the order the server gave them."""
    properties = schema.get("properties") or {}
    if schema.get("type", "object") != "object" or not isinstance(properties, Mapping):
        raise UnsupportedForm("the requested schema is not an object of properties")
    required = set(schema.get("required") or ())
    return tuple(_field(name, prop, name in required) for name, prop in properties.items())


def _field(name: str, prop: Any, required: bool) -> ElicitField:
    if not isinstance(prop, Mapping):
        raise UnsupportedForm(f"property {name!r} is not a schema")
    kind = prop.get("type")
    common: dict[str, Any] = dict(name=name, title=str(prop.get("title") or ""),
                                  description=str(prop.get("description") or ""),
                                  required=required, default=prop.get("default"))
    options = _options(prop)
    if kind == "string" and options:
        return ElicitField(kind="enum", options=options, **common)
    if kind == "string":
        return ElicitField(kind="string", format=str(prop.get("format") or ""),
                           min_length=prop.get("minLength"), max_length=prop.get("maxLength"),
                           **common)
    if kind in ("number", "integer"):
        return ElicitField(kind=kind, minimum=prop.get("minimum"), maximum=prop.get("maximum"),
                           **common)
    if kind == "boolean":
        return ElicitField(kind="boolean", **common)
    items = _options(prop["items"]) if isinstance(prop.get("items"), Mapping) else ()
    if kind == "array" and items:
        return ElicitField(kind="multi", options=items, min_items=prop.get("minItems"),
                           max_items=prop.get("maxItems"), **common)
    raise UnsupportedForm(f"property {name!r} ({kind or 'no type'}) is not a string, number, "
                          "integer, boolean or enum: deskmate shows flat forms only")


def _options(prop: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The choices of an enum: ``enum`` (labels from ``enumNames``), or ``oneOf`` /
    ``anyOf`` of ``{"const", "title"}``."""
    if isinstance(prop.get("enum"), list):
        values = [str(v) for v in prop["enum"]]
        names = prop.get("enumNames")
        labels = [str(n) for n in names] if isinstance(names, list) and len(
            names) == len(values) else values
        return tuple(zip(values, labels, strict=True))
    for key in ("oneOf", "anyOf"):
        if isinstance(prop.get(key), list):
            return tuple((str(o["const"]), str(o.get("title") or o["const"]))
                         for o in prop[key] if isinstance(o, Mapping) and "const" in o)
    return ()


# ---------------------------------------------------------------- answers

def defaults(fields: tuple[ElicitField, ...]) -> dict[str, Answer]:
    """The schema's defaults, for the fields that have one."""
    return {f.name: f.default for f in fields if f.default is not None}


def check_answer(fields: tuple[ElicitField, ...],
                 values: Mapping[str, Any]) -> dict[str, Answer]:
    """The content to send for ``values`` (text from a form or a terminal is converted
    to the field's type); ``BadAnswer`` names the first field that does not fit. Empty
    optional fields are left out."""
    content: dict[str, Answer] = {}
    for f in fields:
        value = values.get(f.name)
        if value is None or value == "" or value == []:
            if f.required:
                raise BadAnswer(f.label, "required")
            continue
        content[f.name] = _check(f, value)
    return content


def _check(f: ElicitField, value: Any) -> Answer:
    if f.kind == "boolean":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("y", "yes", "true", "1"):
            return True
        if text in ("n", "no", "false", "0"):
            return False
        raise BadAnswer(f.label, "answer yes or no")
    if f.kind in ("number", "integer"):
        return _number(f, value)
    if f.kind == "enum":
        return _choice(f, str(value))
    if f.kind == "multi":
        chosen = [_choice(f, str(v)) for v in (
            value if isinstance(value, list) else str(value).split(","))]
        if f.min_items is not None and len(chosen) < f.min_items:
            raise BadAnswer(f.label, f"choose at least {f.min_items}")
        if f.max_items is not None and len(chosen) > f.max_items:
            raise BadAnswer(f.label, f"choose at most {f.max_items}")
        return chosen
    return _string(f, str(value))


def _number(f: ElicitField, value: Any) -> int | float:
    try:
        number: int | float = int(str(value).strip()) if f.kind == "integer" else float(
            str(value).strip())
    except ValueError:
        what = "a whole number" if f.kind == "integer" else "a number"
        raise BadAnswer(f.label, f"expected {what}, got {value!r}") from None
    if f.minimum is not None and number < f.minimum:
        raise BadAnswer(f.label, f"at least {f.minimum:g}")
    if f.maximum is not None and number > f.maximum:
        raise BadAnswer(f.label, f"at most {f.maximum:g}")
    return number


def _choice(f: ElicitField, value: str) -> str:
    value = value.strip()
    for option, label in f.options:
        if value in (option, label):
            return option
    raise BadAnswer(f.label, f"choose one of {', '.join(label for _, label in f.options)}")


def _string(f: ElicitField, text: str) -> str:
    if f.min_length is not None and len(text) < f.min_length:
        raise BadAnswer(f.label, f"at least {f.min_length} characters")
    if f.max_length is not None and len(text) > f.max_length:
        raise BadAnswer(f.label, f"at most {f.max_length} characters")
    if f.format == "email" and not _EMAIL.match(text):
        raise BadAnswer(f.label, "expected an email address")
    if f.format == "uri" and not urlsplit(text).scheme:
        raise BadAnswer(f.label, "expected a URL, e.g. https://example.com")
    if f.format == "date":
        try:
            date.fromisoformat(text)
        except ValueError:
            raise BadAnswer(f.label, "expected a date as YYYY-MM-DD") from None
    return text
