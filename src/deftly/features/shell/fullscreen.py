"""Full-screen programs: refused at once, with what to use instead.

Bash gives a command no terminal (stdin closed, output a pipe, TERM=dumb). An editor, a
pager, a monitor or a terminal multiplexer then waits for keys that never come until the
timeout, and what comes back is screen escape codes. So `resolve` refuses them before
anything runs, per segment of the parsed command with its wrappers stepped over
(`sudo vim f`, `timeout 5 top`, `bash -c 'vi x'`, `git log | less`), unless their
arguments make them batch programs (`vim --version`, `emacs --batch`, `top -b -n 1`,
`tmux new -d`, `ssh host cmd`).

Not refused: `man` (without a terminal it prints the page as text; PAGER is cat) and
programs that fail at once without a terminal (`fzf`, `dialog`).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Sequence

from deftly.contract.records import frozen
from deftly.features.shell.rules import CommandSplit

Batch = Callable[[Sequence[str]], bool]
"""Whether these arguments make the program run without a screen."""

_INFO = frozenset({"--version", "-V", "--help", "-h", "-v"})


def _has(*options: str) -> Batch:
    """Batch when any of `options` is given (`-b` also inside a short group like `-bn1`)."""
    shorts = {o[1] for o in options if len(o) == 2 and o[0] == "-" and o[1] != "-"}

    def batch(args: Sequence[str]) -> bool:
        for arg in args:
            if arg in options or arg in _INFO or arg.split("=", 1)[0] in options:
                return True
            if arg.startswith("-") and not arg.startswith("--") and shorts & set(arg[1:2]):
                return True
        return False

    return batch


def _info_only(args: Sequence[str]) -> bool:
    return any(arg in _INFO for arg in args)


def _never(args: Sequence[str]) -> bool:
    return False


_VIM_BATCH = _has("--version", "--help", "-h", "--headless", "-es", "-Es", "-e")
_TMUX_ATTACHING = frozenset({"attach", "attach-session", "a", "at", "new", "new-session"})
_SSH_VALUE_OPTIONS = frozenset("BbcDEeFIiJLlmOoPpQRSWw")


def _tmux(args: Sequence[str]) -> bool:
    words = [a for a in args if not a.startswith("-")]
    if not words:
        return _info_only(args)  # bare `tmux` starts a session and attaches to it
    if words[0] in ("new", "new-session"):
        return "-d" in args or any(a.startswith("-") and "d" in a[1:] for a in args)
    return words[0] not in _TMUX_ATTACHING


def _screen(args: Sequence[str]) -> bool:
    detached = any(a in ("-dm", "-dmS", "-Dm", "-DmS") for a in args) or (
        "-d" in args and "-m" in args
    )
    return detached or any(a in ("-ls", "-list", "-X", "-Q", "-v", "--version") for a in args)


def _ssh(args: Sequence[str]) -> bool:
    """`ssh host cmd` runs `cmd`; `ssh host` opens an interactive login."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        if arg in ("-V", "-G") or arg.startswith("-O") or arg.startswith("-Q"):
            return True
        last = arg[-1]
        if last in _SSH_VALUE_OPTIONS and len(arg) == 2:
            i += 2
            continue
        i += 1
    return len(args) - i >= 2  # a host and a command


def _emacs(args: Sequence[str]) -> bool:
    """`emacs --batch` (or `--script`) runs Lisp and exits; `-nw` still takes the screen."""
    return _info_only(args) or any(
        a.split("=", 1)[0] in ("--batch", "-batch", "--script", "-script") for a in args
    )


def _crontab(args: Sequence[str]) -> bool:
    return "-e" not in args


@frozen
class Screen:
    """A program that takes over a terminal: what it is, and what to do instead."""

    kind: str
    instead: str
    batch: Batch
    why: str = (
        "needs a terminal, which Bash does not have (it would wait for keys until its "
        "timeout and return screen codes)"
    )


_EDIT = "to change a file use Edit or Write; to read it use Read"
_EDITOR = Screen("an interactive editor", _EDIT, _VIM_BATCH)
_PAGER = Screen(
    "a pager",
    "the output comes back whole without one: drop `| less` (or pipe into `cat`), pass "
    "`--no-pager` (`git --no-pager log`), and use Read to view a file page by page",
    _info_only,
    why="pages output for a person at a terminal, which Bash does not have",
)
_MONITOR = Screen(
    "a full-screen monitor",
    "take one snapshot instead: `top -b -n 1`, `ps aux`, `free -m`, `df -h`",
    _has("-b", "--batch"),
)

FULL_SCREEN: dict[str, Screen] = {
    **dict.fromkeys(("vi", "vim", "nvim", "view", "vimdiff", "gvim"), _EDITOR),
    **dict.fromkeys(("nano", "pico", "micro", "joe", "jed", "kak", "helix", "hx"), _EDITOR),
    "emacs": Screen("an interactive editor", _EDIT + "; `emacs --batch` runs Lisp", _emacs),
    **dict.fromkeys(("less", "more", "most", "pg"), _PAGER),
    "top": _MONITOR,
    **dict.fromkeys(("htop", "btop", "atop", "nmon", "glances", "nvtop"), _MONITOR),
    "iotop": Screen("a full-screen monitor", "use `iotop -b -n 1`", _has("-b", "--batch")),
    "watch": Screen(
        "a command that repeats on a full screen forever",
        "run the command once, or repeat it in a background task "
        "(`while true; do cmd; sleep 2; done` with run_in_background)",
        _info_only,
    ),
    "tmux": Screen(
        "a terminal multiplexer that attaches to a screen",
        "start detached sessions (`tmux new -d -s name cmd`), send keys with "
        "`tmux send-keys`, and read a pane with `tmux capture-pane -p`",
        _tmux,
    ),
    "screen": Screen(
        "a terminal multiplexer that attaches to a screen",
        "start it detached (`screen -dmS name cmd`) or use a background task",
        _screen,
    ),
    "ssh": Screen(
        "an interactive login (ssh without a command)",
        "give the remote command: `ssh host 'cmd'`",
        _ssh,
    ),
    **dict.fromkeys(
        ("mc", "ranger", "nnn", "vifm", "tig", "lazygit", "nmtui", "alsamixer", "mutt"),
        Screen("an interactive full-screen program", "use a command-line tool instead", _never),
    ),
    "crontab": Screen(
        "an editor session (`crontab -e`)",
        "write the table to a file and install it with `crontab FILE`; `crontab -l` lists it",
        _crontab,
    ),
    **dict.fromkeys(
        ("visudo", "vipw", "vigr", "sudoedit"),
        Screen("an editor session", _EDIT, _info_only),
    ),
}
"""Programs that need a terminal, by command name, and the arguments that free them."""


_NAMES = re.compile(r"[A-Za-z][\w.+-]*")


def may_be_full_screen(command: str) -> bool:
    """A cheap check before parsing: does any word of the text name such a program?"""
    return any(word in FULL_SCREEN for word in _NAMES.findall(command))


def full_screen_refusal(split: CommandSplit, command: str) -> str | None:
    """The message refusing `command` when it starts a full-screen program, or None."""
    for segment in split.segments:
        for spelling in dict.fromkeys((*segment.strict, *segment.loose)):
            words = _words(spelling)
            if not words:
                continue
            name = os.path.basename(words[0])
            screen = FULL_SCREEN.get(name)
            if screen is None or screen.batch(words[1:]):
                continue
            shown = " ".join(command.split())
            shown = shown if len(shown) <= 80 else shown[:79] + "…"
            return (
                f"`{shown}` was not run: {name} is {screen.kind} and {screen.why}. "
                f"Instead, {screen.instead}."
            )
    return None


def _words(spelling: str) -> list[str]:
    try:
        return shlex.split(spelling, comments=False, posix=True)
    except ValueError:
        return spelling.split()
