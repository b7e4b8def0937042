"""Skills go through the path policy (issue 10 §4): a skill file that is or links to a
secret, or a skill file or folder that resolves outside its root, is skipped with a
diagnostic, and its text reaches no model and no terminal."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from deftly import Runtime
from tests.cli import run_deftly
from tests.skills.conftest import write_skill

SECRET = "API_KEY=sk-live-0123456789abcdef"
KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7secretkeybody"


def deftly(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_deftly(*args, cwd=cwd, timeout=60)


@pytest.fixture
def leaky_workspace(workspace: Path, tmp_path: Path) -> Path:
    """A project whose skill directory links to secrets and out of itself."""
    (workspace / ".git").mkdir()
    (workspace / ".env").write_text(SECRET + "\n")
    (workspace / "deploy.key").write_text(
        f"-----BEGIN PRIVATE KEY-----\n{KEY_BODY}\n-----END PRIVATE KEY-----\n"
    )
    skills = workspace / ".deftly" / "skills"
    skills.mkdir(parents=True)
    os.symlink("../../.env", skills / "notes.md")  # the case the issue quotes
    (skills / "envskill").mkdir()
    os.symlink(workspace / ".env", skills / "envskill" / "SKILL.md")
    os.symlink(workspace / "deploy.key", skills / "key.md")
    outside = tmp_path / "outside"
    write_skill(outside, "stolen", description=f"outside text {SECRET}")
    os.symlink(outside / "stolen", skills / "stolen")
    write_skill(skills, "honest", description="An honest skill.")
    return workspace


def _refused(skipped: list[Any]) -> dict[str, str]:
    return {Path(s.path).name: s.reason for s in skipped if s.kind == "refused"}


async def test_secret_and_outside_skills_are_skipped_with_a_reason(
    make_runtime: Any, leaky_workspace: Path
) -> None:
    rt: Runtime = await make_runtime(root=leaky_workspace)
    names = [s.name for s in rt.skills.skills()]
    assert "honest" in names
    assert not {"notes", "envskill", "key", "stolen"} & set(names)
    refused = _refused(rt.skills.skipped())
    assert set(refused) == {"notes.md", "SKILL.md", "key.md", "stolen"}
    assert "an environment file with secrets" in refused["notes.md"]
    assert "an environment file with secrets" in refused["SKILL.md"]
    assert "a private key" in refused["key.md"]
    assert "outside its skill directory" in refused["stolen"]
    assert "[skills] extra_dirs" in refused["stolen"]  # says how to use it on purpose
    for reason in refused.values():
        assert "sk-live" not in reason and KEY_BODY not in reason


async def test_no_model_sees_the_secret(make_runtime: Any, leaky_workspace: Path) -> None:
    rt: Runtime = await make_runtime(root=leaky_workspace)
    skill_tool = next(t for t in rt.tools() if t.name == "Skill")
    assert "honest" in skill_tool.description  # the listing is there ...
    everything = json.dumps([t.to_json() for t in rt.tools()])
    for secret in ("sk-live", KEY_BODY, "outside text"):  # ... without what it must not hold
        assert secret not in everything
    result = await rt.call("Skill", {"skill": "notes"})
    assert result.is_error and "sk-live" not in result.text


def test_cli_prints_no_secret(leaky_workspace: Path) -> None:
    tools = deftly("tools", "--json", cwd=leaky_workspace)
    assert tools.returncode == 0, tools.stderr
    assert "honest" in tools.stdout
    listing = deftly("skills", "list", "--json", cwd=leaky_workspace)
    assert listing.returncode == 0, listing.stderr
    kinds = {Path(s["path"]).name: s["kind"] for s in json.loads(listing.stdout)["skipped"]}
    assert kinds["notes.md"] == kinds["stolen"] == "refused"
    table = deftly("skills", "list", cwd=leaky_workspace)
    shown = deftly("skills", "show", "notes", cwd=leaky_workspace)
    assert shown.returncode == 2 and "no skill named" in shown.stderr
    for result in (tools, listing, table, shown):
        for secret in ("sk-live", KEY_BODY, "outside text"):
            assert secret not in result.stdout + result.stderr


def test_a_project_skill_directory_linking_out_of_the_project_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".git").mkdir()
    private = tmp_path / "private-notes"
    write_skill(private, "diary.md", body=f"my diary {SECRET}")
    (workspace / ".claude").mkdir()
    os.symlink(private, workspace / ".claude" / "skills")
    listing = deftly("skills", "list", "--json", cwd=workspace)
    assert listing.returncode == 0, listing.stderr
    data = json.loads(listing.stdout)
    assert "diary" not in [s["name"] for s in data["skills"]]
    refused = [s for s in data["skipped"] if s["kind"] == "refused"]
    assert refused and "outside the project" in refused[0]["reason"]
    assert "sk-live" not in listing.stdout


def test_the_refused_folder_can_be_named_on_purpose(workspace: Path, tmp_path: Path) -> None:
    """The diagnostic's advice works: the linked folder named in [skills] extra_dirs."""
    outside = tmp_path / "outside"
    write_skill(outside, "shared", description="A shared skill.")
    skills = workspace / ".deftly" / "skills"
    skills.mkdir(parents=True)
    os.symlink(outside / "shared", skills / "shared")
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "deftly" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f"[skills]\nextra_dirs = ['{outside}']\n")
    listing = deftly("skills", "list", "--json", cwd=workspace)
    assert listing.returncode == 0, listing.stderr
    found = {s["name"]: s for s in json.loads(listing.stdout)["skills"]}
    assert found["shared"]["source"] == "extra"
