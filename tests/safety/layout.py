"""A hostile workspace for the path suite: secrets inside and outside, symlinks that lead
out, dangling links, loops, a look-alike sibling directory, and a fake home with keys.

Every file holds a marker saying what it is (PUBLIC-, SECRET-, OUTSIDE-) and the word
TOKEN, so an escape shows up in a tool's output (a read) or in a changed file (a write or
an edit that replaces TOKEN).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

PUBLIC = "PUBLIC-"
SECRET = "SECRET-"
OUTSIDE = "OUTSIDE-"
CANARY = "CANARY-deftly-was-here"


@dataclass(frozen=True)
class Layout:
    root: Path
    ws: Path
    outside: Path
    home: Path

    def expand(self, raw: str) -> str:
        return raw.format(ws=self.ws, out=self.outside, home=self.home, root=self.root)


def _file(path: Path, marker: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{marker}{path.name} TOKEN\n")


def _link(path: Path, target: str | Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def build_layout(root: Path) -> Layout:
    ws, outside, home = root / "ws", root / "outside", root / "home"
    ws.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True, timeout=60)
    for name in ("README.md", "src/app.py", ".env.example", ".env.sample", ".env.template"):
        _file(ws / name, PUBLIC)
    _file(ws / "keys/id_rsa.pub", PUBLIC)
    (ws / "certs").mkdir()
    (ws / "certs/server.pem").write_text(
        "-----BEGIN CERTIFICATE-----\nPUBLIC-cert TOKEN\n-----END CERTIFICATE-----\n"
    )
    for name in (
        ".env",
        "config/.ENV",
        "config/.Env.Local",
        ".env.production",
        "keys/id_rsa_old",
        "keys/ID_ED25519.BAK",
        "keys/id_ecdsa-backup",
        "keys/credentials_prod",
        ".aws/credentials",
    ):
        _file(ws / name, SECRET)
    (ws / "certs/private.key").write_text(
        "-----BEGIN PRIVATE KEY-----\nSECRET-private.key TOKEN\n-----END PRIVATE KEY-----\n"
    )
    (ws / "certs/ALT.PEM").write_text(
        "-----BEGIN RSA PRIVATE KEY-----\nSECRET-ALT.PEM TOKEN\n-----END RSA PRIVATE KEY-----\n"
    )
    (ws / "sub").mkdir()
    for name in ("secret.txt", "passwd", "nested/inner.txt"):
        _file(outside / name, OUTSIDE)
    _file(root / "ws-evil/x.txt", OUTSIDE)
    for name in (
        ".ssh/id_rsa",
        ".ssh/id_ed25519",
        ".netrc",
        ".git-credentials",
        ".aws/credentials",
    ):
        _file(home / name, SECRET)
    _file(home / ".ssh/id_rsa.pub", OUTSIDE)
    _file(home / "notes.md", OUTSIDE)

    _link(ws / "notes.txt", ".env")
    _link(ws / "key-link.txt", "certs/private.key")
    _link(ws / "innocent.txt", home / ".ssh/id_rsa")
    _link(ws / "out", "../outside")
    _link(ws / "deep", "../outside/nested")
    _link(ws / "passwd-link", outside / "passwd")
    _link(ws / "dangling", "../outside/created-by-dangling.txt")
    _link(ws / "dangling-abs", outside / "created-by-dangling-abs.txt")
    _link(ws / "chain1", "chain2")
    _link(ws / "chain2", "../outside/created-by-chain.txt")
    _link(ws / "loop_a", "loop_b")
    _link(ws / "loop_b", "loop_a")
    _link(ws / "self", "self")
    _link(ws / "alias", "src")
    # Committed, so manual mode may change these files unasked: git can restore them
    # (issue 10 §2; an untracked file would ask).
    git = ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], check=True, timeout=60)
    subprocess.run([*git, "commit", "-q", "-m", "layout"], check=True, timeout=60)
    return Layout(root, ws, outside, home)


def protected_snapshot(layout: Layout) -> dict[str, str]:
    """Every file and link outside the workspace, and every secret inside it, with content.

    A refused call must leave this exactly as it was: nothing written, created or
    removed outside the workspace, no secret touched.
    """
    snapshot: dict[str, str] = {}
    for directory, dirnames, filenames in os.walk(layout.root, followlinks=False):
        here = Path(directory)
        if here == layout.ws / ".git" or layout.ws / ".git" in here.parents:
            continue
        for name in [*filenames, *dirnames]:
            path = here / name
            inside = path == layout.ws or layout.ws in path.parents
            if path.is_symlink():
                if not inside:
                    snapshot[str(path)] = "-> " + os.readlink(path)
                continue
            if path.is_dir():
                continue
            text = path.read_text(errors="replace")
            if not inside or SECRET in text:
                snapshot[str(path)] = text
    return snapshot
