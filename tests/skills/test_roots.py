"""Skill roots and precedence: project > user > extra > package > built-in."""

from __future__ import annotations

import itertools
import os
import sys
import textwrap
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from deftly.config.skills import SkillsConfig
from deftly.features.skills import SOURCE_ORDER, SkillService, project_root
from tests.skills.conftest import write_skill

BUILTIN_NAMES = ["commit", "review-changes", "write-skill"]


def service(workspace: Path, home: Path, **config: object) -> SkillService:
    return SkillService(workspace, SkillsConfig(**config), home=home)  # type: ignore[arg-type]


Installer = Callable[..., Path]


@pytest.fixture
def install_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Installer:
    """Install a real (path-only) distribution declaring `deftly.skills` entry points.

    Returns the directory its skills live in. Nothing is mocked: importlib.metadata finds
    the dist-info on sys.path, exactly as for a pip-installed package.
    """

    def install(*, extra_entries: str = "", form: str = "path") -> Path:
        module = f"skillpkg_{uuid.uuid4().hex[:8]}"
        site = tmp_path / f"site-{module}"
        package = site / module
        skills = package / "skills"
        skills.mkdir(parents=True)
        (skills / "__init__.py").write_text("")
        (package / "__init__.py").write_text(
            textwrap.dedent(
                """
                from pathlib import Path
                SKILLS = Path(__file__).parent / "skills"
                NOTHING = ["relative/dir"]
                def skill_dirs():
                    return [str(SKILLS)]
                """
            )
        )
        target = {
            "path": f"{module}:SKILLS",
            "module": f"{module}.skills",
            "callable": f"{module}:skill_dirs",
        }[form]
        info = site / f"{module}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(
            f"[deftly.skills]\nskills = {target}\n{extra_entries.format(module=module)}"
        )
        monkeypatch.syspath_prepend(str(site))
        monkeypatch.delitem(sys.modules, module, raising=False)
        return skills

    return install


# -- where the roots are -------------------------------------------------------------------


def test_project_root_is_the_nearest_ancestor_with_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    nested = repo / "pkg" / "sub"
    nested.mkdir(parents=True)
    assert project_root(nested) == repo
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's .git is a file
    assert project_root(worktree) == worktree
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_root(plain) == plain


def test_project_skills_are_found_from_the_project_root(tmp_path: Path, skills_home: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write_skill(repo / ".deftly" / "skills", "from-root")
    workspace = repo / "pkg"
    workspace.mkdir()
    found = service(workspace, skills_home)
    assert found.get("from-root") is not None
    assert found.get("from-root").source == "project"  # type: ignore[union-attr]


def test_order_inside_the_project_and_the_user_sources(
    workspace: Path, skills_home: Path, isolated_home: Path
) -> None:
    for rel, label in [(".deftly/skills", "deftly"), (".agents/skills", "agents")]:
        write_skill(workspace / rel, "shared", description=label)
    write_skill(workspace / ".claude/skills", "claude-only")
    write_skill(workspace / ".claude/skills", "agents-vs-claude", description="claude")
    write_skill(workspace / ".agents/skills", "agents-vs-claude", description="agents")
    xdg = isolated_home / "config" / "deftly" / "skills"
    write_skill(xdg, "mine", description="xdg")
    write_skill(skills_home / ".agents" / "skills", "mine", description="home agents")
    write_skill(skills_home / ".claude" / "skills", "mine", description="home claude")
    write_skill(skills_home / ".claude" / "skills", "claude-user")
    found = service(workspace, skills_home)
    desc = {s.name: (s.source, s.description) for s in found.skills()}
    assert desc["shared"] == ("project", "deftly")
    assert desc["agents-vs-claude"] == ("project", "agents")
    assert desc["claude-only"][0] == "project"
    assert desc["mine"] == ("user", "xdg")
    assert desc["claude-user"][0] == "user"
    assert [r.source for r in found.roots] == [
        "project",
        "project",
        "project",
        "user",
        "user",
        "user",
        "builtin",
    ]


def test_user_dir_follows_xdg_config_home(
    workspace: Path, skills_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    write_skill(tmp_path / "xdg" / "deftly" / "skills", "xdg-skill")
    assert service(workspace, skills_home).get("xdg-skill") is not None
    monkeypatch.delenv("XDG_CONFIG_HOME")
    write_skill(skills_home / ".config" / "deftly" / "skills", "default-skill")
    found = service(workspace, skills_home)
    assert found.get("default-skill") is not None and found.get("xdg-skill") is None


def test_extra_dirs_home_relative_absolute_and_missing(tmp_path: Path, skills_home: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    workspace = repo / "sub"
    workspace.mkdir()
    write_skill(skills_home / "my-skills", "from-home")
    write_skill(repo / "team-skills", "from-relative")  # relative to the project root
    write_skill(tmp_path / "abs", "from-absolute")
    found = service(
        workspace,
        skills_home,
        extra_dirs=["~/my-skills", "team-skills", str(tmp_path / "abs"), "missing-dir"],
    )
    assert {s.name for s in found.skills() if s.source == "extra"} == {
        "from-home",
        "from-relative",
        "from-absolute",
    }
    [problem] = found.skipped()
    assert problem.path == str(repo / "missing-dir") and "does not exist" in problem.reason


def test_roots_are_deduplicated_by_real_path(tmp_path: Path, skills_home: Path) -> None:
    # the workspace is the home directory: ~/.agents/skills is also the project's
    write_skill(skills_home / ".agents" / "skills", "once")
    os.symlink(skills_home / ".agents" / "skills", tmp_path / "link-to-skills")
    found = service(skills_home, skills_home, extra_dirs=[str(tmp_path / "link-to-skills")])
    paths = [r.path for r in found.roots]
    assert len(paths) == len(set(paths))
    assert [r.source for r in found.roots if r.path == skills_home / ".agents" / "skills"] == [
        "project"
    ]
    assert [s.source for s in found.skills() if s.name == "once"] == ["project"]
    assert found.skipped() == []


def test_builtin_skills_ship_with_deftly_and_can_be_switched_off(
    workspace: Path, skills_home: Path
) -> None:
    found = service(workspace, skills_home)
    assert [s.name for s in found.skills()] == BUILTIN_NAMES
    assert all(s.source == "builtin" and s.path.is_file() for s in found.skills())
    commit = found.get("commit")
    assert commit is not None and not commit.model_invocable  # a person decides to commit
    helper = found.get("write-skill")
    assert helper is not None and (helper.dir / "placeholders.md").is_file()  # payload
    assert service(workspace, skills_home, builtin=False).skills() == []


@pytest.mark.parametrize("form", ["path", "module", "callable"])
def test_package_skills_from_entry_points(
    workspace: Path, skills_home: Path, install_package: Installer, form: str
) -> None:
    skills_dir = install_package(form=form)
    write_skill(skills_dir, "pkg-skill")
    found = service(workspace, skills_home)
    skill = found.get("pkg-skill")
    assert skill is not None and skill.source == "package"
    assert skill.package is not None and skill.package.startswith("skillpkg_")
    assert service(workspace, skills_home, packages=False).get("pkg-skill") is None
    no_plugins = SkillService(workspace, SkillsConfig(), home=skills_home, packages=False)
    assert no_plugins.get("pkg-skill") is None


def test_a_broken_entry_point_is_reported_not_fatal(
    workspace: Path, skills_home: Path, install_package: Installer
) -> None:
    skills_dir = install_package(
        extra_entries="broken = no_such_module_xyz:thing\nnothing = {module}:NOTHING\n"
    )
    write_skill(skills_dir, "still-here")
    found = service(workspace, skills_home)
    assert found.get("still-here") is not None
    reasons = {s.path.split(" = ")[0]: s.reason for s in found.skipped()}
    assert "could not be loaded" in reasons["entry point broken"]
    assert "no_such_module_xyz" in reasons["entry point broken"]
    assert "names no directory" in reasons["entry point nothing"]


# -- the precedence matrix -----------------------------------------------------------------


def _place(
    source: str,
    *,
    workspace: Path,
    home: Path,
    extra: Path,
    package: Path | None,
    description: str,
) -> None:
    """Put a skill called "review-changes" (also a built-in) in `source`."""
    where = {
        "project": workspace / ".agents" / "skills",
        "user": home / ".claude" / "skills",
        "extra": extra,
        "package": package,
    }.get(source)
    if where is not None:
        write_skill(where, "review-changes", description=description)


@pytest.mark.parametrize(("higher", "lower"), list(itertools.combinations(SOURCE_ORDER, 2)))
def test_precedence_matrix(
    higher: str,
    lower: str,
    workspace: Path,
    skills_home: Path,
    tmp_path: Path,
    install_package: Installer,
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    package = install_package() if "package" in (higher, lower) else None
    for source in (lower, higher):  # the loser is written first: order must not matter
        _place(
            source,
            workspace=workspace,
            home=skills_home,
            extra=extra,
            package=package,
            description=f"from {source}",
        )
    found = service(workspace, skills_home, extra_dirs=[str(extra)])
    winner = found.get("REVIEW-CHANGES")
    assert winner is not None and winner.source == higher
    if higher != "builtin":
        assert winner.description == f"from {higher}"
    shadowed = {s.source for s in found.skipped() if s.kind == "shadowed"}
    assert lower in shadowed and higher not in shadowed


def test_all_sources_at_once(
    workspace: Path, skills_home: Path, tmp_path: Path, install_package: Installer
) -> None:
    # reference case 15, with deftly's sources
    extra = tmp_path / "extra"
    package = install_package()
    write_skill(skills_home / ".agents" / "skills", "shared", description="user")
    write_skill(workspace / ".deftly" / "skills", "shared", description="project")
    write_skill(extra, "shared", description="extra")
    write_skill(package, "shared", description="package")
    write_skill(skills_home / ".agents" / "skills", "user-package", description="user")
    write_skill(package, "user-package", description="package")
    write_skill(extra, "extra-package", description="extra")
    write_skill(package, "extra-package", description="package")
    write_skill(package, "package-only", description="package")
    found = service(workspace, skills_home, extra_dirs=[str(extra)])
    assert {n: found.get(n).description for n in ("shared", "user-package", "extra-package")} == {  # type: ignore[union-attr]
        "shared": "project",
        "user-package": "user",
        "extra-package": "extra",
    }
    assert found.get("package-only").source == "package"  # type: ignore[union-attr]
    # reference case 8: a flat project skill beats a user folder skill
    write_skill(workspace / ".deftly" / "skills", "review.md", body="project review")
    write_skill(skills_home / ".agents" / "skills", "review", description="user review")
    reloaded = found.reload()
    review = reloaded.get("review")
    assert (
        review is not None
        and review.source == "project"
        and review.description == ("project review")
    )
