"""The cond expression language: every operator, JSON semantics, and the errors a user sees."""

import pytest

from taskdsl.language.cond import ExprEvalError, ExprForbidden, ExprSyntaxError, evaluate, holds, parse_expr

OUTPUT = {"valid": True, "errors": 2, "items": ["a", "b"], "user": {"name": "Ada", "tags": ["x"]},
          "k k": 1, "zero": 0, "empty": "", "nothing": None, "ratio": 0.5}


@pytest.mark.parametrize("test, expected", [
    ("output.valid == true", True),
    ("output.valid != true", False),
    ("output.errors > 0", True),
    ("output.errors >= 2", True),
    ("output.errors < 2", False),
    ("output.errors <= 2", True),
    ("output.ratio < 1", True),
    ("output.user.name == 'Ada'", True),
    ('output["k k"] == 1', True),
    ("output.items[0] == \"a\"", True),
    ("output.items[-1] == \"b\"", True),
    ("output['user']['tags'][0] == 'x'", True),
    ("len(output.items) == 2", True),
    ("len(output.user.name) == 3", True),
    ("len(output) > 3", True),
    ('"a" in output.items', True),
    ('"d" in output.user.name', True),
    ('"name" in output.user', True),
    ('"z" in output.items', False),
    ("output.valid and output.errors > 1", True),
    ("output.zero or output.valid", True),
    ("not output.empty", True),
    ("not output.valid == false", True),
    ("not (output.valid and output.errors > 5)", True),
    ("(output.errors == 2) and (output.user.name == 'Ada')", True),
    ("output.nothing == null", True),
    ("output.missing == null", True),
    ("output.missing.deeper[3] == null", True),
    ("output.valid == 1", False),  # JSON: true is not 1
    ("output.errors == 2.0", True),
    ("output.nothing > 0", False),  # ordering across types is false, not an exception
    ("output.user.name > 1", False),
    ("'b' > 'a'", True),
    ("-1 < output.zero", True),
    ("output.items[5] == null", True),
])
def test_operators(test, expected):
    assert holds(test, OUTPUT) is expected


def test_and_or_return_json_values_like_javascript():
    assert evaluate(parse_expr("output.zero or output.user.name"), OUTPUT) == "Ada"
    assert evaluate(parse_expr("output.valid and output.errors"), OUTPUT) == 2


def test_precedence_not_binds_looser_than_comparison_and_tighter_than_and():
    expr = parse_expr("not output.a == 1 and output.b")
    assert type(expr).__name__ == "Binary" and expr.op == "and"
    assert type(expr.left).__name__ == "Not"


def test_len_of_a_number_is_a_run_time_error():
    with pytest.raises(ExprEvalError, match="len\\(\\) needs a string, array or object, got int"):
        holds("len(output.errors) > 0", OUTPUT)
    with pytest.raises(ExprEvalError, match="got null"):
        holds("len(output.missing) > 0", OUTPUT)


@pytest.mark.parametrize("test, message, offset, length", [
    ("foo == 1", "'foo' is not available in a cond test: only `output` is", 0, 3),
    ("outptu.n == 1", "'outptu' is not available in a cond test: only `output` is; did you mean 'output'?", 0, 6),
    ("output.__class__", "'__class__' is not available in a cond test: dunder names are not allowed", 7, 9),
    ("output.name.upper()", "'.upper(…)': method calls are not part of the cond language", 12, 5),
    ("open('x')", "'open(…)' is not available in a cond test: the only call is len(…)", 0, 4),
    ("__import__('os')", "'__import__(…)' is not available in a cond test: the only call is len(…)", 0, 10),
    ("output.a + 1 > 2", "arithmetic ('+') is not part of the cond language", 9, 1),
    ("True", "'True' is Python: write 'true'", 0, 4),
    ("output.x is None", "use '==' instead of 'is'", 9, 2),
    ("'abc'.upper", "member access and indexing are only allowed on `output`", 5, 1),
    ("1 < output.a < 3", "chained comparisons are not part of the cond language: join them with 'and'", 13, 1),
    ("output.a not in output.b", "'not in' is not part of the cond language: write not (a in b)", 9, 6),
    ("len", "len can only be called: write len(output.items)", 0, 3),
    ("[1] == output", "array literals are not part of the cond language", 0, 1),
    ("output.a && output.b", "use 'and' instead of '&&'", 9, 2),
    ("output.a & output.b", "use 'and' instead of '&'", 9, 1),
    ("lambda: 1", "'lambda' is not available in a cond test: only `output` is", 0, 6),
])
def test_forbidden_constructs(test, message, offset, length):
    with pytest.raises(ExprForbidden) as info:
        parse_expr(test)
    assert (info.value.message, info.value.offset, info.value.length) == (message, offset, length)


@pytest.mark.parametrize("test, message, offset", [
    ("", "empty test: write a condition such as output.valid == true", 0),
    ("output ==", "expected a value (output, a number, a string, true, false, null, len(…) or '('), found the end of the test", 9),
    ("(output.a == 1", "expected ')' to close the '(' at column 1, found the end of the test", 14),
    ("len(output.a", "expected ')' after the argument of len(, found the end of the test", 12),
    ("len()", "len() needs one argument", 0),
    ("len(output.a, output.b)", "len() takes exactly one argument", 12),
    ("output.a == 'x", "unterminated string: add the closing '", 12),
    ("output.", "expected a member name after '.', found the end of the test", 7),
    ("output.a output.b", "expected an operator (==, and, or, in …) or the end of the test, found 'output'", 9),
    ("output[]", "expected an index or a key inside '[ ]', found ']'", 7),
    ("output.a == 1 and", "expected a value (output, a number, a string, true, false, null, len(…) or '('), found the end of the test", 17),
    ("output.a == #", "unexpected character '#'", 12),
    # a lone '=' is no expression at all (TD701, not TD702): `= =`, `===`, `a = 1`
    ("output.a = 1", "'=' is assignment: use '==' to compare", 9),
    ("output.a = = 1", "'=' is assignment: use '==' to compare", 9),
    ("output.a === 1", "'===' is not an operator of the cond language: use '=='", 11),
    ("output.a[0 == 1", "expected ']' after the index, found the end of the test", 15),
])
def test_syntax_errors(test, message, offset):
    with pytest.raises(ExprSyntaxError) as info:
        parse_expr(test)
    assert info.value.message == message
    assert info.value.offset == offset


def test_no_python_eval_reaches_builtins():
    # a classic escape attempt is refused by the parser, never executed
    with pytest.raises(ExprForbidden):
        parse_expr("output.__class__.__mro__[1].__subclasses__()")


def test_string_escapes():
    assert holds(r'output.s == "a\"b\n\u00e9"', {"s": 'a"b\né'})


@pytest.mark.parametrize("test", ["(" * 2000 + "1" + ")" * 2000, "not " * 2000 + "true",
                                  "output" + "[output" * 2000 + "]" * 2000])
def test_deep_nesting_is_a_syntax_error_not_a_recursion_error(test):
    with pytest.raises(ExprSyntaxError, match="nests too deeply"):
        parse_expr(test)


def test_reasonable_nesting_still_parses():
    assert evaluate(parse_expr("(" * 50 + "1" + ")" * 50 + " == 1"), {}) is True


# string literals: one escape set for both quotes (JSON's, and \' as in the {{…}} call arguments)

@pytest.mark.parametrize("q", ['"', "'"], ids=["double", "single"])
@pytest.mark.parametrize("body, value", [
    ("a\\qb", "aqb"), ('a\\"b', 'a"b'), ("a\\'b", "a'b"),
    ("a\\\\", "a\\"),  # an escaped backslash just before the closing quote does not escape it
    ("a\\\\\\q", "a\\q"), ("\\n\\t\\/\\u00e9", "\n\t/é"),
    ("\\ud83d\\ude00", "\U0001F600"),  # a surrogate pair is one character, as json.loads reads it
])
def test_string_literals_read_the_same_in_either_quotes(q, body, value):
    body, value = body.replace("q", q), value.replace("q", q)
    assert holds(f"output.s == {q}{body}{q} and {q}{body}{q} == output.s", {"s": value})


@pytest.mark.parametrize("q", ['"', "'"], ids=["double", "single"])
@pytest.mark.parametrize("body", ["abc", "abc\\q", "abc\\", "abc\\\\\\q"])
def test_an_unterminated_string_says_so_in_either_quotes(q, body):
    test = "output.a == " + q + body.replace("q", q)
    with pytest.raises(ExprSyntaxError) as info:
        parse_expr(test)
    # a trailing backslash was reported as "unknown escape '\' in string"
    assert (info.value.message, info.value.offset, info.value.length) == (
        f"unterminated string: add the closing {q}", 12, len(test) - 12)


@pytest.mark.parametrize("q", ['"', "'"], ids=["double", "single"])
def test_an_unknown_escape_is_refused_in_either_quotes(q):
    with pytest.raises(ExprSyntaxError) as info:
        parse_expr(f"output.a == {q}a\\x{q}")
    assert (info.value.message, info.value.offset, info.value.length) == ("unknown escape '\\x' in string", 14, 2)
