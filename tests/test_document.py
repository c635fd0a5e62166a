"""The document model: exact spans, tolerant parsing, positions, and TD001 from the scanner + lxml."""

from taskdsl.language.document import Span, parse
from taskdsl.language.safexml import wellformedness

TEMPLATE = """<task type="sequential" name="t1">
  <description>Sum &amp; check {{x}}</description>
  <steps>
    <task><description>one</description></task>
    <task type="script"><command><![CDATA[echo "<ok>"]]></command></task>
  </steps>
  <!-- a comment -->
</task>
"""


def text_of(doc, span):
    return doc.text[span.start : span.end]


def test_spans_of_every_part():
    doc = parse(TEMPLATE)
    root = doc.root
    assert root.tag == "task" and root.closed and doc.problems == []
    assert text_of(doc, root.name_span) == "task"
    type_attr = root.attr("type")
    assert text_of(doc, type_attr.name_span) == "type"
    assert text_of(doc, type_attr.value_span) == "sequential"
    assert text_of(doc, root.start_tag) == '<task type="sequential" name="t1">'
    assert text_of(doc, root.end_tag) == "</task>"
    description = root.child("description")
    assert description.text == "Sum & check {{x}}"
    assert text_of(doc, description.content) == "Sum &amp; check {{x}}"
    assert [t.tag for t in root.child("steps").children] == ["task", "task"]
    command = root.child("steps").children[1].child("command")
    assert command.text == 'echo "<ok>"' and command.text_pieces[0].cdata
    assert text_of(doc, doc.comments[0]) == "<!-- a comment -->"
    assert command.path == ("task", "steps", "task", "command")


def test_positions_round_trip_with_crlf_and_astral_characters():
    text = "<task>\r\n  <description>\U0001F600 x</description>\r\n</task>"
    doc = parse(text)
    x = text.index(" x<") + 1
    line, column = doc.position(x)
    assert (line, column) == (1, 17)  # code points: the emoji counts as one
    assert doc.offset(line, column) == x
    assert doc.offset(0, 99) == text.index("\r\n")  # clamped to the end of the line, not past the break
    assert doc.line_text(1) == "  <description>\U0001F600 x</description>"


def test_locate_tells_what_is_under_the_cursor():
    doc = parse(TEMPLATE)
    at = lambda needle, delta=1: doc.locate(TEMPLATE.index(needle) + delta)
    assert at("task type").kind == "tag_name"
    assert at("type=").kind == "attr_name"
    location = at("sequential")
    assert (location.kind, location.attr.name) == ("attr_value", "type")
    assert at("Sum").kind == "content" and at("Sum").element.tag == "description"
    assert at("</description>", 3).kind == "end_tag"


def test_find_by_xpath_resolves_libxml2_error_paths():
    doc = parse(TEMPLATE)
    assert doc.find_by_xpath("/task/steps/task[2]/command").tag == "command"
    assert doc.find_by_xpath("/task/steps/task[3]") is None


def test_partial_input_still_gives_a_tree():
    doc = parse('<task type="atomic">\n  <context_management>\n    <inh')
    assert [e.tag for e in doc.iter()] == ["task", "context_management", "inh"]
    assert doc.element_at(len(doc.text)).tag == "inh"
    assert doc.root.child("context_management").path == ("task", "context_management")


def test_unclosed_element_points_at_the_fault_with_related_start_tag():
    text = "<task>\n  <description>Hello\n</task>\n"
    _, diagnostics = wellformedness(parse(text))
    [diagnostic] = diagnostics
    assert diagnostic.code == "TD001"
    assert diagnostic.message == "<description> is not closed before </task>: add </description>"
    assert text[diagnostic.span.start : diagnostic.span.end] == "</task>"
    [related] = diagnostic.related
    assert text[related.span.start : related.span.end] == "description"


def test_several_roots_are_one_clear_error():
    text = '<template name="a" params="x"><task><description>{{x}}</description></task></template>\n<call template="a"><arg>1</arg></call>'
    _, diagnostics = wellformedness(parse(text))
    assert [d.code for d in diagnostics] == ["TD001"]
    assert diagnostics[0].message.startswith("a template file holds exactly one root element; <call> is a second one")
    assert text[diagnostics[0].span.start : diagnostics[0].span.end] == "call"


def test_lxml_reports_what_the_scanner_does_not_know():
    text = '<task><description>a &nbsp; b</description></task>'
    root, diagnostics = wellformedness(parse(text))
    assert root is None
    assert diagnostics[0].message.startswith("entity '&nbsp;' is not defined")


def test_doctype_is_refused_and_never_expanded():
    text = '<!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<task><description>&x;</description></task>'
    root, diagnostics = wellformedness(parse(text))
    assert root is None
    assert diagnostics[0].message.startswith("DOCTYPE declarations are not allowed")
    assert "root:" not in parse(text).root.child("description").text


def test_well_formed_document_yields_the_lxml_tree():
    root, diagnostics = wellformedness(parse(TEMPLATE))
    assert diagnostics == [] and root.tag == "task"


def test_span_containment():
    assert 3 in Span(1, 3) and 0 not in Span(1, 3) and len(Span(1, 3)) == 2


def test_start_tag_fast_path_builds_the_same_tree_as_the_general_path(monkeypatch):
    """document.START_TAG_RE is only a shortcut: on mutated templates (broken tags, stray quotes,
    '<' in values, non-XML white space) both paths give the same elements, spans and problems."""
    import random
    from pathlib import Path

    from taskdsl.language import document

    examples = sorted(Path(__file__).resolve().parents[1].joinpath("examples").rglob("*.task.xml"))
    texts = [p.read_text(encoding="utf-8") for p in examples] or ['<task name="a"><description>x</description></task>']
    fragments = ["<", "</", "<task>", "</task>", '="', '"', "'", "&", "&amp;", "/>", ">", " ", "\t", "\xa0", "=",
                 "<a b='1'", "\n", "<x y=\"<\">", "<p:q r:s='t'/>", "<![CDATA[", "<!--"]

    def dump(doc):
        problems = [(p.kind, p.span, p.message) for p in doc.problems]
        elements = [(e.tag, e.name_span, e.start_tag, [(a.name, a.value, a.name_span, a.value_span, a.quoted) for a in e.attrs],
                     [c.start_tag for c in e.children], [(t.span, t.value) for t in e.text_pieces], e.end_tag, e.end,
                     e.self_closing, e.closed, e.start_tag_complete, e.level) for e in doc.iter()]
        return problems, elements

    rng = random.Random(9)
    for _ in range(600):
        text = rng.choice(texts)
        for _ in range(rng.randint(0, 4)):
            i = rng.randint(0, len(text))
            j = min(len(text), i + rng.randint(0, 20))
            text = text[:i] + rng.choice(fragments) + text[j if rng.random() < 0.5 else i:]
        monkeypatch.setattr(document, "FAST_PATH", True)
        fast = dump(document._Scanner(text).run())
        monkeypatch.setattr(document, "FAST_PATH", False)
        assert dump(document._Scanner(text).run()) == fast, text
