"""ripgrep exclusion globs for secret files, so Glob never lists and Grep never opens them.

They mirror `deftly.policy.sensitive_reason` (env files, SSH private keys and their renamed
copies, credentials files, login files), case-insensitively, and keep the exemptions
(`.env.example`, `id_rsa.pub`) searchable: an exemption cannot be written as a positive
glob (rg would then search *only* such files), so the globs cover exactly the names
around it instead. They go after the caller's own globs on the rg command line, where
the last matching glob wins, so a user glob like `**/.env` cannot bring a secret back.
Results are filtered with `secret_reason` as well, in case a name slips through; it
also reads the header of `*.pem` / `*.key` results, so Glob lists certificates but never a
private key.
"""

from __future__ import annotations

import os
from functools import cache

from deftly.contract.fs import LOCAL_PROBE, PathProbe
from deftly.policy.sensitive import private_key_reason, sensitive_reason

ENV_TEMPLATES = ("example", "sample", "template", "dist")
KEY_PREFIXES = ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa")
BACKUP_SUFFIXES = (
    ".bak",
    ".backup",
    ".copy",
    ".disabled",
    ".key",
    ".old",
    ".orig",
    ".pem",
    ".save",
    ".tmp",
)
EXACT_NAMES = (".netrc", "_netrc", ".git-credentials", ".pgpass")
PRIVATE_KEY_FILES = ("*.pem", "*.key")
"""Certificates or private keys: only their content tells. Grep does not open them."""

_GLOB_SPECIAL = frozenset("*?[]{}\\!")


def _char(ch: str) -> str:
    if ch.isalpha() and ch.lower() != ch.upper():
        return f"[{ch.lower()}{ch.upper()}]"
    if ch in _GLOB_SPECIAL:
        return "\\" + ch
    return ch


def _ci(text: str) -> str:
    """A glob matching `text` in any letter case.

    A trailing dot is written `[.]`: rg ignores a glob that ends in a literal dot.
    """
    glob = "".join(_char(ch) for ch in text)
    return glob[:-1] + "[.]" if glob.endswith(".") else glob


def _none_of(chars: set[str]) -> str:
    both = sorted({c.lower() for c in chars} | {c.upper() for c in chars})
    return "[!" + "".join(both) + "]"


def _all_but(prefix: str, exceptions: tuple[str, ...]) -> list[str]:
    """Globs for every name `prefix` + s, for any s (even empty) not in `exceptions`.

    Walks the trie of the exceptions: at each node, the name may end there (unless that
    is an exception) or continue with a character no exception continues with.
    """
    globs: list[str] = []
    nodes = sorted({e[:i] for e in exceptions for i in range(len(e) + 1)})
    for node in nodes:
        children = {e[len(node)] for e in exceptions if e.startswith(node) and len(e) > len(node)}
        if node not in exceptions:
            globs.append(_ci(prefix + node))
        if children:
            globs.append(_ci(prefix + node) + _none_of(children) + "*")
        else:
            globs.append(_ci(prefix + node) + "?*")
    return globs


@cache
def secret_globs(*, private_keys: bool = False) -> tuple[str, ...]:
    """rg `--glob` values (each starting with `!`) that exclude secret files."""
    names: list[str] = [_ci(".env"), *_all_but(".env.", ENV_TEMPLATES)]
    for key in KEY_PREFIXES:
        names.append(_ci(key))
        names.append(_ci(key) + "[-_~]*")
        names.extend(_all_but(key + ".", ("pub",)))
    names.append(_ci("credentials"))
    names.append(_ci("credentials") + "[-_~]*")
    names.extend(_ci("credentials" + suffix) for suffix in BACKUP_SUFFIXES)
    names.extend(_ci(name) for name in EXACT_NAMES)
    if private_keys:
        names.extend("*." + _ci(glob[2:]) for glob in PRIVATE_KEY_FILES)
    return tuple("!" + name for name in names)


_MARKERS = (
    b"env",
    b"id_",
    b"credential",
    b"netrc",
    b"pgpass",
    b".aws",
    b".gcp",
    b".pem",
    b".key",
)


def may_hold_secrets(blob: bytes) -> bool:
    """A cheap pre-check over many paths at once: False means none of them can be a
    secret file (so `secret_reason` need not look at each)."""
    low = blob.lower()
    return any(marker in low for marker in _MARKERS)


def secret_reason(path: str | os.PathLike[str], probe: PathProbe = LOCAL_PROBE) -> str | None:
    """Why a search result is a secret file, as Read would say: by name, and for a
    `*.pem` / `*.key` name by its first bytes (a certificate passes, a private key does
    not), read through `probe` (the env's). Only those two suffixes cost a read, of the
    header alone."""
    return sensitive_reason(path) or private_key_reason(path, probe)


def glob_args(globs: tuple[str, ...]) -> list[str]:
    """rg arguments excluding every name in `globs` (each written `!name`), as a single
    alternation: rg builds one glob several milliseconds faster than a hundred."""
    names = [glob.removeprefix("!") for glob in globs]
    if not names:
        return []
    if any(ch in name for name in names for ch in "{},") or any(
        not glob.startswith("!") for glob in globs
    ):
        raise ValueError("only exclusions without braces or commas can be combined")
    return ["--glob", "!{" + ",".join(names) + "}"]
