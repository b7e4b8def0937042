"""Safety policy: path access, secret files, rules, tool enable/disable."""

from deftly.policy.paths import PathOp, ResolvedPath, Workspace, real_path
from deftly.policy.rules import (
    Rule,
    RuleSyntaxError,
    escape_subject,
    glob_matches,
    glob_rule_matcher,
    literal_rule,
    parse_rule,
    path_matches,
    path_rule_matcher,
)
from deftly.policy.sensitive import private_key_reason, sensitive_reason
from deftly.policy.tool_policy import PatternIssue, ToolPolicy, find_inactive_patterns

__all__ = [
    "PathOp",
    "PatternIssue",
    "ResolvedPath",
    "Rule",
    "RuleSyntaxError",
    "ToolPolicy",
    "Workspace",
    "escape_subject",
    "find_inactive_patterns",
    "glob_matches",
    "glob_rule_matcher",
    "literal_rule",
    "parse_rule",
    "path_matches",
    "path_rule_matcher",
    "private_key_reason",
    "real_path",
    "sensitive_reason",
]
