"""The discovery walk over real skill trees."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from deftly.features.skills import Discovery, SkillRoot, discover
from tests.skills.conftest import write_skill


def walk(*roots: Path, **options: object) -> Discovery:
    return discover([SkillRoot(r, "user") for r in roots], **options)  # type: ignore[arg-type]


def names(found: Discovery) -> list[str]:
    return [s.name for s in found.skills]


def test_folder_skills_and_flat_skills_at_the_top(tmp_path: Path) -> None:
    write_skill(tmp_path, "alpha")
    write_skill(tmp_path, "beta.md", body="# Beta\n\nFlat skill.")
    write_skill(tmp_path, "alpha/notes.md", body="payload, not a skill")
    write_skill(tmp_path, "group/deeper.md", body="a loose file below the top is payload")
    found = walk(tmp_path)
    assert names(found) == ["alpha", "beta"]
    beta = found.skills[1]
    assert beta.description == "# Beta" and beta.dir == tmp_path
    assert found.skipped == []


def test_top_level_skill_md_readme_and_dot_files_are_not_flat_skills(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: root\ndescription: d\n---\nb")
    (tmp_path / "README.md").write_text("# About these skills")
    (tmp_path / ".hidden.md").write_text("hidden")
    (tmp_path / "notes.txt").write_text("not markdown")
    assert names(walk(tmp_path)) == []


def test_nested_folders_are_searched_but_dot_folders_and_node_modules_are_not(
    tmp_path: Path,
) -> None:
    write_skill(tmp_path, "group/inner")
    write_skill(tmp_path, ".cache/below/hidden")
    write_skill(tmp_path, "node_modules/pkg/vendored")
    write_skill(tmp_path, ".dot-skill")  # a dot-folder that itself holds SKILL.md counts
    assert names(walk(tmp_path)) == [".dot-skill", "inner"]


def test_depth_limit(tmp_path: Path) -> None:
    # reference case 7
    deep = "/".join(f"lvl-{i}" for i in range(11))
    write_skill(tmp_path, f"{deep}/deep")
    write_skill(tmp_path, "shallow")
    limit = "/".join(f"l{i}" for i in range(8))
    write_skill(tmp_path, f"{limit}/at-limit")  # its folder is at depth 8: still read
    assert names(walk(tmp_path)) == ["at-limit", "shallow"]


def test_a_skill_folder_is_payload_not_a_place_for_more_skills(tmp_path: Path) -> None:
    write_skill(tmp_path, "outer")
    write_skill(tmp_path, "outer/inner")
    write_skill(tmp_path, "outer/scripts/tool")
    assert names(walk(tmp_path)) == ["outer"]


@pytest.mark.parametrize(
    "flag", ["has-sub-skill: true", "hasSubSkill: true", "metadata:\n  has-sub-skill: true"]
)
def test_sub_skills_of_a_bundle_are_named_parent_dot_child(tmp_path: Path, flag: str) -> None:
    # reference case 6
    write_skill(tmp_path, "parent", f"name: parent\ndescription: d\n{flag}")
    write_skill(tmp_path, "parent/child", name="child")
    write_skill(tmp_path, "parent/already", name="parent.already")  # not prefixed twice
    write_skill(tmp_path, "parent/group/grandchild", name="grandchild")
    found = walk(tmp_path)
    assert names(found) == ["parent", "parent.already", "parent.child", "parent.grandchild"]
    assert [s.is_sub_skill for s in found.skills] == [False, True, True, True]


def test_without_the_flag_children_of_a_skill_are_not_found(tmp_path: Path) -> None:
    write_skill(tmp_path, "parent")
    write_skill(tmp_path, "parent/child")
    assert names(walk(tmp_path)) == ["parent"]


def test_first_name_wins_shallow_before_deep_and_sorted_order(tmp_path: Path) -> None:
    write_skill(tmp_path, "group-b/dup", description="from b")
    write_skill(tmp_path, "group-a/dup", description="from a")
    write_skill(tmp_path, "z/deep/same", description="deep")
    write_skill(tmp_path, "same", description="shallow")
    found = walk(tmp_path)
    by_name = {s.name: s.description for s in found.skills}
    assert by_name == {"dup": "from a", "same": "shallow"}
    shadowed = sorted(s.path for s in found.skipped if s.kind == "shadowed")
    assert shadowed == [
        str(tmp_path / "group-b/dup/SKILL.md"),
        str(tmp_path / "z/deep/same/SKILL.md"),
    ]
    reason = next(s.reason for s in found.skipped if "group-b" in s.path)
    assert str(tmp_path / "group-a/dup/SKILL.md") in reason


def test_first_root_wins(tmp_path: Path) -> None:
    # reference case 5
    brand, generic = tmp_path / "brand", tmp_path / "generic"
    write_skill(brand, "dup", description="brand")
    write_skill(generic, "dup", description="generic")
    found = walk(brand, generic)
    assert [(s.name, s.description) for s in found.skills] == [("dup", "brand")]


def test_folder_skill_beats_a_flat_file_of_the_same_name(tmp_path: Path) -> None:
    # reference case 8, second half
    write_skill(tmp_path, "deploy", description="folder")
    write_skill(tmp_path, "Deploy.md", body="flat")
    found = walk(tmp_path)
    assert [(s.name, s.description) for s in found.skills] == [("deploy", "folder")]
    assert [s.kind for s in found.skipped] == ["shadowed"]


def test_names_are_case_insensitive_but_keep_their_case(tmp_path: Path) -> None:
    write_skill(tmp_path, "a", name="Review")
    write_skill(tmp_path, "b", name="review")
    found = walk(tmp_path)
    assert names(found) == ["Review"]
    assert found.skipped[0].kind == "shadowed"


def test_result_is_sorted_whatever_the_creation_order(tmp_path: Path) -> None:
    for name in ["zeta", "Alpha", "beta", "a_b", "a-b", "alpha2"]:
        write_skill(tmp_path, f"d-{name}", name=name)
    assert names(walk(tmp_path)) == ["a-b", "a_b", "Alpha", "alpha2", "beta", "zeta"]


def test_disabled_names_and_globs(tmp_path: Path) -> None:
    for name in ["keep", "drop-me", "drop-too", "Other"]:
        write_skill(tmp_path, name)
    found = walk(tmp_path, disabled=["drop-*", "OTHER"])
    assert names(found) == ["keep"]
    assert sorted(s.kind for s in found.skipped) == ["disabled"] * 3
    assert all("[skills] disabled" in s.reason for s in found.skipped)


def test_symlink_loop_is_reported_and_the_walk_ends(tmp_path: Path) -> None:
    write_skill(tmp_path, "group/real")
    os.symlink(tmp_path, tmp_path / "group" / "back-to-root")
    os.symlink(tmp_path / "group", tmp_path / "group" / "self")
    found = walk(tmp_path)
    assert names(found) == ["real"]
    loops = [s for s in found.skipped if s.kind == "loop"]
    assert {Path(s.path).name for s in loops} == {"back-to-root", "self"}


def test_a_fan_of_links_is_scanned_once(tmp_path: Path) -> None:
    # ten links per level, eight levels: 10**8 paths if every link were followed (the
    # links stay inside the root: links out of it are refused, issue 10)
    store = tmp_path / ".levels"
    for level in range(8):
        here = store / f"level{level}"
        here.mkdir(parents=True)
        if level:
            for i in range(10):
                os.symlink(here, store / f"level{level - 1}" / f"link{i}")
    os.symlink(store / "level0", tmp_path / "level0")
    write_skill(store, "level7/bottom")
    found = walk(tmp_path)
    assert names(found) == ["bottom"]
    assert found.scanned_dirs <= 20


def test_symlinked_skill_folders_and_files_inside_the_root_work(tmp_path: Path) -> None:
    # issue 10: a link out of the root is refused (tests/skills/test_skill_secrets.py)
    root = tmp_path / "root"
    write_skill(root / ".store", "linked")
    os.symlink(root / ".store" / "linked", root / "linked")
    os.symlink(root / ".store" / "linked" / "SKILL.md", root / "flat.md")
    os.symlink(tmp_path / "missing", root / "dangling")
    found = walk(root)
    assert names(found) == ["linked"]  # the flat link is the same file: counted once
    assert found.skipped == []


def test_bad_files_are_skipped_with_reasons_and_good_ones_still_load(tmp_path: Path) -> None:
    write_skill(tmp_path, "good")
    (tmp_path / "no-front").mkdir()
    (tmp_path / "no-front" / "SKILL.md").write_text("no frontmatter here")
    write_skill(tmp_path, "broken", "name: [oops")
    write_skill(tmp_path, "odd-type", "name: odd\ndescription: d\ntype: nope")
    big = tmp_path / "big" / "SKILL.md"
    big.parent.mkdir()
    with big.open("wb") as handle:
        handle.truncate(10 * 1024 * 1024)
    found = walk(tmp_path)
    assert names(found) == ["good"]
    kinds = {Path(s.path).parent.name: s.kind for s in found.skipped}
    assert kinds == {
        "no-front": "invalid",
        "broken": "invalid",
        "odd-type": "unsupported-type",
        "big": "too-large",
    }
    assert all(s.source == "user" and s.reason for s in found.skipped)


def test_folder_budget_stops_a_runaway_walk(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"d{i:02d}" / "x").mkdir(parents=True)
    found = walk(tmp_path, max_dirs=10)
    assert found.scanned_dirs == 10
    assert [s.kind for s in found.skipped] == ["unreadable"]
    assert "stopped after scanning 10 folders" in found.skipped[0].reason


def _walk_as_nobody(root: Path) -> dict[str, object]:
    """Run discovery in a child process without root's power to read anything."""
    script = (
        "import json, os, sys\n"
        "import encodings.utf_8_sig\n"
        "from pathlib import Path\n"
        "from deftly.features.skills import SkillRoot, discover\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "found = discover([SkillRoot(Path(sys.argv[1]), 'extra')])\n"
        "print(json.dumps({'skills': [s.name for s in found.skills],\n"
        "                  'skipped': [s.summary() for s in found.skipped]}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_unreadable_folder_and_file_are_reported() -> None:
    # Real permissions: as root they do not bite, so the walk then runs as "nobody".
    base = Path(tempfile.mkdtemp(prefix="deftly-skills-perm-"))
    try:
        base.chmod(0o755)
        write_skill(base, "ok")
        write_skill(base, "locked-dir/inside")
        secret = write_skill(base, "locked-file")
        (base / "locked-dir").chmod(0o000)
        secret.chmod(0o000)
        if os.geteuid() == 0:
            data = _walk_as_nobody(base)
        else:
            found = discover([SkillRoot(base, "extra")])
            data = {
                "skills": [s.name for s in found.skills],
                "skipped": [s.summary() for s in found.skipped],
            }
        assert data["skills"] == ["ok"]
        skipped = {Path(str(s["path"])).name: s for s in data["skipped"]}  # type: ignore[attr-defined]
        assert skipped["locked-dir"]["kind"] == "unreadable"
        assert "Permission denied" in skipped["locked-dir"]["reason"]
        assert skipped["SKILL.md"]["kind"] == "unreadable"
        assert "permission denied" in skipped["SKILL.md"]["reason"]
    finally:
        (base / "locked-dir").chmod(0o755)
        shutil.rmtree(base)
