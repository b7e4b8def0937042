"""deftly's control files: what decides what the agent may do, and what it is told.

Writing one of these loosens the agent's own leash (a config with `mode = "auto"`, a hook
or an MCP server command that runs code, a skill or an instructions file every model
reads), so the permission engine protects them like `.git`: a write asks in every mode but
`auto`. Reading them is fine. They are:

- `.deftly/**` at any depth (config, `mcp.json`, hooks, skills);
- the user's deftly config directory (`~/.config/deftly`, honouring `XDG_CONFIG_HOME`)
  and the record of trusted folders, given by the host: the policy does not read config;
- what deftly reads of other agents: `.claude/settings*.json`, `.claude/skills/**`,
  `.agents/**`, `AGENTS.md`, `CLAUDE.md` (any depth, any case).

Both the path as written and its real path (links followed) are checked.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable

from deftly.contract.records import frozen
from deftly.policy.paths import real_path_text

_INSTRUCTION_FILES = frozenset({"agents.md", "claude.md"})
CONTROL_NAME_EXAMPLES = (".deftly", ".agents", ".claude", "AGENTS.md", "CLAUDE.md")
"""Names a glob may stand for: one matching any of them may name a control file."""


@frozen
class ControlFiles:
    """Tells whether a path is a control file: by its names, or because it is (inside) one
    of the host's directories (`user_dirs`) or files (`files`, e.g. the trusted folders)."""

    user_dirs: tuple[str, ...] = ()
    files: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        user_dirs: Iterable[str | os.PathLike[str]],
        files: Iterable[str | os.PathLike[str]] = (),
    ) -> ControlFiles:
        """The control files of a host: its config directories and files (e.g. the trusted-folders
        record), each under every spelling it may be reached by."""
        return cls(_spellings(user_dirs), _spellings(files))

    def reason(self, path: str | os.PathLike[str]) -> str | None:
        """Why `path` is a control file (a phrase), or None."""
        lexical = os.path.normpath(os.path.abspath(path))
        found = self._reason(lexical)
        if found is not None:
            return found
        try:
            real = real_path_text(lexical)
        except OSError:
            return None
        return self._reason(real) if real != lexical else None

    def _reason(self, text: str) -> str | None:
        for directory in self.user_dirs:
            if text == directory or text.startswith(directory.rstrip("/") + "/"):
                return f"inside deftly's user configuration directory {directory}"
        if text in self.files:
            return "one of deftly's own records (which folders are trusted)"
        return control_name_reason(text)


def _spellings(paths: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """Each path as written and as its real path (links followed)."""
    texts: dict[str, None] = {}
    for path in paths:
        lexical = os.path.normpath(os.path.abspath(path))
        texts.setdefault(lexical)
        try:
            texts.setdefault(real_path_text(lexical))
        except OSError:
            continue
    return tuple(texts)


def control_name_reason(text: str) -> str | None:
    """Why a path is a control file by its names alone (no user directories), or None."""
    parts = [part.lower() for part in text.replace("\\", "/").split("/") if part]
    if not parts:
        return None
    if ".deftly" in parts:
        return "one of deftly's own control files (.deftly: config, mcp.json, hooks, skills)"
    if ".agents" in parts:
        return "an agent's instructions or skills (.agents), which deftly reads"
    name = parts[-1]
    if name in _INSTRUCTION_FILES:
        return f"an agent instructions file ({os.path.basename(text)}), which deftly reads"
    if ".claude" in parts:
        below = parts[parts.index(".claude") + 1 :]
        if below[:1] == ["skills"]:
            return "a skill in .claude/skills, which deftly reads"
        if len(below) == 1 and fnmatch.fnmatchcase(name, "settings*.json"):
            return "an agent settings file (.claude/settings*.json)"
    return None
