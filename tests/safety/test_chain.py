"""The permission chain: its order in every mode, rules, session approvals, compound calls."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from deftly.contract import Accesses, RuleMatch, ToolExecution, ToolResult, ToolTraits, WriteHow
from deftly.policy import Workspace, glob_rule_matcher, literal_rule, path_rule_matcher
from deftly.policy.permissions import (
    CHAIN,
    Link,
    Mode,
    PermissionEngine,
    RuleBook,
    RuleKind,
    Verdict,
)

READ_ONLY = ToolTraits(read_only=True)
WRITES = ToolTraits()
REPLACE = WriteHow.REPLACE


NOTHING = Accesses.none()


def execution(
    accesses: Accesses | None = NOTHING,
    matcher: Callable[[str], bool | RuleMatch] | None = None,
    rule: str = "X",
) -> ToolExecution:
    return ToolExecution(
        accesses=accesses,
        matches_rule=matcher,
        approval_rule=rule,
        execute=lambda c: ToolResult.ok(""),
    )


@pytest.fixture
def git_ws(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
    (root / "src").mkdir()
    return root


@pytest.fixture
def plain_ws(tmp_path: Path) -> Path:
    root = tmp_path / "plain"
    root.mkdir()
    return root


def engine(root: Path, mode: str = "manual", **rules: list[str]) -> PermissionEngine:
    return PermissionEngine(Workspace(root), RuleBook.from_lists(**rules), mode)


# -- the order of the chain, in every mode ---------------------------------------------------

MODES = ["manual", "yolo", "auto"]


def scenarios(
    ws: Path, outside: Path
) -> dict[str, tuple[str, ToolExecution, ToolTraits, dict[str, list[str]]]]:
    inside_file = ws / "src" / "a.py"
    return {
        "deny-rule": ("Bash", execution(), WRITES, {"deny": ["Bash"]}),
        "deny-beats-allow-and-ask": (
            "Bash",
            execution(),
            WRITES,
            {"deny": ["Bash"], "allow": ["Bash"], "ask": ["Bash"]},
        ),
        "ask-rule": ("Bash", execution(), WRITES, {"ask": ["Bash"]}),
        "ask-beats-allow": ("Bash", execution(), WRITES, {"allow": ["Bash"], "ask": ["Bash"]}),
        "allow-rule": ("Bash", execution(), WRITES, {"allow": ["Bash"]}),
        "allow-beats-protected": (
            "Peek",
            execution(Accesses.read_file(ws / ".git/config")),
            READ_ONLY,
            {"allow": ["Peek"]},
        ),
        "secret-path": ("Peek", execution(Accesses.read_file(ws / ".env")), READ_ONLY, {}),
        "git-path": (
            "Write",
            execution(Accesses.write_file(ws / ".git" / "hooks" / "x")),
            WRITES,
            {},
        ),
        "read-only-inside": ("Peek", execution(Accesses.read_file(inside_file)), READ_ONLY, {}),
        "read-only-no-files": ("Echo", execution(), READ_ONLY, {}),
        "read-only-outside": ("Peek", execution(Accesses.read_file(outside / "a")), READ_ONLY, {}),
        "read-only-touches-anything": ("Peek", execution(None), READ_ONLY, {}),
        "write-inside-git": (
            "Write",
            execution(Accesses.write_file(inside_file, REPLACE)),
            WRITES,
            {},
        ),
        "edit-inside-git": (
            "Edit",
            execution(Accesses.read_write_file(inside_file, REPLACE)),
            WRITES,
            {},
        ),
        "write-outside": (
            "Write",
            execution(Accesses.write_file(outside / "a", REPLACE)),
            WRITES,
            {},
        ),
        "write-declares-nothing": ("Write", execution(Accesses.none()), WRITES, {}),
        "other-writer-inside": (
            "Scribble",
            execution(Accesses.write_file(inside_file)),
            WRITES,
            {},
        ),
        "mcp-glob-deny": (
            "mcp__github__delete_repo",
            execution(),
            WRITES,
            {"deny": ["mcp__github__*"]},
        ),
        "shell": ("Bash", execution(None), WRITES, {}),
    }


EXPECTED: dict[str, dict[str, tuple[Verdict, Link]]] = {
    "deny-rule": dict(zip(MODES, [(Verdict.DENY, Link.DENY_RULES)] * 3, strict=True)),
    "deny-beats-allow-and-ask": dict(
        zip(MODES, [(Verdict.DENY, Link.DENY_RULES)] * 3, strict=True)
    ),
    "mcp-glob-deny": dict(zip(MODES, [(Verdict.DENY, Link.DENY_RULES)] * 3, strict=True)),
    "ask-rule": {
        "manual": (Verdict.ASK, Link.ASK_RULES),
        "yolo": (Verdict.ASK, Link.ASK_RULES),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "ask-beats-allow": {
        "manual": (Verdict.ASK, Link.ASK_RULES),
        "yolo": (Verdict.ASK, Link.ASK_RULES),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "allow-rule": {
        "manual": (Verdict.APPROVE, Link.ALLOW_RULES),
        "yolo": (Verdict.APPROVE, Link.ALLOW_RULES),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "allow-beats-protected": {
        "manual": (Verdict.APPROVE, Link.ALLOW_RULES),
        "yolo": (Verdict.APPROVE, Link.ALLOW_RULES),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "secret-path": {
        "manual": (Verdict.ASK, Link.PROTECTED_PATHS),
        "yolo": (Verdict.ASK, Link.PROTECTED_PATHS),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "git-path": {
        "manual": (Verdict.ASK, Link.PROTECTED_PATHS),
        "yolo": (Verdict.ASK, Link.PROTECTED_PATHS),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "read-only-inside": {
        "manual": (Verdict.APPROVE, Link.READ_ONLY),
        "yolo": (Verdict.APPROVE, Link.YOLO_MODE),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "read-only-no-files": {
        "manual": (Verdict.APPROVE, Link.READ_ONLY),
        "yolo": (Verdict.APPROVE, Link.YOLO_MODE),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "read-only-outside": {
        "manual": (Verdict.ASK, Link.FALLBACK),
        "yolo": (Verdict.APPROVE, Link.YOLO_MODE),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "read-only-touches-anything": {
        "manual": (Verdict.ASK, Link.FALLBACK),
        "yolo": (Verdict.APPROVE, Link.YOLO_MODE),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "write-inside-git": {
        "manual": (Verdict.APPROVE, Link.RESTORABLE_WRITE),
        "yolo": (Verdict.APPROVE, Link.YOLO_MODE),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "edit-inside-git": {
        "manual": (Verdict.APPROVE, Link.RESTORABLE_WRITE),
        "yolo": (Verdict.APPROVE, Link.YOLO_MODE),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "write-outside": {
        "manual": (Verdict.ASK, Link.FALLBACK),
        "yolo": (Verdict.APPROVE, Link.YOLO_MODE),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "write-declares-nothing": {
        "manual": (Verdict.ASK, Link.FALLBACK),
        "yolo": (Verdict.APPROVE, Link.YOLO_MODE),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "other-writer-inside": {
        "manual": (Verdict.ASK, Link.FALLBACK),
        "yolo": (Verdict.APPROVE, Link.YOLO_MODE),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
    "shell": {
        "manual": (Verdict.ASK, Link.FALLBACK),
        "yolo": (Verdict.APPROVE, Link.YOLO_MODE),
        "auto": (Verdict.APPROVE, Link.AUTO_MODE),
    },
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_chain_order_in_every_mode(git_ws: Path, tmp_path: Path, name: str, mode: str) -> None:
    tool, call, traits, rules = scenarios(git_ws, tmp_path / "elsewhere")[name]
    decision = engine(git_ws, mode, **rules).decide(tool, call, traits)
    assert (decision.verdict, decision.link) == EXPECTED[name][mode], decision.explain()
    # every link before the deciding one passed the call on, in chain order
    assert [s.link for s in decision.steps] == list(CHAIN[: decision.link.position])
    assert all(s.verdict is None for s in decision.steps[:-1])
    assert decision.steps[-1].verdict is decision.verdict
    assert decision.mode == Mode(mode)


def test_changing_a_file_outside_a_git_work_tree_asks(plain_ws: Path) -> None:
    """Issue 10 §2: creating a new file is approved anywhere in the workspace (it destroys
    nothing); changing an existing file no one can restore asks."""
    new = engine(plain_ws).decide(
        "Write", execution(Accesses.write_file(plain_ws / "a.py", REPLACE)), WRITES
    )
    assert (new.verdict, new.link) == (Verdict.APPROVE, Link.RESTORABLE_WRITE)
    (plain_ws / "b.py").write_text("old\n")
    call = execution(Accesses.write_file(plain_ws / "b.py", REPLACE))
    decision = engine(plain_ws).decide("Write", call, WRITES)
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.FALLBACK)
    git_step = next(s for s in decision.steps if s.link is Link.RESTORABLE_WRITE)
    assert "not in a git work tree" in git_step.detail


def test_a_git_worktree_file_and_its_control_dir(tmp_path: Path) -> None:
    """`.git` as a file (a linked worktree): its gitdir is protected, writes are approved."""
    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True, timeout=60)
    control = tmp_path / "elsewhere" / "wt-control"
    control.mkdir(parents=True)
    (control / "HEAD").write_text("ref: refs/heads/x\n")
    tree = tmp_path / "linked"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {control}\n")
    eng = engine(tree)
    write = eng.decide("Write", execution(Accesses.write_file(tree / "a.txt", REPLACE)), WRITES)
    assert write.link is Link.RESTORABLE_WRITE
    eng.set_mode("yolo")
    touch = eng.decide("Bash", execution(Accesses.write_file(control / "HEAD")), WRITES)
    assert (touch.verdict, touch.link) == (Verdict.ASK, Link.PROTECTED_PATHS)
    assert "control directory" in touch.reason


def test_a_symlink_inside_the_tree_pointing_out_is_not_a_git_write(
    git_ws: Path, tmp_path: Path
) -> None:
    away = tmp_path / "away"
    away.mkdir()
    (git_ws / "link").symlink_to(away)
    decision = engine(git_ws).decide(
        "Write", execution(Accesses.write_file(git_ws / "link/a", REPLACE)), WRITES
    )
    assert decision.link is Link.FALLBACK


def test_private_keys_by_content_are_protected(git_ws: Path) -> None:
    key = git_ws / "deploy.key"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nx\n")
    decision = engine(git_ws, "yolo").decide("Peek", execution(Accesses.read_file(key)), READ_ONLY)
    assert (decision.verdict, decision.link) == (Verdict.ASK, Link.PROTECTED_PATHS)


def test_explanations_name_the_link_the_rule_and_its_origin(git_ws: Path) -> None:
    rules = RuleBook.from_lists(deny=["Bash(rm *)"], origin=lambda text: "/etc/conf.toml:7")
    eng = PermissionEngine(Workspace(git_ws), rules)
    decision = eng.decide("Bash", execution(matcher=glob_rule_matcher("rm x")), WRITES)
    assert decision.verdict is Verdict.DENY and decision.rule is not None
    text = decision.explain()
    assert "DENY" in text and "deny-rules" in text and "/etc/conf.toml:7" in text
    assert "Bash(rm *)" in decision.reason
    data = decision.to_json()
    assert data["rule"] == {"kind": "deny", "rule": "Bash(rm *)", "origin": "/etc/conf.toml:7"}
    asked = eng.decide("Bash", execution(matcher=glob_rule_matcher("ls")), WRITES)
    for link in CHAIN:
        assert link.label in asked.explain()


# -- modes -----------------------------------------------------------------------------------


def test_mode_can_change_at_runtime_and_is_validated(git_ws: Path) -> None:
    eng = engine(git_ws)
    seen: list[tuple[Mode, Mode]] = []
    eng.on_mode_change(lambda old, new: seen.append((old, new)))
    call = execution(None)
    assert eng.decide("Bash", call, WRITES).verdict is Verdict.ASK
    assert eng.set_mode("yolo") is Mode.MANUAL
    assert eng.decide("Bash", call, WRITES).verdict is Verdict.APPROVE
    eng.set_mode("yolo")
    assert seen == [(Mode.MANUAL, Mode.YOLO)]
    with pytest.raises(Exception, match="unknown permission mode 'reckless'"):
        eng.set_mode("reckless")
    assert eng.mode is Mode.YOLO


# -- rules -----------------------------------------------------------------------------------


def test_rules_match_by_name_glob_and_pattern(git_ws: Path) -> None:
    eng = engine(git_ws, allow=["Bash(git *)", "Peek(src/**)", "mcp__github__*"])
    git = execution(matcher=glob_rule_matcher("git status"))
    npm = execution(matcher=glob_rule_matcher("npm test"))
    deep = execution(matcher=glob_rule_matcher("git log src/a"))
    assert eng.decide("Bash", git, WRITES).link is Link.ALLOW_RULES
    assert eng.decide("Bash", npm, WRITES).link is Link.FALLBACK
    assert eng.decide("Bash", deep, WRITES).link is Link.ALLOW_RULES, "* crosses / in commands"
    path = git_ws / "SRC" / "Deep" / ".hidden"
    peek = execution(Accesses.read_file(git_ws / "x"), matcher=path_rule_matcher(path, cwd=git_ws))
    assert eng.decide("Peek", peek, WRITES).link is Link.ALLOW_RULES, "paths: any case, dotfiles"
    assert eng.decide("mcp__github__list", execution(), WRITES).link is Link.ALLOW_RULES
    assert eng.decide("mcp__gitlab__list", execution(), WRITES).link is Link.FALLBACK
    assert eng.decide("bash", git, WRITES).link is Link.FALLBACK, "tool names are case-sensitive"


def test_a_pattern_rule_never_matches_a_call_without_a_matcher(git_ws: Path) -> None:
    eng = engine(git_ws, allow=["Custom(anything)"], deny=["Other(x)"])
    assert eng.decide("Custom", execution(), WRITES).link is Link.FALLBACK
    assert eng.decide("Other", execution(), WRITES).verdict is Verdict.ASK


def test_a_matcher_that_raises_fails_closed(git_ws: Path) -> None:
    def broken(pattern: str) -> bool:
        raise ValueError("bad matcher")

    denying = engine(git_ws, deny=["Tool(x)"]).decide("Tool", execution(matcher=broken), WRITES)
    assert denying.verdict is Verdict.DENY and "fails closed" in denying.reason
    allowing = engine(git_ws, allow=["Tool(x)"]).decide("Tool", execution(matcher=broken), WRITES)
    assert allowing.link is Link.FALLBACK


def test_rules_can_be_added_and_removed_from_python(git_ws: Path) -> None:
    eng = engine(git_ws)
    call = execution(matcher=glob_rule_matcher("make"))
    eng.rules.add("allow", "Bash(make)")
    assert eng.decide("Bash", call, WRITES).link is Link.ALLOW_RULES
    entry = eng.rules.add(RuleKind.DENY, "Bash")
    assert entry.origin == "Python"
    assert eng.decide("Bash", call, WRITES).verdict is Verdict.DENY
    assert eng.rules.remove("deny", "Bash") and not eng.rules.remove("deny", "Bash")
    assert eng.decide("Bash", call, WRITES).link is Link.ALLOW_RULES


# -- session approvals -----------------------------------------------------------------------


def test_session_approvals_match_only_the_literal_call(git_ws: Path) -> None:
    eng = engine(git_ws)
    eng.session.add(literal_rule("Bash", "printf *"))
    star = execution(matcher=glob_rule_matcher("printf *"))
    hello = execution(matcher=glob_rule_matcher("printf hello"))
    assert eng.decide("Bash", star, WRITES).link is Link.SESSION_APPROVALS
    assert eng.decide("Bash", hello, WRITES).link is Link.FALLBACK
    eng.session.add(literal_rule("Bash", "printf *"))
    assert len(eng.session) == 1, "remembered once"


def test_session_approvals_beat_ask_rules_but_never_a_deny(git_ws: Path) -> None:
    call = execution(matcher=glob_rule_matcher("git push"))
    asked = engine(git_ws, ask=["Bash"])
    asked.session.add("Bash(git push)")
    assert asked.decide("Bash", call, WRITES).link is Link.SESSION_APPROVALS
    denied = engine(git_ws, deny=["Bash(git push)"])
    denied.session.add("Bash(git push)")
    denied.set_mode("auto")
    assert denied.decide("Bash", call, WRITES).verdict is Verdict.DENY


def test_a_bare_approval_rule_covers_every_call_of_the_tool(git_ws: Path) -> None:
    eng = engine(git_ws)
    eng.session.add("mcp__db__query")
    assert eng.decide("mcp__db__query", execution(), WRITES).link is Link.SESSION_APPROVALS


# -- compound calls: PARTIAL vs FULL ----------------------------------------------------------


def segments_matcher(command: str) -> Callable[[str], RuleMatch]:
    """What the shell tool does for `a && b`: FULL when every segment matches, PARTIAL
    when some do (a stand-in for Bash, which another module owns)."""
    parts = [p.strip() for p in command.split("&&")]

    def match(pattern: str) -> RuleMatch:
        hits = [glob_rule_matcher(p)(pattern) for p in parts]
        return RuleMatch.FULL if all(hits) else RuleMatch.PARTIAL if any(hits) else RuleMatch.NONE

    return match


@pytest.mark.parametrize(
    ("rules", "command", "expected"),
    [
        ({"allow": ["Bash(git *)"]}, "git status && git diff", (Verdict.APPROVE, Link.ALLOW_RULES)),
        ({"allow": ["Bash(git *)"]}, "git status && rm -rf x", (Verdict.ASK, Link.FALLBACK)),
        ({"deny": ["Bash(rm *)"]}, "git status && rm -rf x", (Verdict.DENY, Link.DENY_RULES)),
        ({"deny": ["Bash(rm *)"]}, "git status && ls", (Verdict.ASK, Link.FALLBACK)),
        (
            {"ask": ["Bash(curl *)"], "allow": ["Bash(*)"]},
            "ls && curl x",
            (Verdict.ASK, Link.ASK_RULES),
        ),
        ({"allow": ["Bash(*)"]}, "ls && curl x", (Verdict.APPROVE, Link.ALLOW_RULES)),
    ],
)
def test_compound_commands(
    git_ws: Path, rules: dict[str, list[str]], command: str, expected: tuple[Verdict, Link]
) -> None:
    eng = engine(git_ws, **rules)
    decision = eng.decide("Bash", execution(matcher=segments_matcher(command)), WRITES)
    assert (decision.verdict, decision.link) == expected
    if expected[0] is Verdict.DENY:
        assert "some parts of the call match" in decision.reason


def test_a_session_approval_needs_a_full_match(git_ws: Path) -> None:
    eng = engine(git_ws)
    eng.session.add("Bash(git status)")
    partial = execution(matcher=segments_matcher("git status && rm -rf /"))
    assert eng.decide("Bash", partial, WRITES).link is Link.FALLBACK
    full = execution(matcher=segments_matcher("git status && git status"))
    assert eng.decide("Bash", full, WRITES).link is Link.SESSION_APPROVALS
