"""The rg locator, and the secret-file exclusion globs checked against the policy with the
real rg (they must exclude every name `sensitive_reason` calls a secret)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly.env import LocalEnv
from deftly.features.files.ripgrep import RipgrepMissing, glob_filter, locate_rg, missing_message
from deftly.features.files.secret_globs import (
    ENV_TEMPLATES,
    glob_args,
    may_hold_secrets,
    secret_globs,
)
from deftly.policy import sensitive_reason


def test_rg_is_found_beside_the_interpreter_even_without_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    found = locate_rg(LocalEnv())
    assert Path(found).parent == Path(sysconfig.get_path("scripts"))
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("ripgrep 14.1.0")


def test_a_configured_rg_path_wins_or_fails_clearly(tmp_path: Path) -> None:
    real = locate_rg(LocalEnv())
    assert locate_rg(LocalEnv(), real) == real
    with pytest.raises(RipgrepMissing, match="rg_path"):
        locate_rg(LocalEnv(), str(tmp_path / "missing-rg"))
    with pytest.raises(RipgrepMissing, match="not on PATH"):
        locate_rg(LocalEnv(), "definitely-not-a-program-name")


def test_the_missing_message_says_how_to_install_and_never_downloads() -> None:
    message = missing_message(["/venv/bin"])
    assert "pip install ripgrep==14.1.0" in message and sys.executable in message
    assert "apt install ripgrep" in message and "never downloads" in message


def test_a_glob_filter_is_a_scratch_file_removed_afterwards() -> None:
    env = LocalEnv()
    with glob_filter(env, "*.py") as args:
        assert args[0] == "--ignore-file"
        path = Path(args[1])
        assert path.read_text() == "*\n!*/\n!*.py\n"
    assert not path.exists()
    with glob_filter(env, "!*.min.js") as args:
        assert Path(args[1]).read_text() == "*.min.js\n"


SECRET_NAMES = [
    ".env",
    ".env.local",
    ".ENV",
    ".env.",
    ".env.e",
    ".env.exampl",
    ".env.examplex",
    ".env.production",
    "id_rsa",
    "ID_RSA",
    "id_rsa.bak",
    "id_rsa_old",
    "id_rsa-2",
    "id_rsa~",
    "id_rsa.p",
    "id_rsa.pu",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_dsa",
    "credentials",
    "Credentials.old",
    "credentials-prod",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".pgpass",
]
PUBLIC_NAMES = [
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    ".ENV.EXAMPLE",
    ".envrc",
    ".env_example",
    "environment.py",
    "id_rsa.pub",
    "credentials.json",
    "server.key.example",
    "identity.txt",
]


def rg_listing(names: list[str]) -> set[str]:
    rg = locate_rg(LocalEnv())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i, name in enumerate(names):
            folder = root / f"d{i}"
            folder.mkdir()
            (folder / name).write_text("x")
        out = subprocess.run(
            [rg, "--no-config", "--files", "--hidden", *glob_args(secret_globs()), "."],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    return {Path(line).name for line in out.splitlines()}


def test_secret_names_are_excluded_and_public_ones_kept() -> None:
    for name in SECRET_NAMES:
        assert sensitive_reason(name) is not None, name
    for name in PUBLIC_NAMES:
        if name != "credentials.json":
            assert sensitive_reason(name) is None, name
    listed = rg_listing(SECRET_NAMES + PUBLIC_NAMES)
    assert listed.isdisjoint(SECRET_NAMES)
    assert {".env.example", ".env.sample", ".env.template", ".env.dist", "id_rsa.pub"} <= listed
    assert {".envrc", "environment.py", "credentials.json", "identity.txt"} <= listed


def test_env_templates_match_the_policy() -> None:
    for template in ENV_TEMPLATES:
        assert sensitive_reason(f".env.{template}") is None


name_parts = st.sampled_from(
    [
        ".env",
        ".env.",
        "id_rsa",
        "id_ed25519",
        "id_ecdsa",
        "id_dsa",
        "credentials",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".git-credentials",
        "example",
        "sample",
        "template",
        "dist",
        "pub",
        ".",
        "-",
        "_",
        "~",
        "a",
        "E",
        "x",
        "P",
        "bak",
        ".old",
        ".key",
    ]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(name_parts, min_size=1, max_size=4).map("".join), min_size=1, max_size=25))
def test_every_name_the_policy_calls_secret_is_excluded_by_rg(names: list[str]) -> None:
    names = [n for n in dict.fromkeys(names) if n not in (".", "..") and "/" not in n]
    if not names:
        return
    listed = rg_listing(names)
    for name in names:
        if sensitive_reason(name) is not None:
            assert name not in listed, name
            assert may_hold_secrets(os.fsencode(name)), name


def test_the_cheap_precheck_never_misses_a_secret() -> None:
    for name in SECRET_NAMES:
        assert may_hold_secrets(f"some/dir/{name}".encode()), name
    assert not may_hold_secrets(b"src/main.py\0src/lib/util.ts")


def test_exclusions_are_combined_into_one_glob_and_refused_when_they_cannot_be() -> None:
    assert glob_args(("!a", "!b*")) == ["--glob", "!{a,b*}"]
    assert glob_args(()) == []
    for unsafe in (("!a,b",), ("!{a}",), ("keep",)):
        with pytest.raises(ValueError):
            glob_args(unsafe)
