"""Skill discovery on a generated tree of 1,000 skills, against a bare `os.walk`.

The tree: 1,000 skill folders spread over nested groups (two levels), each holding a
SKILL.md of about 600 bytes and two payload files, plus 50 flat skills at the top. Floors,
measured in the same run on the same tree: a bare `os.walk` that only lists folders, and
`os.walk` plus reading every skill file (what discovery cannot avoid). Target: discovery
well under 0.5 s.

Also: the model listing for the whole catalog, and rendering one skill with arguments.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import best_of, clock, isolate, median_of, row
from deftly.config.skills import SkillsConfig
from deftly.features.skills import SkillRoot, SkillService, discover, model_listing, skill_block

SKILLS = 1_000
FLAT = 50
GROUPS = 20

BODY = """Steps:

1. Read the files named in $ARGUMENTS and the tests beside them.
2. Run `python ${DEFTLY_SKILL_DIR}/scripts/check.py $0` and read its report.
3. Fix what the report lists, smallest change first; keep the public API as it is.
4. Run the tests again and summarise what changed and why, in three lines at most.
"""


def build_tree(root: Path) -> int:
    """Write the tree; returns the number of skill files written."""
    written = 0
    for i in range(SKILLS):
        group = root / f"group-{i % GROUPS:02d}" / f"team-{i % 7}"
        folder = group / f"skill-{i:04d}"
        (folder / "scripts").mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\ndescription: Skill number {i}, which fixes one kind of "
            f"problem in module {i % 37} and reports what it changed.\n"
            f"when-to-use: when module {i % 37} misbehaves\narguments: [target]\n---\n{BODY}",
            encoding="utf-8",
        )
        (folder / "scripts" / "check.py").write_text("print('ok')\n")
        (folder / "reference.md").write_text("# Reference\n" + "detail line\n" * 40)
        written += 1
    for i in range(FLAT):
        (root / f"flat-{i:02d}.md").write_text(f"# Flat skill {i}\n\nDo flat thing {i}.\n")
        written += 1
    return written


def bare_walk(root: Path) -> float:
    start = clock()
    count = 0
    for _dirpath, dirnames, _filenames in os.walk(root):
        count += len(dirnames)
    return clock() - start


def walk_and_read(root: Path) -> float:
    start = clock()
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            if name == "SKILL.md" or (dirpath == str(root) and name.endswith(".md")):
                with open(os.path.join(dirpath, name), "rb") as handle:
                    handle.read()
    return clock() - start


def main() -> None:
    home = isolate()
    base = Path(tempfile.mkdtemp(prefix="deftly-bench-skills-"))
    try:
        root = base / "skills"
        files = build_tree(root)
        roots = [SkillRoot(root, "user")]
        found = discover(roots)
        assert len(found.skills) == files, (len(found.skills), found.skipped[:3])

        def time_discover() -> float:
            start = clock()
            discover(roots)
            return clock() - start

        def time_service() -> float:
            workspace = base / "ws"
            workspace.mkdir(exist_ok=True)
            start = clock()
            service = SkillService(
                workspace,
                SkillsConfig(extra_dirs=[str(root)]),
                home=home,
                packages=False,
            )
            service.skills()
            return clock() - start

        walk = best_of(7, lambda: bare_walk(root))
        read = best_of(7, lambda: walk_and_read(root))
        disc = best_of(7, time_discover)
        disc_median = median_of(7, time_discover)
        svc = best_of(5, time_service)

        print(f"skill discovery, {files:,} skills ({SKILLS:,} folders + {FLAT} flat files)")
        row("os.walk of the tree (floor)", walk * 1e3, "ms")
        row("os.walk + read every skill file", read * 1e3, "ms", walk * 1e3)
        row(
            "discover(): walk, read, parse, merge (best)",
            disc * 1e3,
            "ms",
            walk * 1e3,
            "target < 500 ms",
        )
        row("discover() (median of 7)", disc_median * 1e3, "ms", walk * 1e3)
        row("SkillService: roots + discovery + built-ins", svc * 1e3, "ms", walk * 1e3)

        skills = found.skills
        listing_time = best_of(7, lambda: _time(lambda: model_listing(skills, max_chars=None)))
        size = len(model_listing(skills, max_chars=None))
        one = skills[0]
        per_render = best_of(
            7,
            lambda: (
                _time(
                    lambda: [
                        skill_block(one, trigger="model-tool", args="src/app.py -v")
                        for _ in range(1_000)
                    ]
                )
                / 1_000
            ),
        )
        print("\nrendering")
        row(f"model listing of {len(skills):,} skills ({size:,} chars)", listing_time * 1e3, "ms")
        row("one <skill-loaded> block with arguments", per_render * 1e6, "µs")
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


def _time(fn: Callable[[], object]) -> float:
    start = clock()
    fn()
    return clock() - start


if __name__ == "__main__":
    main()
