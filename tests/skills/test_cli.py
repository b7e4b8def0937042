"""`deftly skills list|show|render`, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import run_deftly
from tests.skills.conftest import write_skill

DEFTLY = str(Path(sys.executable).with_name("deftly"))


def deftly(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_deftly(*args, cwd=cwd, timeout=60)


@pytest.fixture
def skill_workspace(workspace: Path, skills_home: Path) -> Path:
    skills = workspace / ".deftly" / "skills"
    write_skill(
        skills,
        "commit",
        "name: commit\ndescription: Commit with care.\narguments: [flag, message]",
        body="flag=$flag message=$message dir=${DEFTLY_SKILL_DIR}",
    )
    write_skill(skills_home / ".claude" / "skills", "from-claude")
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("no front matter")
    return workspace


def test_help_lists_the_subcommands() -> None:
    result = deftly("skills", "--help")
    assert result.returncode == 0
    for command in ("list", "show", "render"):
        assert command in result.stdout
        assert deftly("skills", command, "--help").returncode == 0
    assert "skills" in deftly("--help").stdout


def test_list_json(skill_workspace: Path) -> None:
    result = deftly("skills", "list", "--json", "--workspace", str(skill_workspace))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"skills", "skipped"}
    by_name = {s["name"]: s for s in data["skills"]}
    assert list(by_name) == ["commit", "from-claude", "review-changes", "write-skill"]
    commit = by_name["commit"]
    assert commit["source"] == "project" and commit["description"] == "Commit with care."
    assert commit["path"] == str(skill_workspace / ".deftly/skills/commit/SKILL.md")
    assert commit["arguments"] == ["flag", "message"] and commit["model_invocable"] is True
    assert by_name["from-claude"]["source"] == "user"
    skipped = {Path(s["path"]).parent.name: s for s in data["skipped"]}
    assert (
        skipped["broken"]["kind"] == "invalid" and "no front matter" in skipped["broken"]["reason"]
    )
    assert skipped["commit"]["kind"] == "shadowed"  # the built-in commit lost to the project's


def test_list_table(skill_workspace: Path) -> None:
    result = deftly("skills", "list", "-w", str(skill_workspace))
    assert result.returncode == 0, result.stderr
    assert "commit" in result.stdout and "project" in result.stdout
    assert "Skipped (2)" in result.stdout and "no front matter" in result.stdout


def test_show(skill_workspace: Path) -> None:
    result = deftly("skills", "show", "COMMIT", "-w", str(skill_workspace))
    assert result.returncode == 0, result.stderr
    assert "source: project" in result.stdout and "arguments: flag message" in result.stdout
    assert result.stdout.rstrip().endswith("flag=$flag message=$message dir=${DEFTLY_SKILL_DIR}")
    as_json = json.loads(
        deftly("skills", "show", "commit", "--json", "-w", str(skill_workspace)).stdout
    )
    assert as_json["metadata"]["arguments"] == ["flag", "message"]
    assert as_json["content"].startswith("flag=$flag")


def test_render(skill_workspace: Path) -> None:
    # Each command-line argument is one skill argument (the shell's quoting is kept).
    result = deftly("skills", "render", "commit", "-m", "fix login", "-w", str(skill_workspace))
    assert result.returncode == 0, result.stderr
    skill_dir = skill_workspace / ".deftly/skills/commit"
    assert result.stdout == (
        f'<skill-loaded name="commit" trigger="user-slash" source="project" dir="{skill_dir}" '
        'args="-m &quot;fix login&quot;">\n'
        f"flag=-m message=fix login dir={skill_dir}\n</skill-loaded>\n"
    )
    model = deftly(
        "skills", "render", "commit", "--trigger", "model-tool", "-w", str(skill_workspace)
    )
    assert 'trigger="model-tool"' in model.stdout and 'args=""' in model.stdout


def test_render_runs_from_the_current_directory(skill_workspace: Path) -> None:
    result = deftly("skills", "render", "commit", "a", "b", cwd=skill_workspace)
    assert result.returncode == 0, result.stderr
    assert "flag=a message=b" in result.stdout


def test_errors_are_one_line_with_an_exit_code(skill_workspace: Path) -> None:
    missing = deftly("skills", "show", "comit", "-w", str(skill_workspace))
    assert missing.returncode == 2
    assert 'There is no skill named "comit". Did you mean "commit"?' in missing.stderr
    assert "Traceback" not in missing.stderr
    bad_trigger = deftly(
        "skills", "render", "commit", "--trigger", "robot", "-w", str(skill_workspace)
    )
    assert bad_trigger.returncode == 2 and "unknown trigger" in bad_trigger.stderr
    config = skill_workspace / ".deftly" / "config.toml"
    config.write_text("[skills]\nenabled = false\n")
    off = deftly("skills", "list", "-w", str(skill_workspace))
    assert off.returncode == 2 and "switched off" in off.stderr
    config.write_text("[skills]\nextra_dir = ['x']\n")
    typo = deftly("skills", "list", "-w", str(skill_workspace))
    assert typo.returncode == 2 and "did you mean 'extra_dirs'" in typo.stderr
