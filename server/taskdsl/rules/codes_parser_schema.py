"""Docs of the codes the parser (TD001) and the schema stage (TD100–TD107) emit.

These codes have no check function here: safexml.py and schema_check.py produce them. They are
registered so that `taskdsl rules` and SARIF output document every code.
"""

from taskdsl.language.diagnostics import Severity
from taskdsl.rules.registry import document_code

document_code(
    "TD001", Severity.ERROR, "not well-formed XML",
    what="The file is not well-formed XML: an unclosed or mismatched tag, a stray '<' or '&', "
         "an unfinished comment, several root elements, a DOCTYPE, bytes that are not UTF-8, "
         "or nesting deeper than 200 elements.",
    why="Nothing else can be checked or run until the file parses; the range points at the fault "
        "and the related information at the start tag that was never closed.",
    bad='<task>\n  <description>Summarize the file\n</task>',
    good='<task>\n  <description>Summarize the file</description>\n</task>',
    fix="Close the element named in the message, escape a literal '<' as '&lt;' and '&' as '&amp;' "
        "(in a shell command `2>&1` is `2&gt;&amp;1` and `a && b` is `a &amp;&amp; b`, or put the whole "
        "command in `<![CDATA[ … ]]>`), quote an attribute value that holds '\"' with '…' (or write the "
        "quote `&quot;`), or split several roots into their own files (or wrap them in <library>).",
)

document_code(
    "TD100", Severity.ERROR, "root element is not a DSL root",
    what="The root element is not one of <task>, <template>, <library>, <call>, <cond> "
         "(or it is in an XML namespace: taskdsl elements have none).",
    why="The root decides what the file defines; any other root means the file is not a template "
        "or its root is misspelt.",
    bad='<tsk>\n  <description>Summarize the file</description>\n</tsk>',
    good='<task>\n  <description>Summarize the file</description>\n</task>',
    fix="Rename the root to one of the five roots (the message suggests the nearest), or remove the xmlns declaration.",
)

document_code(
    "TD101", Severity.ERROR, "element not allowed here",
    what="A child element the grammar does not allow in its parent, or one in the wrong place "
         "(after the parent's content is complete, or before an element that must come first).",
    why="The element would be ignored or misread; it is most often a typo or an element put in the wrong parent.",
    bad='<task>\n  <descripton>Summarize the file</descripton>\n</task>',
    good='<task>\n  <description>Summarize the file</description>\n</task>',
    fix="Rename it to an element allowed there (the message lists them, with the nearest match), or move it. "
        "Quick fix: rename the start and end tag to the nearest allowed element (a safe fix when it is the only "
        "close match and a typo of one or two keys; otherwise, e.g. `<fresh>` → `<fresh_context>`, an unsafe fix). "
        "A `<timeout>` in a script task is the attribute `<command timeout=\"5\">`: a safe fix moves it there.",
)

document_code(
    "TD102", Severity.ERROR, "required child missing",
    what="An element lacks a child it must have: <template> without its <task>, <inputs> without "
         "<input>, <cond> without <case>, <case> without a task or call, <file_paths> without content.",
    why="The element has nothing to do without it.",
    bad='<template name="greet" params="who">\n</template>',
    good='<template name="greet" params="who">\n  <task><description>Greet {{who}}</description></task>\n</template>',
    fix="Add the child the message names.",
)

document_code(
    "TD103", Severity.ERROR, "attribute not allowed",
    what="An attribute the element does not take (often a misspelt one).",
    why="An unknown attribute is ignored, so the setting it was meant to carry silently has no effect.",
    bad='<task typ="sequential">…</task>',
    good='<task type="sequential">…</task>',
    fix="Rename it to an allowed attribute (the message lists them, with the nearest match) or remove it. "
        "Quick fix: rename it to the nearest attribute the element takes and does not have yet (`timout` → "
        "`timeout`, `nme` → `name`; a safe fix when it is the only close match and a typo of one or two keys, "
        "otherwise unsafe; none when that attribute is already set).",
)

document_code(
    "TD104", Severity.ERROR, "required attribute missing",
    what="An element lacks an attribute it must have: <call template=>, <case test=>, <input name=>, "
         "<template name=>, <output_format type=>.",
    why="Without it the element cannot be resolved or evaluated.",
    bad='<call>\n  <arg>data.csv</arg>\n</call>',
    good='<call template="analyze_data">\n  <arg>data.csv</arg>\n</call>',
    fix="Add the attribute the message names.",
)

document_code(
    "TD105", Severity.ERROR, "invalid value",
    what="An attribute value or element text outside what the grammar allows: not one of an "
         "enumeration, a boolean other than true/false, a name that is not an identifier, a timeout "
         "that is not a whole number above zero.",
    why="The tools would not know what the value means; the range is the value itself.",
    bad='<task type="atomc">\n  <manual_xml>yes</manual_xml>\n</task>',
    good='<task type="atomic">\n  <manual_xml>true</manual_xml>\n</task>',
    fix="Use one of the values the message lists (it suggests the nearest), or a value of the described form. "
        "Quick fix: replace the value with the nearest allowed one (a safe fix when it is the only close match "
        "and a typo of one or two keys, e.g. `sequental` → `sequential`, `ture` → `true`; otherwise unsafe).",
)

document_code(
    "TD106", Severity.ERROR, "text not allowed here / element must be empty",
    what="Text directly inside an element that holds only elements (<task>, <steps>, "
         "<context_management>, …), or any content in an element that must be empty (<output_format>).",
    why="The text would be ignored; most often it belongs in <description> or <instructions>.",
    bad='<task>\n  Summarize the file\n</task>',
    good='<task>\n  <description>Summarize the file</description>\n</task>',
    fix="Move the text into the element meant for it, or remove it.",
)

document_code(
    "TD107", Severity.ERROR, "element repeated where it may appear once",
    what="A second <description>, <model>, <context_management>, … in one task, a second task in "
         "a <template> or <input>, a second <default> in a <cond>.",
    why="Only one would be used, and which one is not obvious to a reader.",
    bad='<task>\n  <description>One</description>\n  <description>Two</description>\n</task>',
    good='<task>\n  <description>One. Two</description>\n</task>',
    fix="Merge the two or remove one; the related information points at the first.",
)
