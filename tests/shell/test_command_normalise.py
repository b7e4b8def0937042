"""What a command really runs: its command word normalised, what cannot be known statically
(`CommandSplit.opaque`), and where its output is written (`Segment.redirects`)."""

from __future__ import annotations

import pytest

from deftly import RuleMatch
from deftly.features.shell.rules import CommandMatcher, split_command

FULL, PARTIAL, NONE = RuleMatch.FULL, RuleMatch.PARTIAL, RuleMatch.NONE


def m(command: str, pattern: str) -> RuleMatch:
    return CommandMatcher(command).one(pattern)


# -- the command word, normalised ------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "/bin/rm v",
        "/usr/bin/rm v",
        "\\rm v",
        "'rm' v",
        '"rm" v',
        "r''m v",
        "command rm v",
        "command -p rm v",
        "env rm v",
        "env - rm v",
        "env -i A=1 rm v",
        "/usr/bin/env rm v",
        "exec rm v",
        "exec -a x rm v",
        "coproc rm v",
        "coproc NAME { rm v; }",
        "coproc (rm v)",
        "echo v | xargs rm",
        "echo v | xargs -I{} rm {}",
        "echo v | xargs -I {} rm {}",
        "echo v | xargs -0 rm",
        "echo v | xargs -n1 rm",
        "echo v | xargs -n 1 /bin/rm",
        "find . -name v -exec rm {} \\;",
        "find . -name v -execdir rm {} +",
        "find . -exec /usr/bin/rm -f {} \\;",
        "sudo -u root /bin/rm v",
        "timeout 5 nice -n 3 \\rm v",
        "./rm v",
        "> out rm v",
        "2>&1 rm v",
        "env -S 'rm -rf v' git status",
        "env -u A -S'rm v'",
        "env --split-string='rm v'",
        "echo $'\\x72m' | xargs $'\\x72m'",
        "$'\\x72m' v",
        "su -c 'rm v' root",
        "su - root --command='rm v'",
        "busybox rm v",
        "busybox sh -c 'rm v'",
        "bash <<EOF\nrm v\nEOF",
        "bash <<'EOF'\necho a\nrm v\nEOF",
        "sh <<< 'rm v'",
        "ionice -c3 rm v",
        "sudo --chdir /tmp rm v",
        "trap 'rm v' EXIT",
        "trap -- 'rm v' EXIT",
        "f() { rm v; }; f",
    ],
)
def test_every_spelling_of_rm_meets_a_deny_rule(command: str) -> None:
    assert m(command, "rm *") in (FULL, PARTIAL), split_command(command)


@pytest.mark.parametrize(
    "command", ["echo v | xargs rm", "echo v | xargs -0 rm", "find . -exec rm {} \\;"]
)
def test_xargs_and_find_meet_a_narrower_deny_too(command: str) -> None:
    # xargs adds arguments from its input: `rm -rf *` may be what runs
    assert m(command, "rm -rf *") is not NONE or "find" in command
    assert m(command, "ls *") is NONE


def test_allow_rules_cover_system_programs_but_not_local_ones() -> None:
    """The decision for allow rules: an absolute command word in a standard system bin
    directory is the program the bare name means; anything else is another program."""
    assert m("/usr/bin/git status", "git status") is FULL
    assert m("/bin/ls -la", "ls *") is FULL
    assert m("\\git status", "git status") is FULL
    for command in ("./git status", "bin/git status", "/tmp/git status", "~/bin/git status"):
        assert m(command, "git status") is not FULL, command
    # wrappers that add arguments or privileges never satisfy an allow
    assert m("echo v | xargs git status", "echo *") is not FULL
    assert m("sudo git status", "git status") is not FULL
    assert m("find . -exec git status \\;", "find *") is FULL  # the pattern names find
    assert m("find . -exec rm {} \\;", "find . -name x") is NONE


def test_the_prefix_form_matches_at_a_word_boundary() -> None:
    assert m("npm run test", "npm run test:*") is FULL
    assert m("npm run test -- -x", "npm run test:*") is FULL
    assert m("npm run testing", "npm run test:*") is NONE
    assert m("npm run test && rm -rf x", "npm run test:*") is PARTIAL


def test_star_crosses_slashes_in_commands() -> None:
    assert m("rm -rf /abs/path", "rm -rf *") is FULL
    assert m("rm -rf src/build", "rm -rf *") is FULL
    assert m("rm -rf x/", "rm -rf x") is NONE  # no trailing-slash leeway


# -- opaque: what cannot be known statically --------------------------------------------------


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("X=rm; $X f", "the command word of `$X f` comes from an expansion"),
        ("$(echo rm) f", "the command word of `$(echo rm) f` comes from an expansion"),
        ('"$cmd" f', 'the command word of `"$cmd" f` comes from an expansion'),
        ("`echo rm` f", "the command word of `` `echo rm` f `` comes from an expansion"),
        ("/usr/bin/r[m] f", "the command word of `/usr/bin/r[m] f` comes from an expansion"),
        ("env $X f", "the command word of `env $X f` comes from an expansion"),
        ("bash s.sh", "bash runs the script s.sh, which deftly cannot inspect"),
        ("echo rm v | bash", "bash reads commands from its standard input"),
        ("bash <<EOF\nrm v\nEOF", "bash reads commands from its standard input"),
        ("sh -s", "sh reads commands from its standard input"),
        ("bash -", "bash reads commands from its standard input"),
        ("source f", "source runs the script f, which deftly cannot inspect"),
        (". f", ". runs the script f, which deftly cannot inspect"),
        ("sudo sh x.sh", "sh runs the script x.sh, which deftly cannot inspect"),
        ("python -c 'import os'", "python -c runs code deftly cannot inspect"),
        ("python3 -c 'import os'", "python3 -c runs code deftly cannot inspect"),
        ("python3 -Ic 'import os'", "python3 -Ic runs code deftly cannot inspect"),
        (
            "echo 'import os' | python3",
            "python3 reads code from its standard input, which deftly cannot inspect",
        ),
        ("perl -e 'unlink 1'", "perl -e runs code deftly cannot inspect"),
        ("perl -ne 'print' f", "perl -ne runs code deftly cannot inspect"),
        ("ruby -e 'x'", "ruby -e runs code deftly cannot inspect"),
        ("node -e 'x'", "node -e runs code deftly cannot inspect"),
        ("node -p 'x'", "node -p runs code deftly cannot inspect"),
        ("node --eval=x", "node --eval runs code deftly cannot inspect"),
        ("php -r 'x'", "php -r runs code deftly cannot inspect"),
        ("osascript -e 'x'", "osascript -e runs code deftly cannot inspect"),
        ("bash -c 'python3 -c x'", "python3 -c runs code deftly cannot inspect"),
        ('bash -c "$S"', "the command word of `$S` comes from an expansion"),
        ("echo $(python3 -c x)", "python3 -c runs code deftly cannot inspect"),
        ("find . -exec sh x.sh {} \\;", "sh runs the script x.sh, which deftly cannot inspect"),
        ("echo hi > $F", "`> $F` writes to a file named by an expansion"),
    ],
)
def test_opaque_commands_say_why_and_are_never_parsed(command: str, reason: str) -> None:
    split = split_command(command)
    assert reason in split.opaque, split.opaque
    assert not split.parsed
    assert m(command, "*") is not FULL
    assert m(command, command.split(maxsplit=1)[0] + " *") is not FULL


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "python3 tools/gen.py --out x",
        "python3 -m pytest -q",
        "node script.js",
        "perl script.pl",
        "bash --version",
        "bash -c 'git status'",
        "X=1 make",
        "echo $HOME",
        "ls *.py",
        "echo hi > out.txt",
        "~/bin/tool x",
        "$'\\x67it' status",
        "cat <<EOF\nrm v\nEOF",
        "[ -f x ] && echo y",
        "ls [ab]",
    ],
)
def test_static_commands_are_not_opaque(command: str) -> None:
    split = split_command(command)
    assert split.opaque == ()
    assert split.parsed


def test_a_literal_rule_still_approves_the_exact_opaque_command() -> None:
    # what "approve for this session" remembers: the person saw exactly this command
    assert m("bash build.sh", "bash build.sh") is FULL
    assert m("bash build.sh", "bash *") is PARTIAL


# -- redirects: the files a command's output goes to ----------------------------------------


def redirects(command: str) -> list[tuple[str, ...]]:
    return [segment.redirects for segment in split_command(command).segments]


def test_output_redirections_are_listed_in_order() -> None:
    command = "echo hi > a 2>&1 >>b &>c &>>d 3>e >|f <>g >&2 >&- <in 2>/dev/null >/dev/fd/3"
    assert redirects(command) == [("a", "b", "c", "d", "e", "f", "g")]


def test_redirect_targets_are_unquoted_and_devices_left_out() -> None:
    assert redirects("echo > \"my file\" 2> 'err log'") == [("my file", "err log")]
    assert redirects("echo >/dev/null 2>/dev/stderr >/dev/stdout >/dev/tty") == [()]
    assert redirects("echo >&file") == [("file",)]
    assert redirects("cat <<EOF > out\nhi\nEOF") == [("out",)]
    assert redirects("cat < in") == [()]


def test_redirections_in_substitutions_and_nested_scripts_are_found() -> None:
    found = redirects("echo $(echo a > in_sub) && bash -c 'echo b >> nested' | cat")
    assert ("in_sub",) in found and ("nested",) in found


def test_tee_targets_count_as_redirects() -> None:
    split = split_command('echo x | tee -a t1 "t 2" /dev/null -- -t3')
    tee = next(s for s in split.segments if s.text.startswith("tee"))
    assert tee.redirects == ("t1", "t 2", "-t3")
    assert split_command("echo x | sudo tee /etc/hosts").segments[1].redirects == ("/etc/hosts",)


def test_unparsed_commands_still_list_their_redirects() -> None:
    split = split_command("echo $((1+2)) > sum.txt 2>&1")
    assert not split.parsed
    assert any(s.redirects == ("sum.txt",) for s in split.segments)


def test_unparsed_commands_still_list_tee_targets() -> None:
    split = split_command("echo $((1+2)) | tee -a sums.log /dev/null")
    assert not split.parsed
    assert any(s.redirects == ("sums.log",) for s in split.segments)


@pytest.mark.parametrize("command", ["trap 0", "trap 1 2", "trap - INT", "trap -p", "trap 'x'"])
def test_a_trap_that_sets_no_command_is_one_segment(command: str) -> None:
    """POSIX: one operand, or a first operand that is a number, means signals to reset."""
    assert [segment.text for segment in split_command(command).segments] == [command]
