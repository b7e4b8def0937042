"""Rules against the built-in file tools: a rule sees both the path as given and where a
symlink really leads (deny on either, allow only on both)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from deftly import Runtime


def _repo(workspace: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "docs").mkdir()
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('app')\n")
    (workspace / "docs" / "guide.md").write_text("# guide\n")
    os.symlink(workspace / "src" / "app.py", workspace / "docs" / "app-link.py")
    return workspace


async def test_a_deny_rule_on_the_given_path_covers_a_link_out_of_it(workspace: Path) -> None:
    _repo(workspace)
    config = {"permissions": {"deny": ["Read(docs/**)", "Edit(src/**)"]}}
    async with Runtime(workspace, config=config, plugins=False) as rt:
        via_link = await rt.call("Read", {"path": "docs/app-link.py"})
        direct = await rt.call("Read", {"path": "src/app.py"})
        edit_via_link = await rt.call(
            "Edit", {"path": "docs/app-link.py", "old_string": "app", "new_string": "x"}
        )
    assert via_link.is_error and "denied" in via_link.text
    assert not direct.is_error and "print('app')" in direct.text
    assert edit_via_link.is_error and "denied" in edit_via_link.text
    assert (workspace / "src" / "app.py").read_text() == "print('app')\n"


async def test_an_allow_rule_must_cover_where_a_link_leads(workspace: Path, tmp_path: Path) -> None:
    _repo(workspace)
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    os.symlink(outside, workspace / "docs" / "escape.txt")
    config = {"permissions": {"allow": [f"Read({workspace}/docs/**)"]}}
    async with Runtime(workspace, config=config, plugins=False) as rt:
        inside = await rt.call("Read", {"path": f"{workspace}/docs/guide.md"})
        escaped = await rt.call("Read", {"path": f"{workspace}/docs/escape.txt"})
    assert not inside.is_error
    assert escaped.is_error and "needs approval" in escaped.text
