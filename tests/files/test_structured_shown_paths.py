"""Grep's fast path for showing rg's paths (a prefix strip) says exactly what
`shown_path` says, for paths under the working directory and elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from deftly.features.files.common import ShownPaths, shown_path
from deftly.policy import Workspace

_PART = st.sampled_from(["a", "b c", ".", "..", "", "é", ".hidden", "x:y", "-"])
_ROOT = Path("/srv/deftly-shown-paths/ws")  # never touched: both are lexical
_WORKSPACE = Workspace(_ROOT)
_TAILS = st.lists(_PART, min_size=0, max_size=5).map("/".join)


@given(tail=_TAILS, inside=st.booleans(), slash=st.booleans())
def test_fast_shown_paths_equal_shown_path(tail: str, inside: bool, slash: bool) -> None:
    root, workspace = _ROOT, _WORKSPACE
    base = os.fspath(root) if inside else "/elsewhere/ws2"
    raw = base + "/" + tail + ("/" if slash else "")
    fast = ShownPaths(workspace)(os.fsencode(raw))
    assert fast == shown_path(Path(raw), workspace)


def test_a_path_under_the_cwd_is_relative(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    show = ShownPaths(Workspace(root))
    assert show(os.fsencode(root / "src" / "a.py")) == "src/a.py"
    assert show(os.fsencode(tmp_path / "wsx" / "a.py")) == os.fspath(tmp_path / "wsx" / "a.py")
