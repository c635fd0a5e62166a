"""The workspace library: cross-file resolution, incremental updates and the queries the server uses."""

from __future__ import annotations

import os

import pytest

from taskdsl.language.diagnostics import apply_edits
from taskdsl.library import Library, RenameError
from taskdsl.project.settings import Settings


def check_workspace(paths, settings=None):
    """What `taskdsl check` does with folders: index them, check their files against the index."""
    from taskdsl.rules.checker import check_index

    library = Library.from_paths(paths, settings, keep_documents=True)
    return library, check_index(library)

LIB = """<library>
  <template name="analyze_data" params="data, config">
    <task subtype="analysis"><description>Analyze {{data}}</description></task>
  </template>
  <task name="load_csv">
    <description>Load a CSV file</description>
    <inputs>
      <input name="path">data.csv</input>
      <input name="sep"/>
    </inputs>
  </task>
</library>
"""

MAIN = """<task type="sequential" name="main">
  <steps>
    <task ref="load_csv"><inputs><input name="sep">,</input></inputs></task>
    <call template="analyze_data"><arg>a</arg><arg>b</arg></call>
  </steps>
</task>
"""


def write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def codes(results, path) -> list[str]:
    return [d.code for d in results[str(path)].diagnostics]


def diagnostics(library: Library, path, code: str):
    from taskdsl.rules.checker import check_text

    text = open(path, encoding="utf-8").read()
    result = check_text(text, path=str(path), library=library)
    return [d for d in result.diagnostics if d.code == code], text


@pytest.fixture
def workspace(tmp_path):
    write(tmp_path, {"lib/tools.task.xml": LIB, "main.task.xml": MAIN})
    return tmp_path


# --------------------------------------------------------------------------- resolution


def test_definitions_are_registered_by_name_key_and_file_stem(tmp_path):
    write(tmp_path, {
        "lib/tools.task.xml": LIB,
        "flows/summarize.task.xml": "<task><description>Summarise</description></task>",
        "notes.txt": "<task name='ignored'/>",
    })
    library = Library.from_paths([tmp_path])
    assert library.names() == ["analyze_data", "load_csv", "summarize"]
    template = library.definition("analyze_data")
    assert (template.kind, template.type, template.subtype, template.key) == ("template", "atomic", "analysis", "atomic:analysis")
    assert template.param_names == ("data", "config")
    assert template.path == str(tmp_path / "lib/tools.task.xml")
    assert template.range == ((1, 18), (1, 30))
    assert library.definition("atomic:analysis") is template
    task = library.definition("load_csv")
    assert task.kind == "library-task"
    assert [(p.name, p.default, p.has_default) for p in task.params] == [("path", "data.csv", True), ("sep", None, False)]
    assert task.description == "Load a CSV file"
    stem = library.definition("summarize")
    assert (stem.kind, stem.name_span) == ("task", None)
    assert stem.effective.inherit_context == "full"


def test_workspace_resolves_refs_across_files(workspace):
    library, results = check_workspace([workspace])
    assert set(results) == {str(workspace / "main.task.xml"), str(workspace / "lib/tools.task.xml")}
    assert codes(results, workspace / "main.task.xml") == []


def test_library_paths_outside_the_workspace_resolve_but_are_not_checked(tmp_path):
    write(tmp_path, {"shared/tools.task.xml": LIB, "ws/main.task.xml": MAIN})
    settings = Settings(library_paths=(str(tmp_path / "shared"),))
    library, results = check_workspace([tmp_path / "ws"], settings)
    assert list(results) == [str(tmp_path / "ws/main.task.xml")]
    assert codes(results, tmp_path / "ws/main.task.xml") == []
    assert library.definition("load_csv").path == str(tmp_path / "shared/tools.task.xml")


def test_duplicate_names_point_at_the_other_file(workspace):
    write(workspace, {"other.task.xml": '<template name="load_csv" params="p">\n  <task><description>x</description></task>\n</template>\n'})
    library = Library.from_paths([workspace])
    found, text = diagnostics(library, workspace / "other.task.xml", "TD502")
    assert len(found) == 1
    assert text[found[0].span.start:found[0].span.end] == "load_csv"
    assert found[0].message == ("'load_csv' is defined more than once: also at lib/tools.task.xml:5; "
                                "names in the library must be unique")
    (related,) = found[0].related
    assert related.path == str(workspace / "lib/tools.task.xml")
    assert related.range == ((4, 14), (4, 22))
    found, _ = diagnostics(library, workspace / "lib/tools.task.xml", "TD502")
    assert [r.path for r in found[0].related] == [str(workspace / "other.task.xml")]


def test_did_you_mean_fix_replaces_the_name(workspace):
    write(workspace, {"typo.task.xml": '<task name="t" type="sequential"><steps><task ref="load_cvs"/></steps></task>'})
    library = Library.from_paths([workspace])
    (found,), text = diagnostics(library, workspace / "typo.task.xml", "TD501")
    assert found.message == "'load_cvs' is not a task or template in the library; did you mean 'load_csv'?"
    assert [f.title for f in found.fixes] == ["Change to 'load_csv'"]
    assert found.fixes[0].safe is False
    assert apply_edits(text, found.fixes[0].edits) == text.replace("load_cvs", "load_csv")


def test_arity_of_call_and_ref_against_params_in_another_file(workspace):
    write(workspace, {"bad.task.xml": """<task name="bad" type="sequential"><steps>
<call template="analyze_data"><arg>a</arg></call>
<task ref="load_csv"><inputs><input name="path">x</input></inputs></task>
</steps></task>"""})
    library = Library.from_paths([workspace])
    found, text = diagnostics(library, workspace / "bad.task.xml", "TD503")
    assert [(text[d.span.start:d.span.end], d.message) for d in found] == [
        ("analyze_data", "'analyze_data' takes 2 arguments (data, config); this call passes 1"),
        ("load_csv", "ref to 'load_csv' does not bind its parameter 'sep': add an <input name=…> for each "
                     "(they have no default)"),
    ]


UNGUARDED = ", with no <cond> on its path: the run cannot end; guard the recursive step with a <cond> or break the cycle"


def test_cycles_across_files_show_the_path(tmp_path):
    write(tmp_path, {
        "a.task.xml": '<template name="a" params="">\n  <task ref="b"/>\n</template>\n',
        "b.task.xml": '<template name="b" params="">\n  <task><description>{{c()}}</description></task>\n</template>\n',
        "c.task.xml": '<template name="c" params="">\n  <task ref="a"/>\n</template>\n',
    })
    library = Library.from_paths([tmp_path])
    found, text = diagnostics(library, tmp_path / "a.task.xml", "TD504")
    assert [(d.message, text[d.span.start:d.span.end], d.severity.value) for d in found] == [
        ("reference cycle: a → b → c → a" + UNGUARDED, "b", "error")]  # no <cond> on its path (§17)
    found, text = diagnostics(library, tmp_path / "b.task.xml", "TD504")
    assert [(d.message, text[d.span.start:d.span.end]) for d in found] == [("reference cycle: b → c → a → b" + UNGUARDED, "c")]


def test_a_cycle_with_a_cond_on_its_path_stays_a_warning(tmp_path):
    write(tmp_path, {
        "a.task.xml": '<template name="a" params="">\n  <task ref="b"/>\n</template>\n',
        "b.task.xml": ('<template name="b" params="">\n  <cond><case test="output.again"><task ref="a"/></case>'
                       '<default><task><description>done</description></task></default></cond>\n</template>\n'),
    })
    library = Library.from_paths([tmp_path])
    for name, target, path in (("a", "b", "a → b → a"), ("b", "a", "b → a → b")):
        found, text = diagnostics(library, tmp_path / f"{name}.task.xml", "TD504")
        assert [(d.message, text[d.span.start:d.span.end], d.severity.value) for d in found] == [
            (f"reference cycle: {path} (guarded by a <cond>)", target, "warning")]


# --------------------------------------------------------------------------- incremental


def test_edit_a_definition_rechecks_its_referrers(workspace):
    library = Library.from_paths([workspace])
    lib_path, main_path = str(workspace / "lib/tools.task.xml"), str(workspace / "main.task.xml")
    assert library.update_file(lib_path, LIB) == {lib_path}  # same text as disk: nothing to re-check
    renamed = LIB.replace('name="load_csv"', 'name="load_table"')
    assert library.update_file(lib_path, renamed) == {lib_path, main_path}
    assert library.definition("load_csv") is None and library.definition("load_table").path == lib_path
    found, _ = diagnostics(library, main_path, "TD501")
    assert [d.message for d in found] == ["'load_csv' is not a task or template in the library"]
    # a description-only edit changes no signature: only the file itself
    assert library.update_file(lib_path, renamed.replace("Load a CSV", "Load one CSV")) == {lib_path}
    # a param change does
    assert library.update_file(lib_path, renamed.replace("data, config", "data,config")) == {lib_path}
    assert main_path in library.update_file(lib_path, renamed.replace("data, config", "data"))


def test_create_delete_and_rename_files(tmp_path):
    write(tmp_path, {"main.task.xml": '<task name="main" type="sequential"><steps><task ref="helper"/></steps></task>'})
    library = Library.from_paths([tmp_path])
    main_path = str(tmp_path / "main.task.xml")
    assert [d.code for d in diagnostics(library, main_path, "TD501")[0]] == ["TD501"]

    helper = tmp_path / "helper.task.xml"  # created: a root task named after its file
    helper.write_text("<task><description>help</description></task>")
    assert library.matches(str(helper))
    assert library.update_file(helper) == {str(helper), main_path}
    assert library.definition("helper").path == str(helper)
    assert diagnostics(library, main_path, "TD501")[0] == []

    renamed = tmp_path / "assist.task.xml"  # renamed: the stem name moves with it
    os.rename(helper, renamed)
    assert library.rename_file(helper, renamed) == {str(renamed), main_path}
    assert library.definition("helper") is None and library.definition("assist").path == str(renamed)
    assert str(renamed) in library.workspace_files and str(helper) not in library.workspace_files

    os.rename(renamed, helper)  # and back, then deleted
    library.rename_file(renamed, helper)
    os.remove(helper)
    assert library.remove_file(helper) == {main_path}
    assert library.definition("helper") is None
    assert [d.code for d in diagnostics(library, main_path, "TD501")[0]] == ["TD501"]


def test_refresh_picks_up_disk_changes_by_mtime_and_size(workspace):
    library = Library.from_paths([workspace])
    assert library.refresh() == set()
    extra = workspace / "extra.task.xml"
    extra.write_text('<template name="extra" params="x"><task><description>{{x}}</description></task></template>')
    assert library.refresh() == {str(extra)}
    os.remove(workspace / "lib/tools.task.xml")
    assert library.refresh() == {str(workspace / "main.task.xml")}
    assert library.names() == ["extra", "main"]


def test_a_file_that_stops_parsing_keeps_its_definitions_until_it_recovers(workspace):
    library = Library.from_paths([workspace])
    lib_path, main_path = str(workspace / "lib/tools.task.xml"), str(workspace / "main.task.xml")
    cut = LIB[: LIB.index("<task name")] + "<task na"  # mid-edit: the second definition is cut off
    library.update_file(lib_path, cut)
    assert library.definition("analyze_data").range == ((1, 18), (1, 30))
    assert library.definition("load_csv").path == lib_path  # retained from the last clean version
    assert diagnostics(library, main_path, "TD501")[0] == []
    with pytest.raises(RenameError, match="does not parse"):
        library.check_rename("load_csv", "load")
    # it scans cleanly again without the task: now it is gone, and main is re-checked
    clean = LIB[: LIB.index("  <task name")] + "</library>\n"
    assert main_path in library.update_file(lib_path, clean)
    assert library.definition("load_csv") is None
    assert library.definition("analyze_data") is not None


def test_unreadable_bytes_and_garbage_never_break_the_index(tmp_path):
    (tmp_path / "bytes.task.xml").write_bytes(b'<template name="odd" params="a">\xff\xfe<task><description>x</description></task></template>')
    (tmp_path / "garbage.task.xml").write_bytes(b"\x00<<<<>>>''\"<task ref=")
    (tmp_path / "empty.task.xml").write_bytes(b"")
    (tmp_path / "broken.task.xml").write_bytes(b"<<<<>>>''\"<task ref=")
    library, results = check_workspace([tmp_path])
    # a NUL byte makes a file binary: the one reader refuses it (`taskdsl check` says so, TD001)
    assert library.names() == ["broken", "odd"]  # the broken root <task> is still named after its file
    assert library.definition("odd").param_names == ("a",)
    assert sorted(os.path.basename(p) for p in results) == ["broken.task.xml", "bytes.task.xml", "empty.task.xml"]


# --------------------------------------------------------------------------- queries


def references(library: Library, path, needle: str, within: int = 1, **options) -> list[tuple[str, tuple]]:
    """(file name, (line, column)) of every reference to the name at needle in path."""
    from taskdsl.language.document import parse
    from taskdsl.meaning.uses import Workspace
    from taskdsl.project.workspace import read_text

    text = read_text(str(path))
    space = Workspace(parse(text), str(path), library=library, document_of=lambda p: parse(read_text(p)))
    found = space.references(text.index(needle) + within, **options)
    return [(os.path.basename(p), parse(read_text(p)).position(s.start)) for p, spans in found.items() for s in spans]


def test_references_across_files_with_and_without_definitions(workspace):
    write(workspace, {"more.task.xml": '<template name="more" params="">\n  <task><description>{{load_csv("x")}}</description></task>\n</template>\n'})
    library = Library.from_paths([workspace])
    main = workspace / "main.task.xml"
    assert references(library, main, 'ref="load_csv"', 6, include_declaration=False) == [
        ("main.task.xml", (2, 15)), ("more.task.xml", (1, 23))]
    assert references(library, main, 'ref="load_csv"', 6)[0] == ("main.task.xml", (2, 15))
    assert ("tools.task.xml", (4, 14)) in references(library, main, 'ref="load_csv"', 6)
    # a ref by type:subtype key names the key: its references are the refs by that key
    write(workspace, {"keyed.task.xml": '<task name="k" type="sequential"><steps><task ref="atomic:analysis"/></steps></task>'})
    library.update_file(workspace / "keyed.task.xml")
    assert references(library, workspace / "keyed.task.xml", "atomic:analysis") == [("keyed.task.xml", (0, 51))]
    assert [f for f, _ in references(library, main, "analyze_data")] == ["main.task.xml", "tools.task.xml"]
    assert library.dependents("analyze_data") == {str(workspace / "main.task.xml"), str(workspace / "keyed.task.xml")}


def test_names_matching_a_prefix(workspace):
    library = Library.from_paths([workspace])
    assert [d.name for d in library.names_matching("")] == ["analyze_data", "load_csv", "main"]
    assert [d.name for d in library.names_matching("LOA")] == ["load_csv"]
    assert library.names_matching("zzz") == []


def test_rename_across_files_then_check(workspace):
    from taskdsl.language.document import parse
    from taskdsl.meaning.uses import Workspace
    from taskdsl.project.workspace import read_text

    write(workspace, {"more.task.xml": '<template name="more" params="">\n  <task><description>{{analyze_data(1, 2)}}</description></task>\n</template>\n'})
    library = Library.from_paths([workspace])
    main = str(workspace / "main.task.xml")
    space = Workspace(parse(read_text(main)), main, library=library, document_of=lambda p: parse(read_text(p)))
    edits = space.rename(MAIN.index("analyze_data") + 1, "study")
    assert {os.path.basename(p): [parse(read_text(p)).position(s.start) for s in found] for p, found in edits.items()} == {
        "main.task.xml": [(3, 20)],
        "tools.task.xml": [(1, 18)],
        "more.task.xml": [(1, 23)],
    }
    from taskdsl.language.diagnostics import TextEdit
    for path, found in edits.items():
        text = open(path, encoding="utf-8").read()
        open(path, "w", encoding="utf-8").write(apply_edits(text, [TextEdit(s, "study") for s in found]))
    library, results = check_workspace([workspace])
    assert library.definition("study") is not None and library.definition("analyze_data") is None
    assert all(r.diagnostics == [] for r in results.values())


def test_rename_refuses_invalid_or_taken_names(workspace):
    library = Library.from_paths([workspace])
    with pytest.raises(RenameError, match="not a valid template name"):
        library.check_rename("analyze_data", "study.v2")
    with pytest.raises(RenameError, match="not a valid task name"):
        library.check_rename("load_csv", "2load")
    with pytest.raises(RenameError, match=r"'main' is already defined in .*main.task.xml:1"):
        library.check_rename("load_csv", "main")
    with pytest.raises(RenameError, match="not a task or template"):
        library.check_rename("nothing", "x")
    library.check_rename("load_csv", "load.v2")  # a task (not a template) may take dots


def test_an_edit_that_closes_or_breaks_a_cycle_rechecks_every_file_on_it(tmp_path):
    def template(name: str, *refs: str) -> str:
        steps = "".join(f'<task ref="{r}"/>' for r in refs) or "<task><description>x</description></task>"
        return f'<template name="{name}" params="">\n  <task type="sequential"><steps>{steps}</steps></task>\n</template>\n'

    write(tmp_path, {"a.task.xml": template("a", "b"), "b.task.xml": template("b", "c"),
                     "c.task.xml": template("c"), "d.task.xml": template("d", "a")})
    library = Library.from_paths([tmp_path])
    a, b, c, d = (str(tmp_path / f"{n}.task.xml") for n in "abcd")
    assert diagnostics(library, a, "TD504")[0] == []
    assert library.update_file(c, template("c", "a")) == {a, b, c}  # d refers to the cycle but is not on it
    assert [x.message for x in diagnostics(library, d, "TD504")[0]] == []
    assert library.update_file(c, template("c", "a")) == set()
    assert library.update_file(c, template("c")) == {a, b, c}
    # no cycle before or after; a refers to b, whose output (what a cond after it tests, TD703) changed
    # from unknown (a ref) to plain text
    assert library.update_file(b, template("b")) == {a, b}
    # deleting a file whose name closes a cycle re-checks the rest of it
    library.update_file(b, template("b", "c"))
    library.update_file(c, template("c", "a"))
    assert library.remove_file(b) == {a, c}


def test_incremental_cycles_match_a_fresh_index_after_random_edits(tmp_path):
    import random

    rng = random.Random(4)
    names = [f"t{i}" for i in range(8)]
    library = Library()
    library.graph().on_cycle("t0", "t1")  # start tracking components incrementally
    texts: dict[str, str] = {}
    for _ in range(60):
        name = rng.choice(names)
        refs = rng.sample(names + ["atomic:k0", "missing"], rng.randint(0, 3))
        subtype = f' subtype="k{rng.randint(0, 1)}"' if rng.random() < 0.3 else ""
        steps = "".join(f'<task ref="{r}"/>' for r in refs) or "<task><description>x</description></task>"
        text = f'<template name="{name}" params=""><task type="sequential"{subtype}><steps>{steps}</steps></task></template>'
        path = str(tmp_path / f"{name}.task.xml")
        if rng.random() < 0.15 and path in texts:
            library.remove_file(path)
            del texts[path]
        else:
            library.update_file(path, text)
            texts[path] = text
        fresh = Library()
        for other, other_text in texts.items():
            fresh.update_file(other, other_text)
        fresh.graph().on_cycle("t0", "t1")
        assert set(library.graph().members.values()) == set(fresh.graph().members.values())
        assert {k: v for k, v in library.graph().out.items() if v} == {k: v for k, v in fresh.graph().out.items() if v}


def test_named_arguments_are_references_of_the_param_across_files(tmp_path):
    write(tmp_path, {
        "lib.task.xml": '<library>\n  <template name="greet" params="who, tone"><task><description>{{who}} {{tone}}</description></task></template>\n'
                        '  <task name="shout" type="script" subtype="loud"><command>echo $TASKDSL_INPUT_WORD</command>'
                        '<inputs><input name="word">hi</input></inputs></task>\n</library>\n',
        "a.task.xml": '<call template="greet"><arg name="tone">warm</arg><arg name="who">Ada</arg></call>\n',
        "b.task.xml": '<task type="sequential"><description>x</description><steps>\n'
                      '  <call template="greet"><arg>Bob</arg><arg>dry</arg></call>\n'
                      '  <task ref="script:loud"><inputs><input name="word">yo</input></inputs></task>\n'
                      '</steps></task>\n',
    })
    library = Library.from_paths([str(tmp_path)], Settings())
    lib = tmp_path / "lib.task.xml"
    # the positional args in b need nothing; the named one in a follows
    assert references(library, lib, 'tone">') == [("lib.task.xml", (1, 38)), ("lib.task.xml", (1, 73)), ("a.task.xml", (0, 34))]
    # the ref by type:subtype key binds the named task's input (its param) too
    assert references(library, lib, '"word"') == [("lib.task.xml", (2, 114)), ("b.task.xml", (2, 47))]


def test_a_file_with_a_utf8_bom_is_indexed(tmp_path):
    (tmp_path / "helper.task.xml").write_bytes(b'\xef\xbb\xbf<task name="helper"><description>x</description></task>')
    write(tmp_path, {"main.task.xml": '<task type="sequential"><steps><task ref="helper"/></steps></task>'})
    library, results = check_workspace([tmp_path])
    assert library.names() == ["helper", "main"]
    assert codes(results, tmp_path / "main.task.xml") == []
    assert codes(results, tmp_path / "helper.task.xml") == []
