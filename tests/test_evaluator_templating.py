"""The {{…}} scanner shared with the checker: offsets, kinds, and messages."""

import pytest

from taskdsl.language.templating import Arg, find_placeholders, render


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


# escapes: a single-quoted literal takes exactly the escapes a double-quoted one does (JSON's, and \'
# for the single quote, as in the cond language), in call arguments and in ["keys"] alike

QUOTES = pytest.mark.parametrize("q", ['"', "'"], ids=["double", "single"])


def _literal(text):
    (call,) = find_placeholders("{{fn(" + text + ")}}")
    assert call.kind == "call", call.error
    (arg,) = call.args
    assert arg.kind == "literal"
    return arg.value


@QUOTES
@pytest.mark.parametrize("body, value", [
    ("a\\qb", "aqb"),  # \q stands for the literal's own quote
    ('a\\"b', 'a"b'), ("a\\'b", "a'b"),  # either quote escaped, in either kind of literal
    ("a\\\\", "a\\"),  # an escaped backslash just before the closing quote does not escape it
    ("a\\\\\\q", "a\\q"),  # an escaped backslash, then an escaped quote
    ("\\\\\\\\", "\\\\"),
    ("\\n\\t\\/\\u00e9", "\n\t/é"),
    ("", ""),
])
def test_escapes_are_the_same_in_both_kinds_of_literal(q, body, value):
    body, value = body.replace("q", q), value.replace("q", q)
    assert _literal(q + body + q) == value
    (var,) = find_placeholders("{{x[" + q + body + q + "]}}")
    assert (var.kind, var.path) == ("var", (value,))


def test_the_other_quote_needs_no_escape():
    assert _literal("'say \"hi\"'") == 'say "hi"'
    assert _literal('"it\'s"') == "it's"


def test_escaped_backslashes_before_the_closing_quotes_of_two_arguments():
    # {{fn('a\\"', "b\\'")}}: a single-quoted a\" (it was a malformed placeholder) and a double-quoted b\'
    (call,) = find_placeholders(r"""{{fn('a\\"', "b\\'")}}""")
    assert call.kind == "call", call.error
    assert [a.value for a in call.args] == ['a\\"', "b\\'"]
    (call,) = find_placeholders(r"""{{fn("a\\", 'b\\', "c")}}""")
    assert [a.value for a in call.args] == ["a\\", "b\\", "c"]  # it was: unterminated string


@QUOTES
@pytest.mark.parametrize("body", ["abc", "abc\\q", "abc\\\\\\q", "a, b"])
def test_an_unterminated_literal_is_a_malformed_placeholder(q, body):
    (ph,) = find_placeholders("{{fn(" + q + body.replace("q", q) + ")}}")
    assert (ph.kind, ph.error) == ("malformed", "unterminated string in the arguments of 'fn'")


@QUOTES
def test_an_unterminated_key_is_a_malformed_placeholder(q):
    (ph,) = find_placeholders("{{x[" + q + "abc\\" + q + "]}}")
    assert ph.kind == "malformed" and ph.error.startswith("unexpected ")


@QUOTES
@pytest.mark.parametrize("body", ["\\a", "\\x", "\\u12", "a\\"])
def test_an_invalid_escape_is_malformed_in_both_kinds_of_literal(q, body):
    for text in ("{{fn(" + q + body + q + ")}}", "{{x[" + q + body + q + "]}}"):
        (ph,) = find_placeholders(text)
        if body == "a\\":  # the backslash escapes the closing quote: the literal never ends
            assert ph.kind == "malformed"
        else:
            assert ph.kind == "malformed" and "escape" in ph.error, (text, ph)


async def test_the_evaluator_passes_escaped_literals_to_an_inline_call(tmp_path):
    from evaluator_helpers import run, write

    write(tmp_path, "lib/text.task.xml", """
        <library><template name="pair" params="a b">
          <task type="script"><command>printf '%s|%s' {{a}} {{b}}</command></task>
        </template></library>""")
    result, _ = await run(tmp_path, r"""
        <task type="script" name="t"><command>echo {{pair('a\\"', "b\\'")}} {{pair('it\'s', "\"q\"")}}</command></task>""")
    assert result.content == "a\\\"|b\\' it's|\"q\""


async def test_the_evaluator_refuses_an_unterminated_literal_clearly(tmp_path):
    from evaluator_helpers import run, write

    from taskdsl.evaluator.results import TaskError

    write(tmp_path, "lib/text.task.xml", """
        <library><template name="pair" params="a b"><task type="script"><command>true</command></task></template></library>""")
    with pytest.raises(TaskError) as info:
        await run(tmp_path, r"""<task type="script" name="t"><command>echo {{pair('a\', "b")}}</command></task>""",
                  check=False)
    assert (info.value.type, info.value.message) == (
        "VALIDATION_ERROR", "task 't': malformed {{pair('a\\', \"b\")}}: unterminated string in the arguments of 'pair'")


@pytest.mark.parametrize("arguments, malformed", [
    (r"""'a\\"', "b\\'" """, False), (r"""'it\'s', "say \'hi\'" """, False), (r"""'a\\', 'b'""", False),
    (r"""'a\', 'b'""", True), (r'''"a\\\", "b"''', True)])
def test_the_checker_agrees_with_the_evaluator_on_escaped_literals(arguments, malformed):
    from taskdsl.rules.checker import check_text

    text = ('<library><template name="pair" params="a b"><task><description>{{a}}{{b}}</description></task></template>'
            f'<task name="t"><description>{{{{pair({arguments})}}}}</description></task></library>')
    td404 = [d for d in check_text(text).diagnostics if d.code == "TD404"]
    assert bool(td404) == malformed, [d.message for d in td404]


@pytest.mark.parametrize("quote", ['"', "'"])
@pytest.mark.parametrize("control, escape", [("\t", "\\t"), ("\n", "\\n")])
def test_a_raw_tab_or_line_break_in_a_quoted_literal_is_named(quote, control, escape):
    from taskdsl.language.templating import parse_placeholder

    placeholder = parse_placeholder(f"pair({quote}a{control}b{quote}, 1)")
    assert placeholder.kind == "malformed"
    what = "tab" if control == "\t" else "line break"
    assert placeholder.error == f"a quoted string cannot hold a raw {what} in 'pair({quote}a{escape}b{quote}, 1)': write {escape}"
