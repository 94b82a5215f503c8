"""Command-line flags generated from the parameters (``tsbench.parameters``, i.e. the specs' schemas).

``--<name-with-dashes>`` per parameter; lists are comma-separated, objects JSON, booleans
``--x``/``--no-x``. A flag left out is left to the spec's default; its help states the default,
the choices and the limits from the schema. Values are checked by the spec (every bad field named
at once), only a value of the wrong type is refused by argparse itself (naming the flag).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable
from typing import Any

from tsbench.parameters import Parameter


def flag(parameter: Parameter) -> str:
    return "--" + parameter.name.replace("_", "-")


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON ({error})") from None


def _list_of(convert: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    def parse(text: str) -> list[Any]:
        return [convert(item.strip()) for item in text.split(",") if item.strip()]

    parse.__name__ = f"comma-separated {convert.__name__}"  # argparse names it on a bad value
    return parse


SCALARS: dict[str, Callable[[str], Any]] = {"integer": int, "number": float, "string": str}


def converter(parameter: Parameter) -> Callable[[str], Any]:
    """What turns the flag's text into the parameter's value."""
    if parameter.kind == "array":
        return _list_of(SCALARS[parameter.item_kind or "string"])
    if parameter.kind == "object":
        return _json
    return SCALARS[parameter.kind]


def help_text(parameter: Parameter) -> str:
    """The schema's description with its choices and limits, and the default (``%`` escaped)."""
    text = parameter.description()
    if parameter.kind == "array" and parameter.choices:
        text += f"; comma-separated, of: {', '.join(parameter.choices)}"
    elif parameter.kind == "array":
        text += "; comma-separated"
    shown = parameter.default
    if not parameter.required and shown not in (None, []) and not isinstance(shown, dict):
        text += f" (default: {','.join(map(str, shown)) if isinstance(shown, list) else shown})"
    return text.replace("%", "%%")


def add_flags(group: Any, parameters: Iterable[Parameter]) -> None:
    """One flag per parameter in ``group`` (a parser or an argument group); ``dest`` = its name."""
    for parameter in parameters:
        options: dict[str, Any] = {"dest": parameter.name, "default": None, "help": help_text(parameter)}
        if parameter.kind == "boolean":
            options["action"] = argparse.BooleanOptionalAction
        else:
            options["type"] = converter(parameter)
            options["metavar"] = parameter.name.upper()
        if parameter.required:
            options["required"] = True
        group.add_argument(flag(parameter), **options)


def values(args: argparse.Namespace, parameters: Iterable[Parameter]) -> dict[str, Any]:
    """``{name: value}`` of the flags given (the others are left to the spec's defaults)."""
    given = {p.name: getattr(args, p.name, None) for p in parameters}
    return {name: value for name, value in given.items() if value is not None}
