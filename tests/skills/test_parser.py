"""Reading one skill file: front matter, fields, defaults, and the reasons a file is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from deftly.features.skills import Skill, SkillParseError, parse_skill_text, read_skill_file
from deftly.features.skills.frontmatter import FrontMatterError, split_front_matter
from deftly.features.skills.parser import has_sub_skills


def parse(text: str, path: str = "/skills/demo/SKILL.md", default: str = "demo") -> Skill:
    return parse_skill_text(text, Path(path), default_name=default, source="user")


def refused(text: str, path: str = "/skills/demo/SKILL.md") -> SkillParseError:
    with pytest.raises(SkillParseError) as info:
        parse(text, path)
    return info.value


def test_aliases_for_when_to_use_and_disable_model_invocation() -> None:
    # reference case 1
    skill = parse_skill_text(
        "---\nname: x\ndescription: d\nwhen-to-use: when X\ndisable_model_invocation: true\n"
        "---\nbody",
        Path("/s/x/SKILL.md"),
        default_name="x",
        source="project",
    )
    assert skill.when_to_use == "when X"
    assert skill.disable_model_invocation is True
    assert skill.model_invocable is False
    assert skill.metadata["when-to-use"] == "when X"  # every key is kept as written
    assert skill.content == "body"
    assert skill.path == Path("/s/x/SKILL.md") and skill.dir == Path("/s/x")


def test_skill_md_without_front_matter_is_refused_with_a_reason() -> None:
    # reference case 2
    error = refused("no frontmatter here")
    assert error.kind == "invalid"
    assert "no front matter" in error.reason and '"---"' in error.reason


def test_unsupported_type_is_its_own_kind_of_skip() -> None:
    # reference case 3
    error = refused("---\nname: x\ndescription: d\ntype: nope\n---\nbody")
    assert error.kind == "unsupported-type"
    assert '"nope"' in error.reason and "prompt" in error.reason


@pytest.mark.parametrize("kind", ["prompt", "inline", "flow", "reference", "Inline", " flow "])
def test_supported_types(kind: str) -> None:
    skill = parse(f"---\nname: x\ndescription: d\ntype: '{kind}'\n---\nbody")
    assert skill.type == kind.strip().lower()


def test_type_defaults_to_prompt_and_types_decide_who_may_load() -> None:
    plain = parse("---\nname: a\ndescription: d\n---\nb")
    flow = parse("---\nname: a\ndescription: d\ntype: flow\n---\nb")
    reference = parse("---\nname: a\ndescription: d\ntype: reference\n---\nb")
    assert plain.type == "prompt" and plain.model_invocable and plain.user_activatable
    assert not flow.model_invocable and flow.user_activatable
    assert not reference.model_invocable and not reference.user_activatable


def test_flat_file_without_front_matter_takes_name_and_first_line() -> None:
    # reference case 4
    skill = parse_skill_text(
        "# Foo skill\n\nDoes foo.", Path("/skills/foo.md"), default_name="foo", source="user"
    )
    assert skill.name == "foo"
    assert skill.description == "# Foo skill"
    assert skill.content == "# Foo skill\n\nDoes foo."


def test_name_and_description_default_for_skills_written_for_other_agents() -> None:
    skill = parse("---\nallowed-tools: Read\n---\n\n\n  First line here.  \nmore")
    assert skill.name == "demo"
    assert skill.description == "First line here."
    assert skill.metadata == {"allowed-tools": "Read"}


def test_long_first_line_is_cut_and_an_empty_body_says_so() -> None:
    long = parse("---\n---\n" + "x" * 300)
    assert long.description == "x" * 239 + "…"
    exact = parse("---\n---\n" + "y" * 240)
    assert exact.description == "y" * 240
    empty = parse("---\nname: e\n---\n")
    assert empty.description == "No description provided."
    assert empty.content == ""


def test_front_matter_values_are_trimmed_and_crlf_bodies_become_lf() -> None:
    skill = parse("---\r\nname: '  spaced  '\r\ndescription: ' d '\r\n---\r\nline 1\r\nline 2\r\n")
    assert skill.name == "spaced"
    assert skill.description == "d"
    assert skill.content == "line 1\nline 2"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("---\nname: x\ndescription: d\nbody without a closing fence", 'no closing "---"'),
        ("---\nname: [unclosed\n---\nbody", "not valid YAML"),
        ("---\n- a\n- b\n---\nbody", "is a list; it must be a mapping"),
        ("---\njust text\n---\nbody", "it must be a mapping"),
        ("---\nname: [a, b]\ndescription: d\n---\nb", '"name" field must be text, not a list'),
        ("---\nname: x\ndescription: {a: 1}\n---\nb", '"description" field must be text'),
        ("---\nname: two words\ndescription: d\n---\nb", "contains spaces"),
        ("---\nname: a/b\ndescription: d\n---\nb", "slashes"),
        ("---\nname: x\ndescription: d\ntype: ''\n---\nb", "is not supported"),
        ("---\nname: x\ndescription: d\ntype: 3\n---\nb", "is not supported"),
    ],
)
def test_bad_front_matter_is_refused_with_a_reason(text: str, fragment: str) -> None:
    assert fragment in refused(text).reason


def test_yaml_error_names_the_line_of_the_file() -> None:
    reason = refused("---\nname: x\ndescription: d\nbad: [oops\n---\nbody").reason
    assert "line" in reason and "not valid YAML" in reason
    assert "\n" not in reason  # one line, fit for a listing
    # line 1 is the fence; blank lines at the top of the front matter still count
    assert "at line 3 column 1" in refused("---\nname: x\n- item\n---\nb").reason
    assert "at line 4 column 1" in refused("---\n\nname: x\n- item\n---\nb").reason


def test_indented_front_matter_is_read() -> None:
    skill = parse("---\n  name: indented\n  description: d\n---\nb")
    assert skill.name == "indented"


def test_alias_bombs_and_self_references_are_refused() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}]\n"
        for i in range(8)
    )
    with pytest.raises(FrontMatterError, match="too many values"):
        split_front_matter(f"---\n{bomb}---\nbody")
    with pytest.raises(FrontMatterError, match="too many values"):
        split_front_matter("---\nloop: &l [*l]\n---\nbody")


def test_metadata_is_json_safe() -> None:
    skill = parse(
        "---\nname: x\ndescription: d\ncreated: 2024-05-01\n1: one\n"
        "nested: {when: 2024-05-01 10:00:00}\n---\nb"
    )
    metadata = skill.metadata
    assert metadata["created"] == "2024-05-01"
    assert metadata["1"] == "one"
    json.dumps(metadata)  # must not raise


def test_arguments_as_list_or_string_drop_blank_and_numeric_names() -> None:
    listed = parse("---\nname: x\ndescription: d\narguments: [flag, '', '1', message, 3]\n---\nb")
    assert listed.arguments == ("flag", "message")
    spaced = parse("---\nname: x\ndescription: d\narguments: 'flag   message 2'\n---\nb")
    assert spaced.arguments == ("flag", "message")
    odd = parse("---\nname: x\ndescription: d\narguments: {a: 1}\n---\nb")
    assert odd.arguments == ()


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("'true'", True), ("'TRUE'", True), ("false", False), ("'yes'", False)],
)
def test_disable_model_invocation_flag(value: str, expected: bool) -> None:
    skill = parse(f"---\nname: x\ndescription: d\ndisable-model-invocation: {value}\n---\nb")
    assert skill.disable_model_invocation is expected


def test_user_invocable_false_and_argument_hint() -> None:
    skill = parse(
        "---\nname: x\ndescription: d\nuser-invocable: false\nargument-hint: '[file]'\n---\nb"
    )
    assert skill.user_invocable is False
    assert skill.argument_hint == "[file]"


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ("has-sub-skill: true", True),
        ("hasSubSkill: true", True),
        ("metadata: {has-sub-skill: true}", True),
        ("has-sub-skill: 'true'", False),  # strict: the boolean only
        ("other: 1", False),
    ],
)
def test_sub_skill_bundles(front: str, expected: bool) -> None:
    skill = parse(f"---\nname: p\ndescription: d\n{front}\n---\nb")
    assert has_sub_skills(skill) is expected


# -- reading files -----------------------------------------------------------------------


def test_reads_utf8_with_or_without_bom(tmp_path: Path) -> None:
    plain = tmp_path / "a.md"
    plain.write_text("héllo", encoding="utf-8")
    bom = tmp_path / "b.md"
    bom.write_bytes("\ufeff---\nname: b\n---\nx".encode())
    assert read_skill_file(plain) == "héllo"
    assert read_skill_file(bom).startswith("---")


def test_huge_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "SKILL.md"
    with big.open("wb") as handle:  # a sparse 10 MB file: cheap to make, costly to read
        handle.truncate(10 * 1024 * 1024)
    with pytest.raises(SkillParseError) as info:
        read_skill_file(big, 256 * 1024)
    assert info.value.kind == "too-large"
    assert "10.0 MB" in info.value.reason and "256 KB" in info.value.reason


@pytest.mark.parametrize(
    ("data", "fragment"),
    [(b"---\nname: x\n---\n\x00\x01binary", "binary"), (b"caf\xe9 latin-1", "not UTF-8")],
)
def test_binary_and_non_utf8_files_are_refused(tmp_path: Path, data: bytes, fragment: str) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(data)
    with pytest.raises(SkillParseError, match=fragment):
        read_skill_file(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_skill_md_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "SKILL.md"
    os.mkfifo(fifo)  # nobody writes to it: a blocking open or read would hang the test
    with pytest.raises(SkillParseError) as info:
        read_skill_file(fifo)
    assert info.value.kind == "unreadable" and "not a regular file" in info.value.reason


def test_missing_file_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(SkillParseError) as info:
        read_skill_file(tmp_path / "nope.md")
    assert info.value.kind == "unreadable"
