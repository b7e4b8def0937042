"""Secret files deftly never reads or writes, whatever the mode or the rules.

Matching is by name (case-insensitive), with renamed copies of keys caught (`id_rsa.bak`,
`id_rsa_old`) and templates exempt (`.env.example`). For `*.pem` / `*.key` files the first
bytes are looked at, so a certificate passes and a private key does not.
"""

from __future__ import annotations

import functools
import os

from deftly.contract.fs import LOCAL_PROBE, PathProbe

_ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
_KEY_PREFIXES = ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "id_ecdsa_sk", "id_ed25519_sk")
_BACKUP_SUFFIXES = frozenset(
    {".bak", ".backup", ".copy", ".disabled", ".key", ".old", ".orig", ".pem", ".save", ".tmp"}
)
_EXACT_NAMES = {
    ".netrc": "a .netrc login file",
    "_netrc": "a .netrc login file",
    ".git-credentials": "stored git credentials",
    ".pgpass": "a PostgreSQL password file",
}
SECRET_NAME_EXAMPLES = (
    ".env",
    ".env.local",
    ".env.production",
    *_KEY_PREFIXES,
    "credentials",
    *_EXACT_NAMES,
)
"""Typical secret file names, to test a glob against: one matching any may match a secret."""
_PRIVATE_KEY_MARKERS = (b"PRIVATE KEY-----", b"-----BEGIN OPENSSH PRIVATE KEY")
_HEADER_BYTES = 4096


def sensitive_reason(path: str | os.PathLike[str]) -> str | None:
    """Why `path` is a secret (a short phrase), or None. Looks at the name only."""
    return _sensitive_text(os.fspath(path))


@functools.lru_cache(maxsize=8192)
def _sensitive_text(text: str) -> str | None:
    """`sensitive_reason` of a path's text: a function of the text alone, so remembered
    (every call's paths are checked several times: as given, for real, by the engine)."""
    name = os.path.basename(text.rstrip("/")).lower()
    if name in _EXACT_NAMES:
        return _EXACT_NAMES[name]
    if name == ".env" or (name.startswith(".env.") and name not in _ENV_TEMPLATES):
        return "an environment file with secrets"
    for prefix in _KEY_PREFIXES:
        if _is_key_copy(name, prefix):
            return "an SSH private key"
    lowered = text.lower()
    credentials = name == "credentials" or _is_backup_of(name, "credentials")
    if ".aws" not in lowered and ".gcp" not in lowered:
        return "a credentials file" if credentials else None
    parts = [p for p in lowered.split("/") if p]
    if credentials:
        for cloud in (".aws", ".gcp"):
            if cloud in parts[:-1]:
                return f"{cloud[1:].upper()} credentials"
        return "a credentials file"
    for cloud in (".aws", ".gcp"):
        if cloud in parts and "credentials" in parts[parts.index(cloud) + 1 :]:
            return f"{cloud[1:].upper()} credentials"
    return None


def _is_key_copy(name: str, prefix: str) -> bool:
    if not name.startswith(prefix) or ".pub" in name:
        return False
    rest = name[len(prefix) :]
    return rest == "" or rest[0] in "-_.~"


def _is_backup_of(name: str, prefix: str) -> bool:
    if not name.startswith(prefix) or name == prefix:
        return False
    rest = name[len(prefix) :]
    return rest[0] in "-_~" or rest in _BACKUP_SUFFIXES


def private_key_reason(path: str | os.PathLike[str], probe: PathProbe = LOCAL_PROBE) -> str | None:
    """For `*.pem` / `*.key` files that exist: a private key by its header, else None.
    The header is read through `probe` (the environment's view; this machine by default),
    only from a regular file, never blocking on a FIFO."""
    text = os.fspath(path)
    if not text.lower().endswith((".pem", ".key")):
        return None
    head = probe.read_header(text, _HEADER_BYTES)
    if head is None:
        return None
    if any(marker in head for marker in _PRIVATE_KEY_MARKERS):
        return "a private key"
    return None
