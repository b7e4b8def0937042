"""The front matter read without PyYAML (so listing tools need not import it) means exactly
what PyYAML reads: on random headers, whenever the quick reader answers, it agrees."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from deftly.features.skills.frontmatter import _simple_front_matter, split_front_matter

BUILTIN = Path(__file__).resolve().parents[2] / "src/deftly/features/skills/builtin"

_TRICKY = "aZy nN0:9 #'\"[],-?!.&*%@|>{}~\\\t_/é\u2028"
_words = st.sampled_from(
    ["yes", "No", "TRUE", "false", "on", "Off", "null", "~", "y", "n", "scope", "a-b", "x_1"]
)
_text = st.text(alphabet=_TRICKY, max_size=12)
_value = st.one_of(
    _words,
    _text,
    st.builds(lambda w, t: w + t, _words, _text),
    st.builds(lambda t: f'"{t}"', _text),
    st.builds(lambda t: f"'{t}'", _text),
    st.builds(lambda items: "[" + ", ".join(items) + "]", st.lists(_words, max_size=3)),
    st.builds(lambda items: "[" + ",".join(items) + "]", st.lists(_text, max_size=3)),
)
_key = st.one_of(_words, st.sampled_from(["name", "description", "when-to-use", "k9"]))
_line = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", _key, _value),
    st.builds(lambda k, v: f"{k}:{v}", _key, _value),
    st.builds(lambda v: f"  {v}", _value),
    _text,
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_line, min_size=1, max_size=4))
def test_the_quick_reader_agrees_with_pyyaml_whenever_it_answers(lines: list[str]) -> None:
    source = "\n".join(lines)
    quick = _simple_front_matter(source)
    if quick is None:
        return
    assert quick == yaml.load(source, Loader=yaml.SafeLoader)


def test_the_builtin_skills_are_read_without_pyyaml_and_mean_the_same() -> None:
    for path in sorted(BUILTIN.glob("*/SKILL.md")):
        source = path.read_text().split("---\n")[1].rstrip("\n")
        quick = _simple_front_matter(source)
        assert quick is not None, f"{path.parent.name}: the quick reader gave up"
        assert quick == yaml.safe_load(source)
        meta, _body = split_front_matter(path.read_text())
        assert meta == quick


def test_what_the_quick_reader_cannot_be_sure_of_goes_to_pyyaml() -> None:
    assert _simple_front_matter("when: 2024-01-02") is None  # a date to YAML
    assert _simple_front_matter("n: 12") is None
    assert _simple_front_matter("a: b: c") is None
    assert _simple_front_matter("a: text # note") is None
    assert _simple_front_matter("a: one\n  two") is None
    meta, _ = split_front_matter("---\nwhen: 2024-01-02\nn: 12\n---\nbody")
    assert meta == {"when": "2024-01-02", "n": 12}
