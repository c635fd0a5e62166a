"""The {{…}} scanner shared with the checker: offsets, kinds, and messages."""

import pytest

from taskdsl.templating import Arg, find_placeholders, render


def test_variables_with_dotted_and_indexed_access_and_offsets():
    text = 'Hi {{name}}, {{ user.address.city }} {{items[0]}} {{m["k"]}}'
    found = find_placeholders(text)
    assert [(p.kind, p.name, p.path) for p in found] == [
        ("var", "name", ()), ("var", "user", ("address", "city")), ("var", "items", (0,)), ("var", "m", ("k",))]
    assert [text[p.start:p.end] for p in found] == ["{{name}}", "{{ user.address.city }}", "{{items[0]}}", '{{m["k"]}}']
    assert found[1].expr_text == "user.address.city"


def test_inline_call_arguments():
    (call,) = find_placeholders('{{fn(a, "lit, with comma", 3, true, b.c[1], null, -2.5)}}')
    assert (call.kind, call.name) == ("call", "fn")
    assert call.args == (
        Arg("var", name="a", text="a"), Arg("literal", "lit, with comma", text='"lit, with comma"'),
        Arg("literal", 3, text="3"), Arg("literal", True, text="true"),
        Arg("var", name="b", path=("c", 1), text="b.c[1]"), Arg("literal", None, text="null"),
        Arg("literal", -2.5, text="-2.5"))
    assert find_placeholders("{{noargs()}}")[0].args == ()


@pytest.mark.parametrize("text, error", [
    ("{{}}", "empty placeholder: write {{name}}"),
    ("{{1abc}}", "'1abc' is not a variable name: names start with a letter or '_'"),
    ("{{a b}}", "unexpected 'b' after 'a': use {{name}}, {{name.field}} or {{name[0]}}"),
    ("{{a.}}", "unexpected '.' after 'a': use {{name}}, {{name.field}} or {{name[0]}}"),
    ("{{fn(a}}", "call to 'fn' is missing its closing ')'"),
    ('{{fn("x)}}', "unterminated string in the arguments of 'fn'"),
    ("{{fn(a + 1)}}", "argument 'a + 1' of 'fn' must be a string, number, true/false/null or a variable"),
    ("text {{open", "'{{' is never closed: add '}}'"),
])
def test_malformed_placeholders_say_why(text, error):
    (ph,) = find_placeholders(text)
    assert ph.kind == "malformed" and ph.error == error


def test_unclosed_placeholder_before_another_one_is_reported_at_its_own_place():
    found = find_placeholders("{{a {{b}}")
    assert [(p.kind, p.start, p.end) for p in found] == [("malformed", 0, 4), ("var", 4, 9)]


def test_text_without_placeholders_and_single_braces():
    assert find_placeholders('{"json": {"nested": 1}}') == []


def test_render_substitutes_in_order():
    assert render("a{{x}}b{{y.z}}c", lambda p: p.expr_text.upper()) == "aXbY.Zc"


def test_an_escaped_quote_in_a_single_quoted_key_or_argument_is_that_quote():
    (var,) = find_placeholders(r"{{x['it\'s']}}")
    assert (var.kind, var.path) == ("var", ("it's",))
    (call,) = find_placeholders(r"{{fn('a\'b')}}")
    assert call.args == (Arg("literal", "a'b", text=r"'a\'b'"),)


@pytest.mark.parametrize("text", [r'{{x["\q"]}}', r'{{fn("\x")}}', r'{{x["\u12"]}}'])
def test_an_invalid_escape_is_a_malformed_placeholder_not_an_exception(text):
    (ph,) = find_placeholders(text)
    assert ph.kind == "malformed" and "escape" in ph.error
