"""A call's arguments against its tool: the schema check, and the messages that show the
call to write instead (names by keyword, the parameter meant) — what the bridge says
when it refuses a call before it leaves for the server."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from deskmate.app.agent.tool_errors import Tools, shape_hint
from deskmate.tools.sandbox import ToolError
from deskmate.tools.signatures import Signature, py_identifier
from deskmate.tools.spec import ToolSpec
from deskmate.tools.suggest import did_you_mean


class BridgeError(ToolError):
    """Refused or failed; the sandbox raises it in the model's code as ToolError."""


class Refused(BridgeError):
    """Not run for what it would do (overwrite.py), its arguments bound as meant."""


def validate(spec: ToolSpec, sig: Signature, arguments: dict[str, Any],
              tools: Tools | None = None, server: str = "") -> None:
    """Refuse arguments the tool's schema does not admit, with the hint ``tools`` (the
    session's) give for the refused part (tool_errors.shape_hint)."""
    from jsonschema import exceptions, validators

    schema = spec.input_schema or {"type": "object"}
    try:
        validator_cls = validators.validator_for(schema)
        validator = validator_cls(schema)
        error = exceptions.best_match(validator.iter_errors(arguments))
    except exceptions.SchemaError:
        return  # the server's schema is broken; let the server judge the call
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        hint = shape_hint(tools or {}, server, sig, str(error.validator),
                          error.validator_value, error.instance)
        raise BridgeError(f"bad arguments for {sig.name}: {error.message}"
                          + (f" (at {where})" if where else "")
                          + f"\nSignature: {sig.def_line()}{hint}")


def binding(server: str, sig: Signature, args: list[Any], error: str) -> str:
    """How positional ``args`` were bound, the signature (unless ``error`` showed it),
    and the call with names."""
    bound = ", ".join(f"{p.name}={_short(a)}" for p, a in zip(sig.params, args, strict=False))
    shown = "" if "Signature: " in error else f"Signature: {sig.def_line()}\n"
    return (f"Your positional arguments were bound in signature order: {bound}.\n{shown}"
            f"Pass each by name instead, e.g. {example_call(server, sig)}")


def example_call(server: str, sig: Signature) -> str:
    """``time.convert_time(source_timezone="...", time="...")``: a call with every required
    parameter by name, for errors to show the form that cannot bind wrongly."""
    params = [p for p in sig.params if p.required] or list(sig.params[:1])
    args = ", ".join(f"{p.name}={_placeholder(p.type)}" for p in params)
    return f"{py_identifier(server)}.{sig.name}({args})"


def _placeholder(kind: str) -> str:
    for prefix, value in (("str", '"..."'), ("int", "0"), ("float", "0.0"), ("bool", "True"),
                          ("list", "[...]"), ("dict", "{...}")):
        if kind.startswith(prefix):
            return value
    return "..."


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def name_hint(name: str, known: Iterable[str]) -> str:
    """`` — did you mean 'a' or 'b'?``, to follow the name the model got wrong."""
    suggestion = did_you_mean(name, known, n=2, cutoff=0.5)
    return f" — {suggestion}" if suggestion else ""
