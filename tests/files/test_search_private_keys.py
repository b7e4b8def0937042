"""Glob and Grep never show a private key (issue 10 §4): a `*.pem` / `*.key` file whose
header says private key is left out of every result, as Read refuses it, while a
certificate beside it is listed. Real files, real rg, the whole runtime."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deftly import Runtime
from tests.conftest import subprocess_env
from tests.files.helpers import call

DEFTLY = str(Path(sys.executable).with_name("deftly"))
KEY_BODY = "MIIEvQIBADANBgkqhkiGprivatebody0123456789"
CERT_BODY = "MIIDdzCCAl+gAwIBAgIcertificatebody"


@pytest.fixture
def keys(workspace: Path) -> Path:
    (workspace / "server.key").write_text(
        f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----\n"
    )
    (workspace / "key.pem").write_text(
        f"-----BEGIN PRIVATE KEY-----\n{KEY_BODY}\n-----END PRIVATE KEY-----\n"
    )
    (workspace / "cert.pem").write_text(
        f"-----BEGIN CERTIFICATE-----\n{CERT_BODY}\n-----END CERTIFICATE-----\n"
    )
    (workspace / "nested").mkdir()
    (workspace / "nested" / "ID.KEY").write_text(
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n"
    )
    (workspace / "app.py").write_text("print('hi')\n")
    return workspace


async def test_glob_star_lists_the_certificate_and_no_private_key(rt: Runtime, keys: Path) -> None:
    result = await call(rt, "Glob", {"pattern": "*"})
    assert not result.is_error, result.text
    listed = [line for line in result.text.splitlines() if not line.startswith(("3 ", "("))]
    assert "cert.pem" in listed and "app.py" in listed
    assert not {"server.key", "key.pem", "nested/ID.KEY"} & set(listed)
    assert "3 secret files were left out" in result.text
    only_keys = await call(rt, "Glob", {"pattern": "*.{pem,key,KEY}"})
    assert only_keys.text.splitlines()[0] == "cert.pem"
    assert "key.pem" not in only_keys.text and "server.key" not in only_keys.text


async def test_glob_past_its_cap_still_counts_keys_as_secrets(
    make_runtime: object, keys: Path
) -> None:
    runtime: Runtime = await make_runtime(  # type: ignore[operator]
        config={"files": {"glob_max_results": 1}}
    )
    result = await call(runtime, "Glob", {"pattern": "*"})
    assert "key.pem" not in result.text and "server.key" not in result.text
    assert "(2 in all;" in result.text  # app.py and cert.pem: the keys are not counted
    assert "3 secret files were left out" in result.text


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count_matches"])
async def test_grep_finds_nothing_inside_a_private_key(rt: Runtime, keys: Path, mode: str) -> None:
    result = await call(rt, "Grep", {"pattern": "privatebody", "output_mode": mode, "-n": True})
    assert not result.is_error, result.text
    assert result.text.startswith("No matches"), result.text
    for name in ("server.key", "key.pem", "ID.KEY", KEY_BODY):
        assert name not in result.text
    everything = await call(rt, "Grep", {"pattern": "BEGIN", "output_mode": mode})
    assert "key.pem" not in everything.text and "server.key" not in everything.text


async def test_grep_cannot_be_pointed_at_a_private_key(rt: Runtime, keys: Path) -> None:
    for path in ("key.pem", "server.key"):
        result = await call(rt, "Grep", {"pattern": "PRIVATE", "path": path})
        assert result.is_error and KEY_BODY not in result.text
        assert "private key" in result.text


@pytest.mark.local_env  # the deftly command runs the local env
def test_cli_glob_and_grep_print_no_private_key(keys: Path) -> None:
    def run(name: str, args: dict[str, object]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [DEFTLY, "call", name, json.dumps(args), "-w", str(keys), "--json"],
            capture_output=True,
            text=True,
            env=subprocess_env(),
            timeout=60,
            check=False,
        )

    globbed = run("Glob", {"pattern": "*"})
    assert globbed.returncode == 0, globbed.stderr
    assert "cert.pem" in globbed.stdout
    grepped = run("Grep", {"pattern": "privatebody", "output_mode": "content"})
    for done in (globbed, grepped):
        assert "key.pem" not in done.stdout and "server.key" not in done.stdout
        assert KEY_BODY not in done.stdout + done.stderr
