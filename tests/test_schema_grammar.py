"""The grammar (schemas/task.xsd) and the queries taskdsl.language.schema answers from it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import xmlschema
from lxml import etree

from taskdsl.language import schema

from paths import CORPUS, corpus_present, need_corpus  # noqa: E402  (shared/ beside the checkout, as in CI)
XS = "{http://www.w3.org/2001/XMLSchema}"

# V-status corpus files that are nonetheless invalid by SPEC §3, and why.
EXPECTED_INVALID = {
    # <steps> holds only a comment; SPEC: steps holds "one or more of task, call, cond".
    "014_adr7_isolated_sequential.xml": "Element 'steps': Missing child element(s)",
    "017_adr14_sequential_override.xml": "Element 'steps': Missing child element(s)",
}


def _validate(text: str) -> list[str]:
    """Schema errors of a document, as libxml2 phrases them ([] when valid)."""
    validator = schema.lxml_schema()
    ok = validator.validate(etree.fromstring(text.encode()))
    return [] if ok else [e.message for e in validator.error_log]


# --------------------------------------------------------------------------- the XSD itself


def test_xsd_is_found_in_the_source_tree():
    path = schema.xsd_path()
    assert path.is_file()
    assert path.name == "task.xsd"


def test_xsd_compiles_in_lxml_and_xmlschema():
    assert isinstance(schema.lxml_schema(), etree.XMLSchema)
    compiled = xmlschema.XMLSchema10(str(schema.xsd_path()))
    assert sorted(compiled.elements) == ["call", "cond", "library", "task", "template", "tests"]


def test_every_declaration_and_enumeration_in_the_xsd_is_documented():
    tree = etree.parse(str(schema.xsd_path()))
    undocumented = [
        f"{node.tag.removeprefix(XS)} {node.get('name') or node.get('ref') or node.get('value')}"
        f" (line {node.sourceline})"
        for node in tree.iter(f"{XS}element", f"{XS}attribute", f"{XS}enumeration")
        if not "".join(node.xpath("xs:annotation/xs:documentation//text()", namespaces={"xs": XS[1:-1]})).strip()
    ]
    assert undocumented == []


# --------------------------------------------------------------------------- the corpus


def _v_status_files() -> list[str]:
    with open(CORPUS / "INDEX.tsv", newline="") as index:
        return [row["file"] for row in csv.DictReader(index, delimiter="\t") if row["status"] == "V"]


def _single_root(path: Path) -> etree._Element | None:
    try:
        return etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True)).getroot()
    except etree.XMLSyntaxError:  # not well-formed, or several roots (062)
        return None


def _v_status_roots() -> list[str]:
    "The V files with a single well-formed root (the others are TD001's business, not the schema's)."
    return [name for name in _v_status_files() if _single_root(CORPUS / name) is not None] if corpus_present() else []


def test_the_corpus_has_valid_templates_to_validate():
    need_corpus()  # skipped without the corpus; under CI a missing corpus fails
    assert len(_v_status_roots()) > 20


@pytest.mark.parametrize("name", _v_status_roots())
def test_valid_upstream_templates_validate(name):
    root = _single_root(CORPUS / name)
    validator = schema.lxml_schema()
    valid = validator.validate(root)
    errors = [e.message for e in validator.error_log]
    if name in EXPECTED_INVALID:
        assert not valid
        assert any(EXPECTED_INVALID[name] in e for e in errors), errors
    else:
        assert valid, errors


# --------------------------------------------------------------------------- invalid samples


def test_a_root_that_is_not_a_dsl_root_fails():
    errors = _validate("<foo/>")
    assert any("No matching global declaration" in e for e in errors), errors


@pytest.mark.parametrize("root", ["task", "template", "library", "call", "cond"])
def test_only_the_five_roots_are_global(root):
    errors = _validate(f"<{root}/>")
    assert not any("No matching global declaration" in e for e in errors)


def test_context_elements_cannot_be_roots():
    assert any("No matching global declaration" in e for e in _validate("<inherit_context>full</inherit_context>"))
    assert any("No matching global declaration" in e for e in _validate("<steps><task/></steps>"))


def _task(body: str, attrs: str = "") -> str:
    return f"<task{attrs}><description>d</description>{body}</task>"


def test_accumulate_data_one_is_not_a_boolean():
    errors = _validate(_task("<context_management><accumulate_data>1</accumulate_data></context_management>"))
    assert any("accumulate_data" in e and "'1'" in e for e in errors), errors


def test_accumulate_data_accepts_true_and_false_with_surrounding_whitespace():
    for value in ("true", "false", "\n  true\n"):
        assert _validate(_task(f"<context_management><accumulate_data>{value}</accumulate_data></context_management>")) == []


def test_legacy_boolean_inherit_context_fails():
    errors = _validate(_task("<context_management><inherit_context>true</inherit_context></context_management>"))
    assert any("inherit_context" in e and "'full', 'none', 'subset'" in e for e in errors), errors


def test_unknown_child_fails():
    errors = _validate(_task("<expected_output>x</expected_output>"))
    assert any("'expected_output': This element is not expected" in e for e in errors), errors


def test_output_format_without_type_fails():
    errors = _validate(_task('<output_format schema="object"/>'))
    assert any("output_format" in e and "'type' is required" in e for e in errors), errors


def test_output_format_must_be_empty():
    assert _validate(_task('<output_format type="json">x</output_format>')) != []


def test_repeated_description_fails():
    errors = _validate(_task("<description>again</description>"))
    assert any("'description': This element is not expected" in e for e in errors), errors


def test_task_children_may_come_in_any_order():
    text = '<task type="script"><command>ls</command><inputs><input name="a">1</input></inputs><description>d</description></task>'
    assert _validate(text) == []


@pytest.mark.parametrize(
    ("attrs", "valid"),
    [
        (' name="load-data.v2"', True),
        (' name="2fast"', False),
        (' ref="atomic:associative_matching"', True),
        (' ref="a:b:c"', False),
        (' type="director_evaluator_loop"', False),
        (' subtype="anything goes"', True),
    ],
)
def test_task_attribute_values(attrs, valid):
    assert (_validate(_task("", attrs)) == []) is valid


@pytest.mark.parametrize(
    ("params", "valid"),
    [("dataset,config", True), ("dataset, config", True), ("", True), ("a,,b", False), ("a b", True),
     (" a  b , c ", True), ("a,", False), ("1a", False)],
)
def test_template_params(params, valid):
    text = f'<template name="t" params="{params}"><task><description>d</description></task></template>'
    assert (_validate(text) == []) is valid


def test_template_needs_exactly_one_task():
    assert _validate('<template name="t"/>') != []
    two = '<template name="t"><task><description>a</description></task><task><description>b</description></task></template>'
    assert _validate(two) != []


@pytest.mark.parametrize(
    ("command", "valid"),
    [
        ('<command timeout="5" fail_on_error="false">ls</command>', True),
        ('<command timeout="0">ls</command>', False),
        ('<command fail_on_error="0">ls</command>', False),
    ],
)
def test_script_command_attributes(command, valid):
    assert (_validate(_task(command, ' type="script"')) == []) is valid


def test_input_holds_text_or_one_task_or_call():
    one = _task('<inputs><input name="a"><!-- c --><call template="t"/></input></inputs>')
    two = _task('<inputs><input name="a"><call template="t"/><call template="u"/></input></inputs>')
    assert _validate(one) == []
    assert _validate(two) != []
    assert _validate(_task('<inputs><input name="a" from="env:data_source"/><input name="b" from="x.y[0]"/></inputs>')) == []
    assert _validate(_task('<inputs><input name="a" from="x y"/></inputs>')) != []


def test_file_paths_holds_paths_or_one_command_or_one_description():
    assert _validate(_task('<file_paths><path>a</path><path>b</path></file_paths>')) == []
    assert _validate(_task('<file_paths source="command"><command>ls</command></file_paths>')) == []
    assert _validate(_task('<file_paths source="command"><command>a</command><command>b</command></file_paths>')) != []
    assert _validate(_task('<file_paths><path>a</path><command>ls</command></file_paths>')) != []


def test_cond_needs_a_case_and_each_case_one_branch():
    case = '<case test="output.ok"><task><description>d</description></task></case>'
    default = '<default><call template="t"/></default>'
    assert _validate(f"<cond>{case}{default}</cond>") == []
    assert _validate(f"<cond>{default}</cond>") != []
    assert _validate(f"<cond>{default}{case}</cond>") != []
    assert _validate('<cond><case test="x"/></cond>') != []
    assert _validate('<cond><case><call template="t"/></case></cond>') != []


def test_library_holds_templates_and_tasks():
    text = '<library><template name="a"><task/></template><task name="b"/><call template="c"/></library>'
    assert any("'call': This element is not expected" in e for e in _validate(text))


# --------------------------------------------------------------------------- the model


@pytest.fixture(scope="module")
def grammar() -> schema.GrammarModel:
    return schema.model()


def _names(children):
    return [c.name for c in children]


def test_document_level_allows_the_five_roots_and_tests(grammar):
    assert _names(grammar.allowed_children(())) == ["task", "template", "library", "call", "cond", "tests"]


def test_task_children(grammar):
    children = {c.name: c for c in grammar.allowed_children(("task",))}
    assert {"steps", "context_management", "description", "inner_task", "command"} <= set(children)
    assert children["steps"].min_occurs == 0 and children["steps"].max_occurs == 1
    assert children["context_management"].documentation


def test_context_management_has_exactly_four_children_at_any_depth(grammar):
    expected = ["inherit_context", "accumulate_data", "accumulation_format", "fresh_context"]
    assert _names(grammar.allowed_children(("task", "context_management"))) == expected
    deep = ("task", "steps", "task", "inner_task", "inputs", "input", "task", "context_management")
    assert _names(grammar.allowed_children(deep)) == expected


def test_recursive_paths_resolve(grammar):
    assert grammar.exists(("task", "steps", "task", "steps", "cond", "case", "call", "arg", "task", "steps"))
    assert _names(grammar.allowed_children(("task", "steps"))) == ["task", "call", "cond"]
    assert grammar.max_occurs(("task", "steps", "task")) is None
    assert grammar.max_occurs(("task", "description")) == 1


def test_unknown_steps_give_empty_answers(grammar):
    for path in [("foo",), ("task", "foo"), ("task", "description", "task"), ("template", "steps")]:
        assert not grammar.exists(path)
        assert grammar.allowed_children(path) == []
        assert grammar.attributes(path) == []
        assert grammar.enum_values(path) == []
        assert grammar.documentation(path) is None
        assert grammar.max_occurs(path) == 0
    assert grammar.documentation(("task",), "nope") is None
    assert grammar.documentation(("task",), "type", "nope") is None


def test_output_format_attributes(grammar):
    attrs = {a.name: a for a in grammar.attributes(("task", "output_format"))}
    assert list(attrs) == ["type", "schema"]
    assert attrs["type"].required and attrs["type"].enum == ["json", "text", "xml"]
    assert not attrs["schema"].required
    assert attrs["schema"].enum == ["object", "array", "string[]", "number", "boolean"]
    assert grammar.is_empty(("task", "output_format"))


def test_task_attributes(grammar):
    attrs = {a.name: a for a in grammar.attributes(("task",))}
    assert set(attrs) == {"name", "type", "ref", "subtype"}
    assert attrs["type"].default == "atomic"
    assert attrs["type"].enum == ["atomic", "sequential", "reduce", "script"] and not attrs["type"].open_enum
    assert attrs["subtype"].open_enum and "subtask" in attrs["subtype"].enum
    assert attrs["name"].pattern == r"[A-Za-z_][A-Za-z0-9_.\-]*"
    nested = {a.name for a in grammar.attributes(("task", "inner_task"))}
    assert nested == {"type", "ref", "subtype"}


def test_command_attributes_and_defaults(grammar):
    attrs = {a.name: a for a in grammar.attributes(("task", "command"))}
    assert attrs["timeout"].default == "60" and attrs["timeout"].type_name == "positiveInt"
    assert attrs["fail_on_error"].default == "true" and attrs["fail_on_error"].enum == ["true", "false"]
    assert grammar.has_simple_content(("task", "command"))
    # file_paths/command is a different, attribute-less declaration
    assert grammar.attributes(("task", "file_paths", "command")) == []


def test_element_text_enumerations(grammar):
    path = ("task", "context_management", "inherit_context")
    assert [v for v, _ in grammar.enum_values(path)] == ["full", "none", "subset"]
    assert [v for v, _ in grammar.enum_values(("task", "context_management", "accumulate_data"))] == ["true", "false"]
    assert grammar.has_simple_content(path) and not grammar.is_mixed(path)
    assert "TD301" in grammar.documentation(("task", "context_management", "fresh_context"), value="enabled")


def test_content_kinds(grammar):
    assert grammar.is_mixed(("task", "inputs", "input"))
    assert grammar.is_mixed(("call", "arg"))
    assert not grammar.is_mixed(("task",))
    assert not grammar.has_simple_content(("task",))
    assert grammar.has_simple_content(("task", "description"))
    assert grammar.allowed_children(("task", "description")) == []


def test_references_carry_documentation_for_their_place(grammar):
    step = grammar.documentation(("task", "steps", "task"))
    root = grammar.documentation(("task",))
    assert step and root and step != root


def test_whole_model_is_documented(grammar):
    paths = list(grammar.iter_paths())
    assert len(paths) > 30
    missing = []
    for path in paths:
        if not grammar.documentation(path):
            missing.append("/".join(path))
        for child in grammar.allowed_children(path):
            if not child.documentation:
                missing.append("/".join(path + (child.name,)))
        for attr in grammar.attributes(path):
            if not attr.documentation:
                missing.append("/".join(path) + "@" + attr.name)
            for value, doc in grammar.enum_values(path, attr.name):
                if not doc:
                    missing.append("/".join(path) + "@" + attr.name + "=" + value)
        for value, doc in grammar.enum_values(path):
            if not doc:
                missing.append("/".join(path) + "=" + value)
    assert missing == []


def test_model_is_cached():
    assert schema.model() is schema.model()
    assert schema.lxml_schema() is schema.lxml_schema()
    assert schema.model_build_seconds is not None
