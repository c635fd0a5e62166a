"""The two-file workspace the rename tests edit (pure and through the server): a template with
two params, and a named sequential task using every form of use — from=, a ref's <input name>,
{{x}}, an inline call's argument, a bare <arg> word, <arg name=>, and an inner input that shadows
an outer one. OUTPUT is what `taskdsl run main.task.xml --model taskdsl/echo` prints."""

LIB = """<template name="summarize" params="text, style">
  <task>
    <description>Summarize {{text}} as {{style}}</description>
  </task>
</template>
"""
MAIN = """<task name="report" type="sequential">
  <inputs>
    <input name="doc">a.md</input>
    <input name="tone">dry</input>
  </inputs>
  <steps>
    <task ref="summarize">
      <inputs>
        <input name="text" from="doc"/>
        <input name="style">{{tone}}</input>
      </inputs>
    </task>
    <task>
      <description>{{last_output}}; inner {{doc}}; tone {{tone}}</description>
      <inputs>
        <input name="doc">inner.md</input>
      </inputs>
    </task>
    <call template="summarize"><arg name="style">tone</arg><arg name="text">{{last_output}} + {{summarize(doc, "x")}} + plain</arg></call>
  </steps>
</task>
"""
OUTPUT = "Summarize Summarize a.md as dry; inner inner.md; tone dry + Summarize a.md as x + plain as dry"


def nth(text: str, needle: str, n: int = 1, within: int = 0) -> int:
    """Offset of the n-th occurrence of needle, plus `within`."""
    at = -1
    for _ in range(n):
        at = text.index(needle, at + 1)
    return at + within
