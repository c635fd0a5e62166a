"""Schema diagnostics TD100–TD107: the code, the range (1-based line:column and what it covers)
and the message of each error kind, on templates written for these tests."""

from taskdsl.rules.checker import check_text
from taskdsl.language.document import parse
from taskdsl.language.safexml import wellformedness
from taskdsl.language.schema_check import validate

ALL_TASK_CHILDREN = ("description, instructions, system, model, criteria, output_format, context_management, "
                     "inputs, file_paths, steps, initial_value, inner_task, reduction_task, command, manual_xml, "
                     "disable_reparsing")


def schema_findings(text: str) -> list[tuple]:
    """(code, line, column, covered text, message) of every schema diagnostic, 1-based, in order.

    The schema stage alone: in `check`, a rule may explain a schema error better and replace it."""
    doc = parse(text)
    lxml_root, problems = wellformedness(doc)
    assert problems == []
    found = []
    for d in sorted(validate(doc, lxml_root), key=lambda d: (d.span.start, d.code)):
        line, col = doc.position(d.span.start)
        found.append((d.code, line + 1, col + 1, text[d.span.start:d.span.end], d.message))
    return found


def test_td100_root_not_a_dsl_root_with_did_you_mean():
    text = '<?xml version="1.0"?>\n<taks name="x">\n  <description>hi</description>\n</taks>\n'
    assert schema_findings(text) == [
        ("TD100", 2, 2, "taks",
         "<taks> is not a taskdsl root element (did you mean <task>?); a template's root is one of "
         "<task>, <template>, <library>, <call>, <cond>"),
    ]


def test_td100_namespaced_root():
    text = '<task xmlns="urn:example">\n  <description>hi</description>\n</task>\n'
    [(code, line, col, covered, message)] = schema_findings(text)
    assert (code, line, col, covered) == ("TD100", 1, 2, "task")
    assert message.startswith("<task> is in namespace 'urn:example': taskdsl elements have no namespace")


def test_td101_unknown_child_lists_what_is_allowed_and_suggests():
    text = (
        '<task type="atomic">\n'
        '  <descripton>Summarize</descripton>\n'
        '  <model>gpt-4o-mini</model>\n'
        '</task>\n'
    )
    allowed_without_model = ALL_TASK_CHILDREN.replace("model, ", "")
    assert schema_findings(text) == [
        ("TD101", 2, 4, "descripton",
         f"<descripton> is not allowed in <task> (did you mean <description>?); allowed here: {allowed_without_model}"),
    ]


def test_td101_every_unknown_child_is_reported_not_just_the_first():
    text = (
        '<task>\n'
        '  <description>x</description>\n'
        '  <foo/>\n'
        '  <context_management>\n'
        '    <inherit_context>sometimes</inherit_context>\n'
        '  </context_management>\n'
        '  <bar/>\n'
        '</task>\n'
    )
    found = schema_findings(text)
    assert [(code, line, col, covered) for code, line, col, covered, _ in found] == [
        ("TD101", 3, 4, "foo"),
        ("TD105", 5, 22, "sometimes"),
        ("TD101", 7, 4, "bar"),
    ]


def test_td101_element_in_the_wrong_place_says_what_is_expected():
    text = (
        '<cond>\n'
        '  <default><task><description>no</description></task></default>\n'
        '  <case test="output.ok"><task><description>yes</description></task></case>\n'
        '</cond>\n'
    )
    assert schema_findings(text) == [
        ("TD101", 2, 4, "default", "<default> is not allowed at this place in <cond>; expected here: case"),
    ]


def test_td101_second_branch_of_a_choice():
    text = '<task>\n  <inputs>\n    <input name="a"><task/><call template="t"/></input>\n  </inputs>\n</task>\n'
    assert schema_findings(text) == [
        ("TD101", 3, 29, "call", "<call> is not allowed in <input> after <task>; nothing more is allowed there"),
    ]


def test_td101_child_inside_a_text_only_element():
    text = '<task>\n  <description>Read <b>this</b></description>\n</task>\n'
    assert schema_findings(text) == [
        ("TD101", 2, 22, "b", "<b> is not allowed in <description>: <description> holds text only"),
    ]


def test_td102_required_child_missing_on_the_parent_name():
    text = '<template name="greet" params="who">\n</template>\n'
    assert schema_findings(text) == [
        ("TD102", 1, 2, "template", "<template> is missing a required child: add <task>"),
    ]


def test_td102_choice_lists_the_alternatives():
    text = '<task>\n  <description>x</description>\n  <file_paths source="literal"/>\n</task>\n'
    assert schema_findings(text) == [
        ("TD102", 3, 4, "file_paths",
         "<file_paths> is missing a required child: add one of <path>, <command>, <description>"),
    ]


def test_td103_attribute_not_allowed_with_did_you_mean():
    text = '<task typ="sequential" name="x">\n  <description>x</description>\n</task>\n'
    assert schema_findings(text) == [
        ("TD103", 1, 7, "typ",
         "attribute 'typ' is not allowed on <task> (did you mean 'type'?); allowed: type, ref, subtype"),
    ]


def test_td103_on_an_element_without_attributes():
    text = '<task>\n  <description lang="en">x</description>\n</task>\n'
    assert schema_findings(text) == [
        ("TD103", 2, 16, "lang", "attribute 'lang' is not allowed on <description>: it takes no attributes"),
    ]


def test_td104_required_attribute_missing_on_the_start_tag_name():
    text = '<call>\n  <arg>data.csv</arg>\n</call>\n'
    assert schema_findings(text) == [
        ("TD104", 1, 2, "call", "<call> is missing the required attribute 'template'"),
    ]


def test_td105_enumeration_attribute_value():
    text = '<task type="sequental">\n  <description>x</description>\n</task>\n'
    assert schema_findings(text) == [
        ("TD105", 1, 13, "sequental",
         "'sequental' is not valid for attribute 'type' of <task> (did you mean 'sequential'?); "
         "expected one of atomic, sequential, reduce, script"),
    ]


def test_td105_boolean_element_text_is_the_trimmed_text():
    text = '<task>\n  <description>x</description>\n  <manual_xml>\n    yes\n  </manual_xml>\n</task>\n'
    assert schema_findings(text) == [
        ("TD105", 4, 5, "yes", "'yes' is not valid for <manual_xml>; expected true or false"),
    ]


def test_td105_boolean_one_is_not_true():
    text = '<task type="script">\n  <command fail_on_error="1">ls</command>\n</task>\n'
    assert schema_findings(text) == [
        ("TD105", 2, 27, "1", "'1' is not valid for attribute 'fail_on_error' of <command>; expected true or false"),
    ]


def test_td105_identifier_pattern_in_words():
    text = '<template name="2fast" params="a, b">\n  <task><description>{{a}}</description></task>\n</template>\n'
    assert schema_findings(text) == [
        ("TD105", 1, 17, "2fast",
         "'2fast' is not valid for attribute 'name' of <template>; expected a name: an ASCII letter (a-z, A-Z) "
         "or underscore, then ASCII letters, digits or underscores (e.g. my_input)"),
    ]


def test_td105_number():
    text = '<task type="script">\n  <command timeout="ten">ls</command>\n</task>\n'
    assert schema_findings(text) == [
        ("TD105", 2, 21, "ten", "'ten' is not valid for attribute 'timeout' of <command>; expected a whole number greater than zero"),
    ]


def test_td106_text_in_an_element_only_element():
    text = '<task>\n  Summarize the file\n  <description>x</description>\n</task>\n'
    assert schema_findings(text) == [
        ("TD106", 2, 3, "Summarize the file",
         "text is not allowed here: <task> holds only elements (description, instructions, system, model, …); "
         "put text in <description> or <instructions>"),
    ]


def test_td106_element_must_be_empty():
    text = '<task>\n  <description>x</description>\n  <output_format type="json">JSON please</output_format>\n</task>\n'
    assert schema_findings(text) == [
        ("TD106", 3, 30, "JSON please", "text is not allowed here: <output_format> must be empty"),
    ]


def test_td107_repeated_element_with_related_first_occurrence():
    text = '<task>\n  <description>one</description>\n  <model>a</model>\n  <description>two</description>\n</task>\n'
    doc = parse(text)
    [diagnostic] = validate(doc, wellformedness(doc)[0])
    assert diagnostic.code == "TD107"
    assert doc.position(diagnostic.span.start) == (3, 3)
    assert text[diagnostic.span.start:diagnostic.span.end] == "description"
    assert diagnostic.message == ("<description> may appear only once in <task>; the first one is on line 2: "
                                  "merge them or remove this one")
    [related] = diagnostic.related
    assert doc.position(related.span.start) == (1, 3)
    assert related.message == "first <description> is here"


def test_td107_second_task_in_a_template():
    text = '<template name="t">\n  <task/>\n  <task/>\n</template>\n'
    assert [f[:4] for f in schema_findings(text)] == [("TD107", 3, 4, "task")]


def test_several_errors_of_different_kinds_are_all_reported():
    text = (
        '<task type="sequential" nmae="pipeline">\n'          # TD103 nmae
        '  <description>x</description>\n'
        '  <steps>\n'
        '    <task type="atomc">\n'                           # TD105 atomc
        '      <descripton>a</descripton>\n'                  # TD101 descripton
        '      <output_format/>\n'                            # TD104 type
        '    </task>\n'
        '    <call><arg>1</arg></call>\n'                     # TD104 template
        '    <cond/>\n'                                       # TD102 case
        '  </steps>\n'
        '  <context_management>\n'
        '    <fresh_context>enabled</fresh_context>\n'
        '    <fresh_context>disabled</fresh_context>\n'       # TD107
        '  </context_management>\n'
        '  stray words\n'                                     # TD106
        '</task>\n'
    )
    assert [f[:4] for f in schema_findings(text)] == [
        ("TD103", 1, 25, "nmae"),
        ("TD105", 4, 17, "atomc"),
        ("TD101", 5, 8, "descripton"),
        ("TD104", 6, 8, "output_format"),
        ("TD104", 8, 6, "call"),
        ("TD102", 9, 6, "cond"),
        ("TD107", 13, 6, "fresh_context"),
        ("TD106", 15, 3, "stray words"),
    ]


def test_no_duplicate_diagnostics_for_one_span_and_code():
    text = '<task>\n  a<description>x</description>b<model>m</model>c\n</task>\n'
    found = schema_findings(text)
    assert [f[:4] for f in found] == [("TD106", 2, 3, "a"), ("TD106", 2, 32, "b"), ("TD106", 2, 49, "c")]
    assert len({(f[0], f[1], f[2]) for f in found}) == len(found)


def test_a_valid_template_has_no_schema_diagnostics():
    text = (
        '<task type="sequential" name="pipeline">\n'
        '  <description>Two steps</description>\n'
        '  <steps>\n'
        '    <task><description>first</description><output_format type="json"/></task>\n'
        '    <cond><case test="output.ok"><call template="t"><arg>1</arg></call></case></cond>\n'
        '  </steps>\n'
        '</task>\n'
    )
    assert schema_findings(text) == []


def test_check_reports_schema_errors_with_the_rules():
    text = '<task typ="atomic">\n  <description>x</description>\n</task>\n'
    result = check_text(text)
    assert [(d.code, result.document.position(d.span.start)) for d in result.diagnostics] == [("TD103", (0, 6))]


def test_malformed_input_gets_only_td001():
    result = check_text('<task><description>x</task>')
    assert {d.code for d in result.diagnostics} == {"TD001"}


def test_td101_suggests_real_typos_and_half_typed_names_but_not_look_alikes():
    text = ('<task type="sequential">\n  <description>x</description>\n  <code>js</code>\n'
            '  <context_management><fresh>enabled</fresh></context_management>\n'
            '  <stpes><task><description>y</description></task></stpes>\n</task>\n')
    messages = {covered: message.split(";")[0] for _, _, _, covered, message in schema_findings(text)}
    assert messages == {
        "code": "<code> is not allowed in <task>",
        "fresh": "<fresh> is not allowed in <context_management> (did you mean <fresh_context>?)",
        "stpes": "<stpes> is not allowed in <task> (did you mean <steps>?)",
    }
