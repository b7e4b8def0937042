"""Tool descriptions live in a Markdown file beside the tool's module.

A description may hold `${NAME}` placeholders; they are filled from the tool instance's
`description_vars()` every time the description is read, so the text always states the
limits the tool really enforces.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, overload

from deftly.contract.errors import ToolLoadError

_PLACEHOLDER = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")


def render_template(template: str, values: Mapping[str, object], *, source: str = "") -> str:
    """Fill `${NAME}` placeholders; a placeholder without a value is a programming error."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            where = f" in {source}" if source else ""
            raise KeyError(f"description placeholder ${{{name}}}{where} has no value")
        return str(values[name])

    return _PLACEHOLDER.sub(substitute, template)


def placeholders(template: str) -> set[str]:
    """The `${NAME}` placeholders a description template uses."""
    return set(_PLACEHOLDER.findall(template))


class describe:
    """Class-body descriptor: `description = describe("read.md")`.

    The file is found beside the module that defines the class and read once.
    """

    def __init__(self, filename: str):
        self.filename = filename
        self._path: Path | None = None
        self._template: str | None = None
        self._owner = "the tool"

    def __set_name__(self, owner: type, name: str) -> None:
        self._owner = owner.__qualname__
        module = sys.modules[owner.__module__]
        if module.__file__ is None:  # pragma: no cover - frozen/namespace modules
            raise RuntimeError(f"cannot locate {self.filename} for {owner.__qualname__}")
        self._path = Path(module.__file__).with_name(self.filename)

    @property
    def template(self) -> str:
        """The description file's text, placeholders unfilled; read on first use, ToolLoadError
        (naming the file) when it cannot be read."""
        if self._template is None:
            if self._path is None:
                raise RuntimeError("describe() must be assigned in a class body")
            try:
                self._template = self._path.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ToolLoadError(
                    f"the description of {self._owner} cannot be read from {self._path} "
                    f"({exc.strerror or exc}): write what the model should know about the "
                    f"tool in {self.filename} beside its module, or set `description = "
                    '"..."` on the class'
                ) from None
        return self._template

    @overload
    def __get__(self, instance: None, owner: type) -> str: ...
    @overload
    def __get__(self, instance: object, owner: type) -> str: ...
    def __get__(self, instance: object | None, owner: type) -> str:
        if instance is None:
            return self.template
        values: Mapping[str, Any] = getattr(instance, "description_vars", dict)()
        return render_template(self.template, values, source=str(self._path))
