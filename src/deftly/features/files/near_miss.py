"""When Edit's `old_string` is not in the file: find where it almost is, and say how.

Matching stays exact; this only explains a miss. Lines are compared with their
whitespace collapsed (indentation, tabs versus spaces, trailing spaces, CR), and when
that finds the text, the hint gives the line numbers, what differs, and the file's real
text as a JSON string, which is exactly what `old_string` has to be. Nothing is ever
replaced on the strength of such a match.
"""

from __future__ import annotations

import json
import re

from deftly.contract.records import frozen

MAX_PLACES = 5
MAX_SHOWN_CHARS = 2_000
MAX_VIEW_CHARS = 32 * 1024 * 1024
_READ_PREFIX = re.compile(r"^\s*\d+\t")


@frozen
class NearMiss:
    """The lines of a file closest to an old_string that was not found, to show the model."""

    first_line: int
    last_line: int
    text: str
    differences: tuple[str, ...]


def _squash(line: str) -> str:
    return " ".join(line.split())


def _old_lines(old: str) -> list[str]:
    lines = old.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def find_near_misses(view: str, old: str) -> list[NearMiss]:
    """Places where `old` matches `view` once whitespace is ignored (up to MAX_PLACES + 1)."""
    if len(view) > MAX_VIEW_CHARS:
        return []
    wanted = [_squash(line) for line in _old_lines(old)]
    if not any(wanted):
        return []
    raw_lines = view.split("\n")
    squashed = [_squash(line) for line in raw_lines]
    found: list[NearMiss] = []
    k = len(wanted)
    for i in range(len(squashed) - k + 1):
        if not _matches_at(squashed, i, wanted):
            continue
        real = raw_lines[i : i + k]
        text = "\n".join(real)
        if old.endswith("\n") and i + k < len(raw_lines):
            text += "\n"
        found.append(NearMiss(i + 1, i + k, text, _differences(real, _old_lines(old), i + 1)))
        if len(found) > MAX_PLACES:
            break
    return found


def _matches_at(squashed: list[str], i: int, wanted: list[str]) -> bool:
    k = len(wanted)
    if k == 1:
        return bool(wanted[0]) and wanted[0] in squashed[i]
    if not squashed[i].endswith(wanted[0]) or not squashed[i + k - 1].startswith(wanted[-1]):
        return False
    return squashed[i + 1 : i + k - 1] == wanted[1:-1]


def _whitespace_words(text: str) -> str:
    if not text:
        return "nothing"
    tabs, spaces = text.count("\t"), text.count(" ")
    parts = []
    if tabs:
        parts.append(f"{tabs} tab{'s' if tabs != 1 else ''}")
    if spaces:
        parts.append(f"{spaces} space{'s' if spaces != 1 else ''}")
    others = len(text) - tabs - spaces
    if others:
        parts.append(f"{others} other blank{'s' if others != 1 else ''}")
    return " and ".join(parts)


def _differences(real: list[str], wanted: list[str], first_number: int) -> tuple[str, ...]:
    notes: list[str] = []
    for offset, (real_line, want) in enumerate(zip(real, wanted, strict=False)):
        number = first_number + offset
        have = real_line
        if have.endswith("\r") and not want.endswith("\r"):
            notes.append(f"line {number} ends with CRLF (a carriage return before its line break)")
            have = have[:-1]
        if have == want:
            continue
        have_lead = have[: len(have) - len(have.lstrip())]
        want_lead = want[: len(want) - len(want.lstrip())]
        whole_line = have.strip() == want.strip() or _squash(have) == _squash(want)
        if whole_line and have_lead != want_lead:
            notes.append(
                f"line {number} is indented with {_whitespace_words(have_lead)} in the file, "
                f"{_whitespace_words(want_lead)} in old_string"
            )
        have_trail = have[len(have.rstrip()) :]
        want_trail = want[len(want.rstrip()) :]
        if have_trail != want_trail and (whole_line or offset == len(wanted) - 1):
            notes.append(
                f"line {number} ends with {_whitespace_words(have_trail)} in the file, "
                f"{_whitespace_words(want_trail)} in old_string"
            )
        if have.strip() != want.strip() and _squash(have) == _squash(want):
            notes.append(f"the spacing inside line {number} differs")
        elif not whole_line and (have.strip() != want.strip()):
            notes.append(f"the spacing in line {number} differs")
    return tuple(dict.fromkeys(notes))


def has_read_prefixes(old: str) -> bool:
    """Does every non-blank line of `old` start like a line of Read's output (`12<TAB>`)?"""
    lines = [line for line in old.split("\n") if line.strip()]
    return bool(lines) and all(_READ_PREFIX.match(line) for line in lines)


def strip_read_prefixes(old: str) -> str:
    """`old` without the line-number prefixes Read adds, when the model copied them."""
    return "\n".join(_READ_PREFIX.sub("", line, count=1) for line in old.split("\n"))


def describe_near_misses(misses: list[NearMiss]) -> str:
    """The hint text for a not-found error (empty if there is nothing to say)."""
    if not misses:
        return ""
    if len(misses) == 1:
        miss = misses[0]
        span = (
            f"line {miss.first_line}"
            if miss.first_line == miss.last_line
            else f"lines {miss.first_line}-{miss.last_line}"
        )
        diffs = "; ".join(miss.differences) if miss.differences else "whitespace differs"
        text = miss.text
        shown = json.dumps(text, ensure_ascii=False)
        if len(shown) > MAX_SHOWN_CHARS:
            shown = json.dumps(text[:MAX_SHOWN_CHARS], ensure_ascii=False) + " (cut here)"
        return (
            f"\nIt almost matches {span} if whitespace is ignored ({diffs}). Nothing was "
            "changed: Edit only replaces exact text. The file's text there, as a JSON string "
            f"(use exactly this as old_string, then adjust new_string to match):\n{shown}"
        )
    places = ", ".join(
        f"{m.first_line}" if m.first_line == m.last_line else f"{m.first_line}-{m.last_line}"
        for m in misses[:MAX_PLACES]
    )
    more = " (and more)" if len(misses) > MAX_PLACES else ""
    return (
        f"\nIgnoring whitespace, it resembles several places (lines {places}{more}), so "
        "Edit cannot tell which you meant. Read those lines and copy the exact text, with "
        "enough surrounding lines to make it unique."
    )
