"""The caches of the per-call path: they never change a verdict.

`one_look` lets one call's resolution and checks share each real-path lookup; the rule
book remembers which rule covers a resolved path; secret names are judged once per text.
On random trees with random links (inside and outside the workspace, chains, loops, into
secret files), changed at random between calls, every verdict under the caches equals the
verdict worked out afresh.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deftly.contract import Accesses, ToolExecution, ToolResult, ToolTraits
from deftly.contract.errors import PathSecurityError
from deftly.policy import PathOp, Workspace, resolved_rule_matcher
from deftly.policy.paths import Lookups, ResolvedPath, one_look
from deftly.policy.permissions import PermissionEngine, RuleBook
from deftly.policy.permissions.rulebook import RuleKind
from deftly.policy.sensitive import _sensitive_text, sensitive_reason

# Names a tree is built from: plain files, secrets, directories, and what links may be.
FILES = ["f.txt", "g.py", ".env", "id_rsa", "notes.md"]
DIRS = ["a", "b", "a/c"]
LINK_SPOTS = ["l1", "a/l2", "b/l3", "a/c/l4"]
TARGETS = [
    "f.txt",
    "a",
    "a/c",
    "../outside",
    "../outside/s.txt",
    ".env",
    "id_rsa",
    "l1",  # chains and loops, depending on where l1 leads
    "a/l2",
    "missing",
    "/nonexistent/x",
]
RAWS = [
    "f.txt",
    "l1",
    "l1/f.txt",
    "a/l2",
    "a/l2/g.py",
    "b/l3/.env",
    "a/c/l4/notes.md",
    "a/../l1",
    "l1/../f.txt",
    "a/c/l4/../g.py",
    ".env",
    "b/../id_rsa",
    "new/file.txt",
]
RULE_TEXTS = [
    "Read",
    "Read(a/**)",
    "Read(**/.env)",
    "Read(l1/**)",
    "Read(*.txt)",
    "Read(../outside/**)",
    "Read(!a/**)",
    "Read(b/**)",
    "Write(**)",
    "Bash(ls *)",
]

links = st.dictionaries(st.sampled_from(LINK_SPOTS), st.sampled_from(TARGETS), max_size=4)
changes = st.lists(
    st.tuples(st.sampled_from(LINK_SPOTS), st.sampled_from([*TARGETS, None])), max_size=3
)


def build(root: Path, layout: dict[str, str]) -> Workspace:
    ws = root / "ws"
    for directory in DIRS:
        (ws / directory).mkdir(parents=True, exist_ok=True)
    for name in FILES:
        for directory in ("", "a/", "b/"):
            (ws / directory / name).write_text("x\n")
    outside = root / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "s.txt").write_text("outside\n")
    for spot, target in layout.items():
        relink(ws, spot, target)
    return Workspace(ws)


def relink(ws: Path, spot: str, target: str | None) -> None:
    """Make `spot` a link to `target` (None: remove it), whatever it was."""
    path = ws / spot
    if path.is_symlink() or path.is_file():
        path.unlink()
    if target is not None and path.parent.is_dir() and not path.exists():
        os.symlink(target, path)


def verdict(workspace: Workspace, raw: str) -> tuple[str, ...]:
    """What the policy says of `raw`: the refusal's code, or where it leads and whether it
    is outside, and what the engine's containment check says of that real path."""
    try:
        found = workspace.locate(raw, PathOp.READ)
    except PathSecurityError as exc:
        return ("refused", exc.code, exc.resolved or "")
    inside = workspace.contains(found.real)
    again = workspace.real_path(str(found.lexical))
    return ("ok", str(found.real), str(found.outside), str(inside), str(again))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=links, steps=st.lists(st.tuples(st.sampled_from(RAWS), changes), max_size=6))
def test_one_look_verdicts_equal_fresh_ones(
    layout: dict[str, str], steps: list[tuple[str, list[tuple[str, str | None]]]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = build(Path(tmp), layout)
        for raw, swaps in steps:
            fresh = verdict(workspace, raw)
            with one_look():
                cached = verdict(workspace, raw)
                assert verdict(workspace, raw) == cached  # asked twice in one look
            assert cached == fresh, raw
            for spot, target in swaps:  # the tree changes between calls
                relink(workspace.root, spot, target)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=links, steps=st.lists(st.tuples(st.sampled_from(RAWS), changes), max_size=8))
def test_a_batch_lookups_equal_fresh_ones_when_cleared_on_writes(
    layout: dict[str, str], steps: list[tuple[str, list[tuple[str, str | None]]]]
) -> None:
    """As a batch keeps them: carried from call to call, cleared by a call that may write
    (here: whenever the tree is changed), they answer as a fresh look would."""
    with tempfile.TemporaryDirectory() as tmp:
        workspace = build(Path(tmp), layout)
        lookups = Lookups()
        for raw, swaps in steps:
            fresh = verdict(workspace, raw)
            with one_look(lookups):
                assert verdict(workspace, raw) == fresh, raw
            for spot, target in swaps:
                relink(workspace.root, spot, target)
            if swaps:
                lookups.clear()


def _read_execution(found: ResolvedPath, workspace: Workspace) -> ToolExecution:
    return ToolExecution(
        execute=lambda ctx: ToolResult.ok(""),
        accesses=Accesses.read_file(found.real),
        approval_rule="",
        matches_rule=resolved_rule_matcher(found, cwd=workspace.cwd, home=workspace.home),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    layout=links,
    rules=st.lists(
        st.tuples(st.sampled_from(list(RuleKind)), st.sampled_from(RULE_TEXTS)), max_size=8
    ),
    steps=st.lists(
        st.tuples(
            st.sampled_from(RAWS),
            changes,
            st.one_of(
                st.none(),
                st.tuples(st.sampled_from(list(RuleKind)), st.sampled_from(RULE_TEXTS)),
            ),
        ),
        max_size=6,
    ),
)
def test_remembered_rule_hits_equal_fresh_ones(
    layout: dict[str, str],
    rules: list[tuple[RuleKind, str]],
    steps: list[tuple[str, list[tuple[str, str | None]], tuple[RuleKind, str] | None]],
) -> None:
    """The rule book's remembered answers, and the engine's decisions on them, equal
    those of a book that never remembers, across tree changes and rules added and
    removed between calls."""
    with tempfile.TemporaryDirectory() as tmp:
        workspace = build(Path(tmp), layout)
        book = RuleBook()
        for kind, text in rules:
            book.add(kind, text)
        engine = PermissionEngine(workspace, book)
        traits = ToolTraits(read_only=True)
        for raw, swaps, change in steps:
            try:
                with one_look():
                    found = workspace.locate(raw, PathOp.READ)
                    execution = _read_execution(found, workspace)
                    decided = engine.decide("Read", execution, traits)
            except PathSecurityError:
                continue
            for kind in RuleKind:
                entries = [e for e in book.entries if e.kind is kind]
                fresh = RuleBook._first_hit(
                    [e for e in entries if e.rule.matches_tool("Read")], kind, "Read", execution
                )
                assert book.first_hit(kind, "Read", execution) == fresh
            alone = PermissionEngine(workspace, RuleBook(list(book.entries)))
            again = alone.decide("Read", _read_execution(found, workspace), traits)
            assert (decided.verdict, decided.link, decided.reason) == (
                again.verdict,
                again.link,
                again.reason,
            )
            for spot, target in swaps:
                relink(workspace.root, spot, target)
            if change is not None:
                kind, text = change
                if not book.remove(kind, text):
                    book.add(kind, text)


@given(
    st.lists(st.sampled_from([*FILES, ".aws", "credentials", "id_rsa.bak", "x.pem"]), max_size=4)
)
def test_remembered_secret_names_equal_fresh_ones(parts: list[str]) -> None:
    text = "/" + "/".join(parts)
    fresh = _sensitive_text.__wrapped__(text)
    assert sensitive_reason(text) == fresh
    assert sensitive_reason(Path(text)) == fresh  # remembered by text, whatever its type


@given(
    st.lists(st.sampled_from(["/", "/w", "/w/", "/w/a", "/wa", "/x/y"]), min_size=1, max_size=3),
    st.sampled_from(["/", "/w", "/w/", "/w/a", "/w/a/b", "/wa", "/wab", "/x", "/x/y/z", "/w2"]),
)
def test_containment_at_once_equals_root_by_root(roots: list[str], path: str) -> None:
    from deftly.policy.paths import _is_within, _Within

    assert _Within.of(tuple(roots)).holds(path) == any(_is_within(path, r) for r in roots)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=links, raws=st.lists(st.sampled_from(RAWS), min_size=1, max_size=6))
def test_remembered_containment_follows_the_directories(
    layout: dict[str, str], raws: list[str]
) -> None:
    """The containment answers a batch remembers change when a directory is added or
    removed within the same look-ups: each equals a fresh check before and after."""
    with tempfile.TemporaryDirectory() as tmp:
        workspace = build(Path(tmp), layout)
        lookups = Lookups()
        targets = [os.path.abspath(workspace.root / raw) for raw in raws]
        targets.append(str(Path(tmp) / "outside" / "s.txt"))
        inside: list[bool] = []
        for step in ("before", "added", "removed"):
            with one_look(lookups):
                if step == "added":
                    workspace.add_directory(Path(tmp) / "outside")
                elif step == "removed":
                    assert workspace.remove_directory(Path(tmp) / "outside")
                    assert not workspace.remove_directory(Path(tmp) / "outside")
            fresh = [workspace.contains(t) for t in targets]
            with one_look(lookups):
                assert [workspace.contains(t) for t in targets] == fresh
                assert [workspace.contains(t) for t in targets] == fresh
            inside.append(fresh[-1])
        assert inside == [False, True, False]
