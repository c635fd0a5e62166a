"""cond expressions (TD701–TD703), parsed by taskdsl.language.cond (the evaluator's own parser)."""

from __future__ import annotations

from taskdsl.language.diagnostics import Fix, Related, Severity, TextEdit
from taskdsl.language.document import Element, Span
from taskdsl.language.cond import ExprForbidden, ExprSyntaxError, parse_expr
from taskdsl.rules.registry import RuleContext, rule
from taskdsl.rules.util import make, value_subspan
from taskdsl.meaning.facts import (LAST_OUTPUT, is_ref, output_kind, output_step, step_of, target_name,
                                   tested_step)
from taskdsl.language.vocabulary import ERROR_REASONS, enum_value
from taskdsl.language.names import nearest as nearest_name



def _tests(ctx: RuleContext) -> list:
    """(case, test attribute, parse error or None) of every case test; parsed once per document."""
    return ctx.cached(_parsed_tests)


def _parsed_tests(ctx: RuleContext) -> list:
    found = []
    for case in ctx.tagged("case", "expect"):  # a test file's <expect test> is in the same language
        attr = case.attr("test")
        if attr is not None and attr.value_span is not None:
            found.append((case, attr, _parse(attr)))
    return found


def _parse(attr):
    try:
        parse_expr(attr.value)
    except (ExprSyntaxError, ExprForbidden) as error:
        return error.with_traceback(None)  # kept with the document's tests: no frames held
    return None


@rule("TD701", Severity.ERROR, "cond test does not parse",
      what="A `<case test=\"…\">` is not an expression of the cond language: `output`, member "
           "access and indexing, literals, comparisons, `and or not`, `in`, parentheses, `len(…)`.",
      why="The test is parsed when the template is loaded; a syntax error means the cond can never run "
          "(a run refuses it). `= =`, `===`, a lone `=` and unbalanced brackets are syntax errors; a test "
          "that parses but uses what the language lacks is TD702.",
      bad='<case test="output.valid = = true">',
      good='<case test="output.valid == true">',
      fix="Correct the expression at the reported position. Quick fix (safe) where the rewrite is obvious: a "
          "lone `=` → `==`, `===` → `==`, `= =` → `==`.",
      tags=("case", "expect"))
def syntax_rule(ctx: RuleContext):
    for _case, attr, error in _tests(ctx):
        if isinstance(error, ExprSyntaxError):
            span = value_subspan(ctx.document, attr, error.offset, error.length)
            yield make("TD701", span, f"cond test does not parse: {error.message}",
                       fixes=_rewrite_fixes(attr.value, error, span))


@rule("TD702", Severity.ERROR, "cond test outside the expression language",
      what="The test uses something the language does not have: a name other than `output`, a call other "
           "than `len(…)`, dunder or attribute access on anything but `output`, arithmetic, lambdas …",
      why="Tests are evaluated by a small safe evaluator, never by Python's eval: nothing else can run.",
      bad='<case test="__import__(\'os\').system(\'rm -rf /\')">',
      good='<case test="len(output.errors) == 0">',
      fix="Rewrite the test over `output` with the language's operators. Quick fix where the rewrite is "
          "obvious: `&&` → `and`, `||` → `or`, `True`/`False`/`None` → `true`/`false`/`null`, `is` → `==` "
          "(safe); `!` → `not` (unsafe: `not` binds looser than a comparison). None for a single `&` or `|`, "
          "nor for `is not`.",
      tags=("case", "expect"))
def forbidden_rule(ctx: RuleContext):
    for _case, attr, error in _tests(ctx):
        if isinstance(error, ExprForbidden):
            span = value_subspan(ctx.document, attr, error.offset, error.length)
            yield make("TD702", span, error.message, fixes=_rewrite_fixes(attr.value, error, span))


def _progresses(rewritten: str, past: int) -> bool:
    """Whether the rewritten test parses, or fails only after the rewrite (a later typo, fixed next)."""
    try:
        parse_expr(rewritten)
    except (ExprSyntaxError, ExprForbidden) as error:
        return error.offset >= past
    return True


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _rewrite_fixes(test: str, error, span) -> list[Fix]:
    """The parser's obvious rewrite of what it stopped at (`=` → `==`, `&&` → `and`, `True` → `true`),
    a word kept apart from its neighbours by a space."""
    if error.rewrite is None:
        return []
    new = error.rewrite
    if new[:1].isalpha() and error.offset > 0 and _word_char(test[error.offset - 1]):
        new = " " + new
    end = error.offset + error.length
    if new[-1:].isalpha() and end < len(test) and _word_char(test[end]):
        new += " "
    if not _progresses(test[:error.offset] + new + test[end:], error.offset + len(new)):
        return []  # `a == 1 = 2` → `a == 1 == 2` is no better: not an obvious rewrite
    title = f"Replace '{test[error.offset:end]}' with '{error.rewrite}'" if error.rewrite else \
        f"Remove '{test[error.offset:end]}'"
    return [Fix(title, (TextEdit(span, new),), safe=error.rewrite_safe)]


def _tested_task(cond: Element) -> Element | None:
    """The step whose output a cond inside a sequential tests (None when unknown or at top level)."""
    return tested_step(cond)


def _output_task(step: Element) -> Element | None:
    """The task that produces a step's output (a sequential's last step, a reduce's
    reduction_task); None for a call or a ref (their target is in another element) or unknown."""
    producer = output_step(step)
    return None if producer is None or producer.tag == "call" or is_ref(producer) else producer


def _resolver(ctx: RuleContext):
    """name → the output kind of the one definition a call or ref names (None: unknown, ambiguous)."""
    from taskdsl.rules.library_rules import _view

    view = _view(ctx)

    def resolve(name: str) -> str | None:
        kinds = {d.output for d in view.candidates(name)}
        return kinds.pop() if len(kinds) == 1 else None
    return resolve


def _undeclared(step: Element, resolve) -> tuple[str, str] | None:
    """(what, whose) naming the producer of a step's output in a TD703 message when it is known to
    be plain text (not declared JSON/XML); None when it is structured or unknown."""
    if output_kind(step, resolve) != "text":
        return None
    producer = output_step(step)
    if producer.tag == "call":
        return (f"the <call> of template '{target_name(producer)}' before it",
                "that template's task does not declare")
    if is_ref(producer):
        return f"the <task ref=\"{target_name(producer)}\"> before it", f"task '{target_name(producer)}' does not declare"
    return f"the <{producer.tag}> before it", "that task does not declare"


@rule("TD703", Severity.WARNING, "tested output not declared as JSON",
      what="Inside a sequential, a `<cond>` tests the previous step's output as JSON, or a later step's "
           "`{{last_output.field}}` reads a member of it; that step does not declare `<output_format "
           "type=\"json\"/>`. A `<call>` or a `<task ref>` step produces what its template's or task's "
           "task declares (a template whose `returns` is object, array, number or boolean counts as "
           "declared). (At top level a cond tests `last_output`, which nothing in the file declares: not "
           "checked.)",
      why="Without the declaration the model is not asked for JSON. The cond still reads the output as "
          "JSON: a run works while the output happens to be JSON (a script that prints it), and fails "
          "with \"output must be valid JSON for conditionals\" (TASK_FAILURE, reason `invalid_json`) "
          "as soon as it is not — a model's prose answer, say. `{{last_output.title}}` fails the same way: "
          "\"'last_output' is text, not JSON\".",
      bad='<steps>\n  <task><description>Check</description></task>\n  <cond>…</cond>\n</steps>',
      good='<steps>\n  <task><description>Check</description><output_format type="json"/></task>\n  <cond>…</cond>\n</steps>',
      fix="Add `<output_format type=\"json\"/>` to the tested task (for a call or a ref: to its template's "
          "or task's task).",
      tags=("cond", "steps"))
def json_output_rule(ctx: RuleContext):
    resolve = _resolver(ctx)
    for cond in ctx.tagged("cond"):
        step = _tested_task(cond)
        named = _undeclared(step, resolve) if step is not None else None
        if named is None:
            continue
        yield make("TD703", cond.name_span,
                   f"this cond tests the output of {named[0]} as JSON, which {named[1]} (<output_format "
                   "type=\"json\"/>): the run fails only if the output does not parse as JSON; add the "
                   "declaration to that task", related=[Related("the tested task", output_step(step).name_span)])
    for element, placeholder, span in ctx.model.placeholders():
        if placeholder.kind != "var" or placeholder.name != LAST_OUTPUT or not placeholder.path:
            continue
        here = step_of(element)
        step = tested_step(here) if here is not None else None
        named = _undeclared(step, resolve) if step is not None else None
        if named is None:
            continue
        yield make("TD703", span,
                   f"{{{{{placeholder.expr_text}}}}} reads the output of {named[0]} as JSON, which {named[1]} "
                   "(<output_format type=\"json\"/>): the run fails with \"'last_output' is text, not JSON\" "
                   "when it does not parse as JSON; add the declaration to that task",
                   related=[Related("the task whose output it reads", output_step(step).name_span)])


@rule("TD704", Severity.ERROR, "expect_error reason no error carries",
      what="A test's `<expect_error reason>` names a reason no error of a run carries. The reasons errors "
           "carry: " + ", ".join(f"`{reason}`" for reason in ERROR_REASONS) + ".",
      why="The test could never pass: the run's error is compared with this reason, and no error has it.",
      bad='<expect_error type="TASK_FAILURE" reason="exit_code"/>',
      good='<expect_error type="TASK_FAILURE" reason="script_error"/>',
      fix="Name a reason an error carries (did-you-mean quick fix), or leave `reason` out to match any "
          "error of the type.",
      tags=("expect_error",))
def expect_error_reason_rule(ctx: RuleContext):
    for expected in ctx.tagged("expect_error"):
        attr = expected.attr("reason")
        if attr is None or attr.value_span is None or not attr.value.strip():
            continue
        reason = attr.value.strip()
        if reason in ERROR_REASONS:
            continue
        guess, sure = nearest_name(reason, ERROR_REASONS)
        hint = f"; did you mean '{guess}'?" if guess else ""
        start = attr.value_span.start + (len(attr.value) - len(attr.value.lstrip()))
        fixes = [Fix(f"Replace with '{guess}'", (TextEdit(Span(start, start + len(reason)), guess),), safe=sure)
                 ] if guess else []
        yield make("TD704", attr.value_span, f"no error carries the reason '{reason}'{hint} "
                   "(`taskdsl rules TD704` lists the reasons)", fixes=fixes)


def _tests_of(ctx: RuleContext) -> list[Element]:
    "The <test>s of a test file (a <tests> root)."
    return [t for t in ctx.tagged("test") if t.parent is not None and t.parent.tag == "tests" and t.parent.parent is None]


@rule("TD705", Severity.WARNING, "test expects nothing",
      what="A `<test>` with neither an `<expect>` nor an `<expect_error>`: it passes whenever the run "
           "succeeds, whatever the output.",
      why="Usually a test not finished: it stays green when the task's output goes wrong.",
      bad='<test name="shouts" task="shout">\n  <input name="word">hi</input>\n</test>',
      good='<test name="shouts" task="shout">\n  <input name="word">hi</input>\n  <expect test=\'"HI" in output\'/>\n'
           '</test>',
      fix="Add an `<expect test=\"…\"/>` for what the output must hold, or `<expect_error type=\"…\"/>`; "
          "`<expect test=\"true\"/>` says the run succeeding is all the test checks.",
      tags=("test",))
def test_expects_nothing_rule(ctx: RuleContext):
    for test in _tests_of(ctx):
        if test.child("expect") is None and test.child("expect_error") is None:
            attr = test.attr("name")
            name = f"'{attr.value}' " if attr is not None and attr.value else ""
            yield make("TD705", test.name_span, f"test {name}has no <expect> or <expect_error>: it passes whenever "
                       "the run succeeds; add <expect test=\"…\"/> (<expect test=\"true\"/> if that is all it checks)")


@rule("TD706", Severity.ERROR, "test name used twice",
      what="Two `<test>`s of one test file have the same name.",
      why="A test is reported, selected (`-k`), listed in the editor and written to JUnit by its file and "
          "name: the second would be mistaken for the first.",
      bad='<test name="shouts" task="shout">…</test>\n<test name="shouts" task="shout">…</test>',
      good='<test name="shouts a word" task="shout">…</test>\n<test name="shouts a sentence" task="shout">…</test>',
      fix="Rename one of them.",
      tags=("test",))
def duplicate_test_name_rule(ctx: RuleContext):
    seen: dict[str, Element] = {}
    for test in _tests_of(ctx):
        attr = test.attr("name")
        if attr is None or not attr.value.strip() or attr.value_span is None:
            continue
        name = attr.value.strip()
        first = seen.setdefault(name, test)
        if first is not test:
            line = ctx.document.position(first.start)[0] + 1
            yield make("TD706", attr.value_span, f"the test name '{name}' is used twice in this file (also on line "
                       f"{line}): rename one of them",
                       related=[Related(f"'{name}' first named here", first.attr("name").value_span)])
