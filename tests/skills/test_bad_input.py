"""Bad input never stops discovery: every problem is skipped with a reason, and it ends."""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly.features.skills import Discovery, SkillRoot, SkillService, discover
from tests.skills.conftest import write_skill

CONTENTS = [
    "---\nname: good\ndescription: fine\n---\nbody",
    "---\ndescription: nameless\n---\nbody",
    "no front matter at all",
    "---\nname: [broken\n---\nx",
    "---\nname: x\ndescription: d\ntype: nope\n---\nx",
    "---\n- a list\n---\nx",
    "---\nname: two words\n---\nx",
    "---\nname: dup\ndescription: one of many\n---\nx",
    "---\nname: DUP\ndescription: same name, other case\n---\nx",
    "---\nunclosed: fence\nbody",
    "",
]
SEGMENTS = ["a", "b", "Dup", ".hidden", "node_modules", "SKILL.md", "notes.md", "README.md"]


def run_with_timeout(roots: list[SkillRoot], seconds: float = 60) -> Discovery:
    """Discovery in a thread, so a hang fails the test instead of freezing the suite."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["found"] = discover(roots)
        except BaseException as exc:  # the property under test: this never happens
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "discovery did not finish"
    assert "error" not in box, box.get("error")
    found = box["found"]
    assert isinstance(found, Discovery)
    return found


def check_invariants(found: Discovery) -> None:
    keys = [s.name.casefold() for s in found.skills]
    assert len(keys) == len(set(keys)), "two skills with one name"
    assert keys == sorted(keys, key=lambda k: k)  # sorted by name
    for skill in found.skills:
        assert skill.path.is_file() and skill.name and skill.description
    for skipped in found.skipped:
        assert skipped.path and skipped.reason and "\n" not in skipped.reason


def test_the_issue_list_of_bad_input_in_one_tree(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "good")
    (root / "no-front").mkdir(parents=True)
    (root / "no-front" / "SKILL.md").write_text("no frontmatter here")
    write_skill(root, "broken-yaml", "name: x\ndescription: [unclosed")
    write_skill(root, "unknown-type", "name: u\ndescription: d\ntype: workflow")
    os.symlink(root, root / "loop")
    huge = root / "huge" / "SKILL.md"
    huge.parent.mkdir()
    with huge.open("wb") as handle:
        handle.truncate(10 * 1024 * 1024)
    write_skill(root, "one/dup", description="first")
    write_skill(root, "two/dup", description="second")
    os.mkfifo(root / "fifo.md")
    found = run_with_timeout([SkillRoot(root, "project")])
    check_invariants(found)
    assert [(s.name, s.description) for s in found.skills] == [
        ("dup", "first"),
        ("good", "good skill"),
    ]
    kinds = sorted((Path(s.path).relative_to(root).parts[0], s.kind) for s in found.skipped)
    assert kinds == [
        ("broken-yaml", "invalid"),
        ("huge", "too-large"),
        ("loop", "loop"),
        ("no-front", "invalid"),
        ("two", "shadowed"),
        ("unknown-type", "unsupported-type"),
    ]  # the FIFO is not a regular file, so it is not even a candidate


def test_the_service_survives_a_broken_project(workspace: Path, skills_home: Path) -> None:
    skills = workspace / ".agents" / "skills"
    skills.mkdir(parents=True)
    os.symlink(skills, skills / "self")
    (skills / "bad.md").write_bytes(b"\xff\xfe binary \x00")
    service = SkillService(workspace, home=skills_home)
    assert [s.name for s in service.skills()] == ["commit", "review-changes", "write-skill"]
    assert {Path(s.path).name for s in service.skipped()} == {"self", "bad.md"}


entries = st.lists(
    st.tuples(
        st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4),
        st.sampled_from(["file", "dir", "link"]),
        st.sampled_from(CONTENTS),
        st.integers(min_value=0, max_value=20),
    ),
    max_size=25,
)


@settings(
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(entries)
def test_random_trees_never_break_discovery(plan: list[tuple[list[str], str, str, int]]) -> None:
    with tempfile.TemporaryDirectory(prefix="deftly-skills-fuzz-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        made_dirs = [root]
        for parts, kind, content, pick in plan:
            path = root.joinpath(*parts)
            try:
                if kind == "dir":
                    path.mkdir(parents=True, exist_ok=True)
                    made_dirs.append(path)
                elif kind == "file":
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(content)
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(made_dirs[pick % len(made_dirs)], path)
            except OSError:
                continue  # the plan clashed with itself (a file where a folder should be)
        found = run_with_timeout([SkillRoot(root, "user"), SkillRoot(root / "a", "extra")])
        check_invariants(found)
