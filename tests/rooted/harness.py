"""Running the file, shell and search tests through a rooted env (`pytest --env=rooted`).

In the rooted run a test's folder (`tmp_path`) is shown to the tools as `/workspace`, and
its workspace (`tmp_path / "ws"`) as `/workspace/ws`. The `workspace` fixture is then a
`VirtualPath`: its `str()` is the virtual path (what a test puts in tool arguments,
commands and assertions, and what the tools answer with), its `os.fspath()` the real path
(what the test's own `write_text`, `mkdir`, `os.stat` or `subprocess(cwd=...)` use). So a
test written for the local env runs unchanged: it sets files up on the host and talks to
the tools in the env's view.

`tmp_path` itself stays the real folder, and is also shown at its own path, so a test that
names a file "elsewhere on the machine" by its host path finds it there too. A symbolic
link a test makes with `symlink_to` gets the virtual text of its target (the link is made
in the env's world, where `/workspace/...` is what a link names).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any, ClassVar

VIRTUAL_ROOT = "/workspace"
"""Where the rooted run shows a test's `tmp_path`."""

ENV_OPTION = "--env"
ENV_VARIABLE = "DEFTLY_TEST_ENV"
ENVS = ("local", "rooted")


class VirtualPath(type(Path())):  # type: ignore[misc]
    """A path named in the rooted env's view that the host reaches through `os.fspath`.

    Subclassed per test (`virtual_path_type`) with the one mapping it uses, so every path
    derived from it (`/`, `parent`, `with_name`...) keeps the mapping on any pathlib."""

    _virtual: ClassVar[str] = VIRTUAL_ROOT
    _real: ClassVar[str] = ""

    def __fspath__(self) -> str:
        return self.to_real(str(self))

    @classmethod
    def to_real(cls, text: str) -> str:
        """The host path of a virtual one (paths outside the virtual root are the host's)."""
        if text == cls._virtual:
            return cls._real
        if text.startswith(cls._virtual + "/"):
            return cls._real + text[len(cls._virtual) :]
        return text

    @classmethod
    def to_virtual(cls, text: str) -> str:
        """The virtual path of a host one under the test's folder (others unchanged)."""
        if text == cls._real:
            return cls._virtual
        if text.startswith(cls._real + "/"):
            return cls._virtual + text[len(cls._real) :]
        return text

    def _from_host(self, real: str | os.PathLike[str]) -> VirtualPath:
        return type(self)(self.to_virtual(os.fspath(real)))

    def resolve(self, strict: bool = False) -> VirtualPath:
        """Links followed on the host, named in the view again."""
        return self._from_host(Path(os.fspath(self)).resolve(strict=strict))

    def absolute(self) -> VirtualPath:
        """Already absolute (a virtual path always is)."""
        return self if self.is_absolute() else self._from_host(Path(os.fspath(self)).absolute())

    def iterdir(self) -> Iterator[VirtualPath]:
        """The entries, named in the view."""
        for child in Path(os.fspath(self)).iterdir():
            yield self / child.name

    def glob(self, pattern: str, **kwargs: Any) -> Iterator[VirtualPath]:
        """Matches, named in the view."""
        for found in Path(os.fspath(self)).glob(pattern, **kwargs):
            yield self._from_host(found)

    def rglob(self, pattern: str, **kwargs: Any) -> Iterator[VirtualPath]:
        """Matches at any depth, named in the view."""
        for found in Path(os.fspath(self)).rglob(pattern, **kwargs):
            yield self._from_host(found)

    def symlink_to(self, target: str | os.PathLike[str], target_is_directory: bool = False) -> None:
        """A link whose text is the target as the view names it."""
        text = str(target) if isinstance(target, PurePath) else os.fspath(target)
        os.symlink(text, os.fspath(self), target_is_directory)

    def readlink(self) -> VirtualPath:
        """The link's text (a virtual path when `symlink_to` made it)."""
        return type(self)(os.readlink(os.fspath(self)))


def virtual_path_type(real_root: Path) -> type[VirtualPath]:
    """A `VirtualPath` class showing `real_root` at `/workspace`."""
    real = os.path.realpath(real_root)
    return type("VirtualPath", (VirtualPath,), {"_real": real})
