"""Safety policy: path access, secret files, rules, permissions, tool enable/disable."""

from deftly.policy.approval import (
    ApprovalRequest,
    ApprovalResponse,
    Approver,
    NonInteractiveApprover,
)
from deftly.policy.paths import PathOp, ResolvedPath, Workspace, normal_path, real_path
from deftly.policy.permissions import (
    Link,
    Mode,
    PermissionDecision,
    PermissionEngine,
    RuleBook,
    RuleKind,
    Verdict,
)
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
    resolved_rule_matcher,
)
from deftly.policy.sensitive import private_key_reason, sensitive_reason
from deftly.policy.tool_policy import PatternIssue, ToolPolicy, find_inactive_patterns

__all__ = [
    "ApprovalRequest",
    "ApprovalResponse",
    "Approver",
    "Link",
    "Mode",
    "NonInteractiveApprover",
    "PathOp",
    "PatternIssue",
    "PermissionDecision",
    "PermissionEngine",
    "ResolvedPath",
    "Rule",
    "RuleBook",
    "RuleKind",
    "RuleSyntaxError",
    "ToolPolicy",
    "Verdict",
    "Workspace",
    "escape_subject",
    "find_inactive_patterns",
    "glob_matches",
    "glob_rule_matcher",
    "literal_rule",
    "normal_path",
    "parse_rule",
    "path_matches",
    "path_rule_matcher",
    "private_key_reason",
    "real_path",
    "resolved_rule_matcher",
    "sensitive_reason",
]
