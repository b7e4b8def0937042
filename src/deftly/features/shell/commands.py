"""What deftly knows about command words: wrappers that run another command, shells and
interpreters that run code it cannot see, where system programs live, and which output
files are harmless.

Rules are matched against what really runs. `/usr/bin/rm`, `env rm` and `xargs rm` all run
`rm`; `bash s.sh` and `python3 -c '...'` run code that no rule pattern can see, so such a
command is "opaque": never approved by an allow pattern, and reported with a reason.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from deftly.contract.records import frozen


@frozen
class Wrapper:
    """How to step over a wrapper command to the command it runs."""

    value_options: frozenset[str] = frozenset()
    flags: frozenset[str] | None = None  # None: any flag
    positional: int = 0
    assignments: bool = False


def _wrapper(
    value_options: Iterable[str] = (),
    flags: Iterable[str] | None = None,
    positional: int = 0,
    assignments: bool = False,
) -> Wrapper:
    return Wrapper(
        frozenset(value_options),
        None if flags is None else frozenset(flags),
        positional,
        assignments,
    )


STRICT_WRAPPERS: dict[str, Wrapper] = {
    "timeout": _wrapper({"-s", "--signal", "-k", "--kill-after"}, positional=1),
    "nice": _wrapper({"-n", "--adjustment"}),
    "nohup": _wrapper(flags=()),
    "env": _wrapper({"-u", "--unset"}, {"-i", "--ignore-environment", "-"}, assignments=True),
    "time": _wrapper(flags={"-p"}),
    "command": _wrapper(flags={"-p"}),
    "builtin": _wrapper(flags=()),
    "exec": _wrapper({"-a"}, {"-c", "-l", "-cl", "-lc"}),
    "coproc": _wrapper(flags=()),
    "stdbuf": _wrapper({"-i", "-o", "-e"}),
    "setsid": _wrapper(flags={"-f", "-w", "--fork", "--wait"}),
    "ionice": _wrapper({"-c", "-n", "--class", "--classdata"}, {"-t", "--ignore"}),
}
"""Wrappers that run the rest of the line as it is: stepping over them is safe for an
allow rule too (`timeout 30 npm test` is `npm test`)."""

LOOSE_WRAPPERS: dict[str, Wrapper] = {
    **STRICT_WRAPPERS,
    "env": _wrapper({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, assignments=True),
    "command": _wrapper(),
    "exec": _wrapper({"-a"}),
    "sudo": _wrapper(
        {
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-R",
            "-T",
            "-U",
            "-r",
            "-t",
            "--user",
            "--group",
            "--host",
            "--chdir",
            "--chroot",
            "--prompt",
            "--role",
            "--type",
            "--close-from",
            "--command-timeout",
            "--other-user",
        }
    ),
    "doas": _wrapper({"-u", "-C"}),
    "xargs": _wrapper(
        {"-n", "-L", "-P", "-d", "-E", "-s", "-a", "-I", "--max-args", "--max-procs"}
    ),
    "watch": _wrapper({"-n", "--interval"}),
    "parallel": _wrapper({"-j", "--jobs", "-S", "--sshlogin"}),
    "chroot": _wrapper(positional=1),
    "flock": _wrapper({"-w", "--timeout", "-E"}, positional=1),
    "taskset": _wrapper(positional=1),
    "chrt": _wrapper(positional=1),
    "unbuffer": _wrapper(),
    "busybox": _wrapper(flags=()),
}
"""Wrappers stepped over for deny and ask rules only: they change what runs (`sudo`), add
arguments (`xargs`) or run their arguments through a shell (`watch`)."""

ARGUMENT_FEEDERS = frozenset({"xargs", "parallel"})
"""Wrappers that give the command more arguments, read from their input."""

SYSTEM_BIN_DIRS = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}
)
"""A command word in one of these (`/usr/bin/git`) runs the same program an allow rule for
the bare name (`git`) was written for; `./git` or `~/bin/git` may be anything."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
SWITCH_USER = frozenset({"su", "runuser"})
"""`su -c 'command' user` runs the command through a shell."""
SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
SOURCE_COMMANDS = frozenset({"source", "."})
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
TEE = "tee"
_TEE_VALUE_OPTIONS = frozenset({"--output-error"})

HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_FD_DEVICE = re.compile(r"^/dev/fd/[0-9]+$")


@frozen
class Interpreter:
    """A language runtime: the options that take code on the command line (`-c`, `-e`),
    the short-option letters that do inside a cluster (`perl -ne`), the options that take
    a value, and those after which it runs something named (`python -m module`)."""

    code_options: frozenset[str]
    code_letters: frozenset[str]
    value_options: frozenset[str] = frozenset()
    named_options: frozenset[str] = frozenset()
    reads_stdin: bool = True


def _interpreter(
    code: Iterable[str],
    letters: str = "",
    values: Iterable[str] = (),
    named: Iterable[str] = (),
    reads_stdin: bool = True,
) -> Interpreter:
    return Interpreter(
        frozenset(code), frozenset(letters), frozenset(values), frozenset(named), reads_stdin
    )


_INTERPRETERS: tuple[tuple[re.Pattern[str], Interpreter], ...] = (
    (
        re.compile(r"^(?:python|pypy)[0-9.]*$"),
        _interpreter({"-c"}, "c", {"-W", "-X", "--check-hash-based-pycs"}, {"-m"}),
    ),
    (re.compile(r"^perl[0-9.]*$"), _interpreter({"-e", "-E"}, "eE", {"-I", "-M", "-m"})),
    (re.compile(r"^ruby[0-9.]*$"), _interpreter({"-e"}, "e", {"-I", "-r"})),
    (
        re.compile(r"^(?:node|nodejs|bun)$"),
        _interpreter({"-e", "--eval", "-p", "--print"}, "ep", {"-r", "--require"}),
    ),
    (re.compile(r"^php[0-9.]*$"), _interpreter({"-r", "-R", "-B", "-E"}, "rRBE", {"-d", "-c"})),
    (re.compile(r"^(?:lua|luajit)[0-9.]*$"), _interpreter({"-e"}, "e", {"-l"})),
    (re.compile(r"^(?:osascript)$"), _interpreter({"-e"}, "e", {"-l"})),
    (re.compile(r"^(?:Rscript|R)$"), _interpreter({"-e"}, "e", reads_stdin=False)),
    (
        re.compile(r"^(?:pwsh|powershell)$"),
        _interpreter({"-c", "-command", "-Command", "-EncodedCommand", "-e"}, reads_stdin=False),
    ),
    (re.compile(r"^(?:tclsh|wish)[0-9.]*$"), _interpreter(())),
)
_INFO_OPTIONS = frozenset({"--version", "-V", "--help", "-h", "-v"})


def interpreter(name: str) -> Interpreter | None:
    """What is known of a command that runs code (python, node, sh...), or None."""
    for pattern, spec in _INTERPRETERS:
        if pattern.match(name):
            return spec
    return None


def command_name(word: str, *, loose: bool) -> str:
    """The program a command word runs, as a rule names it: the base name for a deny or
    ask rule (`/bin/rm`, `./rm` → `rm`); for an allow rule only when the word is in a
    system bin directory (`/usr/bin/rm` → `rm`, `./rm` stays `./rm`)."""
    if "/" not in word:
        return word
    directory, _, base = word.rpartition("/")
    if not base:
        return word
    if loose or os.path.normpath(directory or "/") in SYSTEM_BIN_DIRS:
        return base
    return word


def harmless_output(target: str) -> bool:
    """Output that never lands in a file: /dev/null, the standard streams, a terminal."""
    return target in HARMLESS_DEVICES or _FD_DEVICE.match(target) is not None


def tee_targets(words: Sequence[str]) -> list[str]:
    """The files `tee` writes (its words after the name)."""
    out: list[str] = []
    options = True
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if options and word == "--":
            options = False
            continue
        if options and word.startswith("-") and len(word) > 1:
            skip = word in _TEE_VALUE_OPTIONS
            continue
        out.append(word)
    return out


def stdin_reason(name: str) -> str:
    """Why a command reading commands from stdin cannot be checked."""
    return f"{name} reads commands from its standard input"


def shell_reason(name: str, words: Sequence[str]) -> tuple[str | None, int | None]:
    """For a shell (`bash`, `sh`, ...) and its words: why it runs code deftly cannot see
    (a script file, its standard input), or the index of its `-c` script (split like any
    command line). (None, None) for `bash --version` and the like."""
    i = 0
    while i < len(words):
        value = words[i]
        if value in SHELL_VALUE_OPTIONS:
            i += 2
            continue
        if value in _INFO_OPTIONS:
            return None, None
        if value == "-":
            return stdin_reason(name), None
        if value.startswith("-") and not value.startswith("--") and "c" in value[1:]:
            return None, (i + 1 if i + 1 < len(words) else None)
        if value.startswith("-") and not value.startswith("--") and "s" in value[1:]:
            return stdin_reason(name), None
        if not value.startswith(("-", "+")):
            return f"{name} runs the script {value}, which deftly cannot inspect", None
        i += 1
    return stdin_reason(name), None


def switch_user_script(words: Sequence[str]) -> int | None:
    """The index of the command `su`/`runuser` runs with `-c` (None: none given)."""
    for i, word in enumerate(words):
        if word in ("-c", "--command") and i + 1 < len(words):
            return i + 1
        if word.startswith("--command="):
            return i
    return None


def interpreter_reason(name: str, spec: Interpreter, words: Sequence[str]) -> str | None:
    """Why `python3 -c '...'`, `perl -ne '...'` or `node` reading its standard input runs
    code deftly cannot inspect; None when it runs a named script or module."""
    code = f"{name} {{}} runs code deftly cannot inspect"
    i = 0
    while i < len(words):
        value = words[i]
        option, eq, _ = value.partition("=")
        if value in spec.code_options or (eq and option in spec.code_options):
            return code.format(option)
        if value in spec.named_options or value in _INFO_OPTIONS:
            return None
        if value == "-":
            break
        if value.startswith("--"):
            i += 2 if value in spec.value_options else 1
            continue
        if value.startswith("-") and len(value) > 1:
            letters = value[1:]
            for letter in letters:
                if letter in spec.code_letters:
                    return code.format(value)
                if f"-{letter}" in spec.named_options:
                    return None
                if f"-{letter}" in spec.value_options:
                    break
            i += 2 if value in spec.value_options else 1
            continue
        return None  # a script file: the rule names it
    if not spec.reads_stdin:
        return None
    return f"{name} reads code from its standard input, which deftly cannot inspect"
