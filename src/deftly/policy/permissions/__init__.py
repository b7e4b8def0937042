"""The permission engine: modes, rules from config, session approvals, the decision chain."""

from deftly.policy.permissions.decision import CHAIN, Link, PermissionDecision, Step, Verdict
from deftly.policy.permissions.engine import FILE_WRITE_RULE, PermissionEngine, SeenFiles
from deftly.policy.permissions.git import GitTree, find_git_tree, has_git_component
from deftly.policy.permissions.modes import MODES, Mode, parse_mode
from deftly.policy.permissions.rulebook import (
    RuleBook,
    RuleEntry,
    RuleHit,
    RuleKind,
    SessionApprovals,
    covers,
    match_rule,
)

__all__ = [
    "CHAIN",
    "FILE_WRITE_RULE",
    "MODES",
    "GitTree",
    "Link",
    "Mode",
    "PermissionDecision",
    "PermissionEngine",
    "RuleBook",
    "RuleEntry",
    "RuleHit",
    "RuleKind",
    "SeenFiles",
    "SessionApprovals",
    "Step",
    "Verdict",
    "covers",
    "find_git_tree",
    "has_git_component",
    "match_rule",
    "parse_mode",
]
