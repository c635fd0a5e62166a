"""The upstream corpus: 90 real templates nobody tuned the checker to (INDEX.tsv says what each is).

Every file is checked without a crash; the well-formed files INDEX.tsv marks valid (V) get no
TD001; and the files whose fault is a schema error get the right code at the right line."""

import csv
import subprocess
import sys

import pytest
from lxml import etree

from paths import CORPUS, need_corpus_module
from taskdsl.rules.checker import check_text

INDEX = CORPUS / "INDEX.tsv"
need_corpus_module()  # skipped without the corpus; under CI a missing corpus fails


def index_rows() -> list[dict]:
    if not INDEX.is_file():
        return []
    with INDEX.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


ROWS = index_rows()
FILES = [CORPUS / row["file"] for row in ROWS]


def plain_lxml_well_formed(data: bytes) -> bool:
    """Well-formedness decided by lxml alone (no entities, no network), independent of the checker."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        etree.fromstring(data, parser)
        return True
    except etree.XMLSyntaxError:
        return False


def test_the_index_lists_every_template():
    assert len(ROWS) == 90
    assert {path.name for path in CORPUS.glob("*.xml")} == {row["file"] for row in ROWS}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_file_is_checked_without_a_crash(path):
    text = path.read_text(encoding="utf-8")
    result = check_text(text, path=str(path))
    for diagnostic in result.diagnostics:
        assert diagnostic.code.startswith("TD")
        assert 0 <= diagnostic.span.start <= diagnostic.span.end <= len(text)
        assert diagnostic.message and "\n" not in diagnostic.message


VALID_WELL_FORMED = [CORPUS / row["file"] for row in ROWS
                     if row["status"] == "V" and plain_lxml_well_formed((CORPUS / row["file"]).read_bytes())]


@pytest.mark.parametrize("path", VALID_WELL_FORMED, ids=lambda p: p.name)
def test_valid_well_formed_files_get_no_td001(path):
    result = check_text(path.read_text(encoding="utf-8"), path=str(path))
    assert [d.message for d in result.diagnostics if d.code == "TD001"] == []


def test_most_valid_files_are_well_formed():
    valid = [row for row in ROWS if row["status"] == "V"]
    assert len(VALID_WELL_FORMED) >= len(valid) - 2


def codes_at(name: str) -> list[tuple[str, int]]:
    text = (CORPUS / name).read_text(encoding="utf-8")
    result = check_text(text, path=str(CORPUS / name))
    return [(d.code, result.document.position(d.span.start)[0] + 1) for d in result.diagnostics]


def test_never_specified_elements_get_td101_on_their_own_lines():
    found = codes_at("087_hist_readme_function_type.xml")
    assert [entry for entry in found if entry[0] == "TD101"] == [("TD101", 4), ("TD101", 5), ("TD101", 9), ("TD101", 10)]


def test_a_function_root_is_not_a_dsl_root():
    assert ("TD100", 2) in codes_at("070_adw_language_primitives_function.xml")


def test_an_unknown_file_paths_source_is_an_invalid_value_and_its_child_not_allowed():
    found = codes_at("059_later_context_description_paths.xml")
    assert ("TD105", 5) in found and ("TD101", 6) in found
    assert "TD102" not in {code for code, _ in found}


def test_malformed_template_gets_td001_at_the_mismatched_end_tag():
    found = codes_at("074_adw_examples_embedded_malformed.xml")
    assert {code for code, _ in found} == {"TD001"}
    assert ("TD001", 3) in found


def test_the_whole_corpus_through_the_command_line():
    completed = subprocess.run([sys.executable, "-m", "taskdsl", "check", *map(str, FILES)],
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 1, completed.stderr
    assert "Traceback" not in completed.stderr
    assert completed.stderr.strip().splitlines()[-1].endswith("in 90 files")
