"""The keys of a question at the terminal, on the picker alone (no terminal): moving,
choosing, ticking, the person's own answer, dismissing; and a property over any keys."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deftly.cli.run_question_picker import Answered, Dismissed, Key, Picker
from deftly.session.questions import OTHER_LABEL, Choice, Question

COLOURS = Question(
    "Which colour?", (Choice("Red", "warm"), Choice("Green"), Choice("Blue", "cool")), "Colour"
)
SIZES = Question("Which sizes?", (Choice("S"), Choice("M"), Choice("L")), multi_select=True)


def pressed(question: Question, *keys: Key) -> Picker:
    picker = Picker(question)
    for key in keys:
        picker.press(key)
    return picker


def test_enter_chooses_the_option_under_the_cursor() -> None:
    assert pressed(COLOURS, Key.ENTER).outcome == Answered("Red")
    assert pressed(COLOURS, Key.DOWN, Key.DOWN, Key.ENTER).outcome == Answered("Blue")
    assert pressed(COLOURS, Key.DOWN, Key.TOGGLE).outcome == Answered("Green")  # Space too


def test_the_cursor_wraps_round_over_the_options_and_other() -> None:
    picker = pressed(COLOURS, Key.UP)
    assert picker.on_other and picker.label(picker.cursor) == OTHER_LABEL
    picker.press(Key.DOWN)
    assert picker.cursor == 0
    assert pressed(COLOURS, Key.UP, Key.UP, Key.ENTER).outcome == Answered("Blue")


def test_other_opens_a_line_whose_text_is_the_answer() -> None:
    picker = pressed(COLOURS, Key.UP, Key.ENTER)
    assert picker.typing and picker.outcome is None
    picker.press(Key.DOWN)  # the list's keys do nothing while typing
    assert picker.on_other
    picker.submit_text("  teal, mostly  ")
    assert picker.outcome == Answered("teal, mostly")


def test_a_blank_line_or_esc_on_other_goes_back_to_the_list() -> None:
    picker = pressed(COLOURS, Key.UP, Key.ENTER)
    picker.submit_text("   ")
    assert not picker.typing and picker.outcome is None
    picker.press(Key.TOGGLE)
    assert picker.typing
    picker.leave_text()
    assert not picker.typing and picker.outcome is None
    picker.press(Key.DOWN)
    picker.press(Key.ENTER)
    assert picker.outcome == Answered("Red")


def test_escape_at_the_list_dismisses() -> None:
    assert pressed(COLOURS, Key.DOWN, Key.ESCAPE).outcome == Dismissed()
    assert pressed(SIZES, Key.TOGGLE, Key.ESCAPE).outcome == Dismissed()


def test_multi_select_ticks_with_space_and_confirms_with_enter_in_option_order() -> None:
    picker = pressed(SIZES, Key.DOWN, Key.DOWN, Key.TOGGLE, Key.UP, Key.UP, Key.TOGGLE)
    assert picker.ticked == {0, 2} and picker.outcome is None
    picker.press(Key.ENTER)
    assert picker.outcome == Answered("S, L")


def test_space_unticks_and_enter_with_nothing_ticked_takes_the_cursor() -> None:
    picker = pressed(SIZES, Key.TOGGLE, Key.TOGGLE, Key.DOWN)
    assert picker.ticked == set()
    picker.press(Key.ENTER)
    assert picker.outcome == Answered("M")


def test_multi_select_other_text_comes_after_the_ticked_options() -> None:
    picker = pressed(SIZES, Key.DOWN, Key.TOGGLE, Key.UP, Key.UP, Key.TOGGLE)
    assert picker.typing and picker.ticked == {1}  # Space on Other opens the line
    picker.submit_text("XL")
    assert picker.outcome == Answered("M, XL")


def test_nothing_counts_once_the_question_ended() -> None:
    picker = pressed(COLOURS, Key.ENTER, Key.DOWN, Key.ESCAPE)
    assert picker.outcome == Answered("Red") and picker.cursor == 0
    picker.submit_text("late")
    assert picker.outcome == Answered("Red")


QUESTIONS = st.builds(
    Question,
    question=st.text(min_size=1, max_size=20),
    options=st.lists(
        st.builds(Choice, st.text(min_size=1, max_size=8)),
        min_size=2,
        max_size=4,
        unique_by=lambda choice: choice.label,
    ).map(tuple),
    multi_select=st.booleans(),
)
ACTIONS = st.lists(
    st.one_of(
        st.sampled_from(list(Key)),
        st.tuples(st.just("type"), st.text(max_size=6)),
        st.just("leave"),
    ),
    max_size=40,
)


@settings(max_examples=400, deadline=None)
@given(QUESTIONS, ACTIONS)
def test_any_keys_keep_the_cursor_in_range_and_choose_only_what_was_offered(
    question: Question, actions: list[Key | tuple[str, str] | str]
) -> None:
    picker = Picker(question)
    typed: list[str] = []
    for action in actions:
        if isinstance(action, Key):
            picker.press(action)
        elif action == "leave":
            picker.leave_text()
        else:
            assert isinstance(action, tuple)
            if picker.typing and not picker.done:
                typed.append(action[1].strip())
            picker.submit_text(action[1])
        assert 0 <= picker.cursor < len(question.options) + 1
        assert picker.ticked <= set(range(len(question.options)))
        if not question.multi_select:
            assert not picker.ticked
        assert not (picker.done and picker.typing)
    if isinstance(picker.outcome, Answered):
        labels = [choice.label for choice in question.options]
        text = picker.outcome.text
        own = typed[-1] if typed else ""
        chosen = [label for i, label in enumerate(labels) if i in picker.ticked]
        under = labels[picker.cursor : picker.cursor + 1]  # nothing on "Other"
        if question.multi_select:
            assert text in (", ".join(chosen or under), ", ".join([*chosen, own]))
        else:
            assert text in (*under, own)
