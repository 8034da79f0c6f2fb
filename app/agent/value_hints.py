"""Hints that rewrite a refused call with the value likely meant, as a call to copy:
the form a parameter's documentation writes (IANA zones: 'New York' →
'America/New_York'), the part of a value in the documented format (HH:MM in a
timestamp), the request's path with its leading '/'. Small models read "must be an IANA
name" and answer that the tool failed; a corrected call is what they copy."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deskmate.app.agent.request import name_words
from deskmate.app.agent.tool_errors import EXISTS, PATH_WORDS, Tools
from deskmate.tools.signatures import Param, Signature, py_identifier
from deskmate.tools.spec import ToolSpec

# A value quoted in a parameter's description ("IANA timezone name (e.g., 'Asia/Tokyo')").
QUOTED = re.compile(r"""'([^'\n]{2,60})'|"([^"\n]{2,60})"|`([^`\n]{2,60})`""")


def value_hint(tools: Tools, server: str, spec: ToolSpec, sig: Signature,
               arguments: Mapping[str, Any], error: str) -> str:
    """For an error that quotes a value the call gave (``Invalid timezone: 'New York'``):
    the form the parameter's description shows ('America/New_York'), and the call with
    every value rewritten to the example it names. Small models read "must be an IANA
    name" in the docs, then answer that the tool failed; the corrected call is what they
    copy. Examples come from the parameter's own description, then from the server's
    parameters that share a word of its name (a tool's ``timezone`` and another's
    ``target_timezone``)."""
    refused, fixed = _refused(tools, server, spec, sig, arguments, error)
    if not refused:
        return ""
    param = refused[0]
    if param.original in fixed:
        return (f"\nHint: {param.name}={arguments[param.original]!r} {VALUE_WHY}; likely meant: "
                f"{call_with(server, sig, arguments, fixed)}")
    shown = examples(tools, server, spec, param.original)[:3]
    if not shown:
        return ""
    return (f"\nHint: {param.name}={arguments[param.original]!r} was refused; write it in "
            f"the form of the documentation's examples: {', '.join(map(repr, shown))}")


VALUE_WHY = "is not written the way the documentation's examples are"


def meant_values(tools: Tools, server: str, spec: ToolSpec, sig: Signature,
                 arguments: Mapping[str, Any], error: str) -> dict[str, Any]:
    """The values ``value_hint``'s call rewrites (by JSON name); {} when it writes none."""
    refused, fixed = _refused(tools, server, spec, sig, arguments, error)
    return fixed if refused and refused[0].original in fixed else {}


def _refused(tools: Tools, server: str, spec: ToolSpec, sig: Signature,
             arguments: Mapping[str, Any], error: str) -> tuple[list[Param], dict[str, Any]]:
    """The parameters whose given text the error quotes, and every given text's
    documented form where it differs (by JSON name)."""
    if EXISTS.search(error):
        return [], {}  # the value is fine; the thing it names is already there
    refused = [p for p in sig.params if _given_text(arguments.get(p.original))
               and arguments[p.original] in error and not p.name.lower().endswith(PATH_WORDS)]
    if not refused:
        return [], {}
    fixed = {p.original: meant for p in sig.params
             if _given_text(arguments.get(p.original))
             and (meant := _meant_value(arguments[p.original],
                                        examples(tools, server, spec, p.original)))}
    return refused, fixed


def call_with(server: str, sig: Signature, arguments: Mapping[str, Any],
              fixed: Mapping[str, Any] | None = None) -> str:
    """The call as made, its arguments by name, with the values of ``fixed`` (by JSON
    name) in place of the ones given: the line a hint gives to copy."""
    fixed = fixed or {}
    args = ", ".join(f"{p.name}={fixed.get(p.original, arguments.get(p.original))!r}"
                     for p in sig.params if p.original in arguments or p.original in fixed)
    return f"{py_identifier(server)}.{sig.name}({args})"


def leading_slash(server: str, sig: Signature, arguments: Mapping[str, Any],
                  said: str) -> str:
    """For a failed call given a path that is the user's absolute path without its
    leading '/' (``path='tmp/work'`` where the request says /tmp/work): the server read
    it as a folder inside its own root. The call with the paths the request wrote; small
    models copy a path from a request and drop the slash, then repeat the call."""
    return meant_call(server, sig, arguments, slashed_paths(sig, arguments, said),
                      SLASH_WHY)


SLASH_WHY = ("lacks the leading '/' of the path the request gives, so it was read inside "
             "the server's folder")


def slashed_paths(sig: Signature, arguments: Mapping[str, Any], said: str) -> dict[str, str]:
    """``leading_slash``'s rewrite: each path given without the leading '/' that the
    conversation (``said``) writes with it, by JSON name."""
    return {p.original: "/" + value for p in sig.params
            if (p.name.lower().endswith(PATH_WORDS) or p.name.lower() in ("source",
                                                                         "destination"))
            and isinstance(value := arguments.get(p.original), str)
            and value and not value.startswith(("/", "~", "."))
            and re.search(rf"(?<![\w/.-])/{re.escape(value.rstrip('/'))}(?![\w.-])", said)}


# A format a parameter's description names: HH:MM, YYYY-MM-DD, HH:MM:SS, YYYY-MM-DDTHH:MM.
FORMAT = re.compile(r"\b(?:YYYY|HH)(?:[-:/T ]?(?:YYYY|MM|DD|HH|SS))+\b")


def format_hint(server: str, sig: Signature, arguments: Mapping[str, Any]) -> str:
    """For a failed call given a value that holds what its parameter's format asks for
    without being it (a whole timestamp, '2026-12-03T17:19:30+09:00', where the
    description says HH:MM): the part that fits, in the call to copy. Small models pass
    a result's datetime on as it is, then repeat the call."""
    return meant_call(server, sig, arguments, formatted(sig, arguments), FORMAT_WHY)


FORMAT_WHY = "holds {fixed!r}, the form its documentation asks for"


def formatted(sig: Signature, arguments: Mapping[str, Any]) -> dict[str, str]:
    """``format_hint``'s rewrite: the part of each value in its documented format."""
    fixed: dict[str, str] = {}
    for param in sig.params:
        value = arguments.get(param.original)
        found = FORMAT.search(param.description or "")
        if not isinstance(value, str) or found is None:
            continue
        pattern = re.sub(r"YYYY|MM|DD|HH|SS",
                         lambda m: r"\d{4}" if m.group() == "YYYY" else r"\d{2}",
                         re.escape(found.group()).replace(r"\ ", " "))
        if re.fullmatch(pattern, value.strip()):
            continue
        inside = re.search(rf"(?<!\d){pattern}(?!\d)", value)
        if inside:
            fixed[param.original] = inside.group()
    return fixed


def meant_call(server: str, sig: Signature, arguments: Mapping[str, Any],
               fixed: Mapping[str, Any], why: str) -> str:
    """The hint for a call whose values ``fixed`` rewrites: the first value rewritten,
    ``why`` (``{fixed}`` is its new value), and the whole call to copy; "" for none."""
    first = next((p for p in sig.params if p.original in fixed), None)
    if first is None:
        return ""
    because = why.format(fixed=fixed[first.original])
    return (f"\nHint: {first.name}={arguments[first.original]!r} {because}; likely meant: "
            f"{call_with(server, sig, arguments, fixed)}")


def examples(tools: Tools, server: str, spec: ToolSpec, original: str) -> list[str]:
    """Values quoted in the description (and ``examples``, ``enum``) of ``original``,
    then of the server's parameters whose names end in the same word (``timezone`` and
    ``target_timezone``; not ``branch_name`` and ``branch_type``)."""
    kind = _kind(original)
    own = _schema_examples((spec.input_schema.get("properties") or {}).get(original))
    others = [value for (s, _), (other, _) in tools.items() if s == server
              for key, schema in (other.input_schema.get("properties") or {}).items()
              if isinstance(key, str) and _kind(key) == kind
              for value in _schema_examples(schema)]
    found = list(dict.fromkeys(own + others))
    # Examples that are IANA time zones stand for all of them, which Python knows: 'Los
    # Angeles' is none of 'America/New_York', 'Europe/London', but it is a zone's city.
    zones = _time_zones()
    if any("/" in value and value in zones for value in found):
        found += sorted(zones - set(found))
    return found


@functools.cache
def _time_zones() -> frozenset[str]:
    import zoneinfo

    try:
        return frozenset(zoneinfo.available_timezones())
    except Exception:  # no tz database on this machine: the examples alone
        return frozenset()


def _kind(name: str) -> str:
    """The last word of a parameter's name, which says what kind of value it is
    (``source_timezone``, ``targetTimezone``: timezone)."""
    words = name_words(name)
    return words[-1] if words else name.lower()


def _schema_examples(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    listed = [value for key in ("examples", "enum")
              if isinstance(values := schema.get(key), list)
              for value in values if isinstance(value, str)]
    description = schema.get("description")
    quoted = ([next(filter(None, m)) for m in QUOTED.findall(description)]
              if isinstance(description, str) else [])
    return listed + quoted


def _given_text(value: Any) -> bool:
    return isinstance(value, str) and len(value.strip()) >= 2


def _meant_value(value: str, candidates: list[str]) -> str | None:
    """The example whose words hold all of ``value``'s ('New York' → 'America/New_York',
    'tokyo' → 'Asia/Tokyo'); None when ``value`` is one of them or none fits."""
    if value in candidates:
        return None
    words = set(re.findall(r"[a-z0-9]+", value.lower()))
    if not words:
        return None
    fits = [c for c in candidates if words <= set(re.findall(r"[a-z0-9]+", c.lower()))]
    if not fits and "," in value:
        # A place with its country ("Auckland, New Zealand"): the zone is the city's
        # (Pacific/Auckland), which does not name the country.
        return _meant_value(value.split(",")[0], candidates)
    return min(fits, key=len) if fits else None


@dataclass(frozen=True)
class Repair:
    """A refused call's likely meaning, written whole: the bridge runs it in the refused
    call's place (bridge.py) and tells the model what it changed."""
    arguments: dict[str, Any]  # the call's arguments with the rewritten values (JSON names)
    param: str  # the first rewritten parameter (its Python name), its given value, and why
    given: Any
    why: str

    def note(self, server: str, sig: Signature, error: str) -> str:
        """What the model is told first in the cell's output: the call as it ran, and why."""
        reason = " ".join(error.split())[:160]
        return (f"Note: {self.param}={self.given!r} was refused ({reason}); it {self.why}. "
                f"{call_with(server, sig, self.arguments)} ran in its place, and the code "
                "went on with its result.")


def repair(tools: Tools, server: str, spec: ToolSpec, sig: Signature,
           arguments: Mapping[str, Any], error: str, said: str) -> Repair | None:
    """The call a refused one likely meant, where a hint writes it whole from the tool's
    own documentation or the user's words: a value in the documented form
    ('America/New_York' for 'New York'), the part of a value in the documented format,
    the request's path with its leading '/'. None when no hint writes a call. Small
    models told the fix often copy the error instead; a call that cannot be misread
    is safer run than explained."""
    rewrites = ((lambda: meant_values(tools, server, spec, sig, arguments, error), VALUE_WHY),
                (lambda: formatted(sig, arguments), FORMAT_WHY),
                (lambda: slashed_paths(sig, arguments, said), SLASH_WHY))
    for rewrite, why in rewrites:  # in the hints' order; the first that writes a call
        fixed = rewrite()
        first = next((p for p in sig.params if p.original in fixed), None)
        if first is not None:
            return Repair({**arguments, **fixed}, first.name, arguments[first.original],
                          why.format(fixed=fixed[first.original]))
    return None
