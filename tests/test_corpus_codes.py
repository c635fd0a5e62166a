"""What `taskdsl check` reports for each template of the upstream corpus, file by file: the error
codes exactly (a change in what the corpus gets fails here and is seen), and, for each error of
the codes SPEC §17 made errors or added (TD402/TD403 errors, TD801, TD803, TD804), the verdict:
a true finding (the template really cannot run as written, or is unsafe) or a false positive of
ours. One false positive was found and fixed in the checker: a template body with
inherit_context none does see its params (052). docs/checks.md summarises the table."""

import io
import json
from contextlib import redirect_stdout

import pytest

from paths import CORPUS, need_corpus_module
from taskdsl.cli.main import main

need_corpus_module()

#: the codes whose verdict is given (the errors §17 introduced)
JUDGED = {"TD402", "TD403", "TD801", "TD803", "TD804"}

#: (file number, the error codes `taskdsl check FILE` reports, verdict of its JUDGED errors)
TABLE = [
    ("001", ('TD301', 'TD402'), 'true: {{task_description}} is declared nowhere (upstream assumed an implicit environment); the run could only fail missing_variable'),
    ("002", ('TD301', 'TD402'), 'true: as 001'),
    ("003", ('TD203', 'TD403'), 'true: from="last_director_output" names nothing (the step before is last_output)'),
    ("004", (), None),
    ("005", (), None),
    ("006", ('TD501',), None),
    ("007", (), None),
    ("008", (), None),
    ("009", (), None),
    ("010", ('TD402', 'TD403'), 'true: dataset_name, raw_data, config_profile, default_config are declared nowhere'),
    ("011", (), None),
    ("012", ('TD105', 'TD202', 'TD204'), None),
    ("013", ('TD201', 'TD301'), None),
    ("014", ('TD201',), None),
    ("015", ('TD202', 'TD204', 'TD301'), None),
    ("016", (), None),
    ("017", ('TD201',), None),
    ("018", ('TD101', 'TD208', 'TD402'), 'true: {{task_description}} is declared nowhere'),
    ("019", (), None),
    ("020", (), None),
    ("021", (), None),
    ("022", (), None),
    ("023", (), None),
    ("024", (), None),
    ("025", ('TD208',), None),
    ("026", ('TD101', 'TD203'), None),
    ("027", ('TD101', 'TD501'), None),
    ("028", ('TD501',), None),
    ("029", ('TD210',), None),
    ("030", (), None),
    ("031", (), None),
    ("032", ('TD301',), None),
    ("033", ('TD209', 'TD501'), None),
    ("034", ('TD210',), None),
    ("035", ('TD209', 'TD501'), None),
    ("036", ('TD403',), 'true: from="csv_file_path" in a step; the root declares no such input, so no run can supply it'),
    ("037", ('TD403',), 'true: as 036'),
    ("038", ('TD101', 'TD208', 'TD803'), 'true: python3 -c "{{script_input}}" runs the value as code (an injection)'),
    ("039", ('TD301',), None),
    ("040", ('TD301',), None),
    ("041", (), None),
    ("042", (), None),
    ("043", (), None),
    ("044", (), None),
    ("045", (), None),
    ("046", ('TD101',), None),
    ("047", ('TD101', 'TD208'), None),
    ("048", ('TD101', 'TD208'), None),
    ("049", ('TD105',), None),
    ("050", (), None),
    ("051", (), None),
    ("052", (), None),
    ("053", (), None),
    ("054", ('TD501',), None),
    ("055", ('TD501',), None),
    ("056", ('TD101', 'TD103', 'TD105', 'TD402'), 'true: {{query}}, {{max_results}} are declared nowhere'),
    ("057", (), None),
    ("058", ('TD101',), None),
    ("059", ('TD101', 'TD105'), None),
    ("060", ('TD101', 'TD105', 'TD301', 'TD402'), 'true: as 001'),
    ("061", ('TD001',), None),
    ("062", ('TD001',), None),
    ("063", ('TD203',), None),
    ("064", (), None),
    ("065", ('TD101', 'TD204'), None),
    ("066", ('TD204', 'TD701'), None),
    ("067", ('TD403',), 'true: from="env:data_source" is no variable (the language has no environment lookup)'),
    ("068", ('TD102', 'TD106'), None),
    ("069", ('TD106', 'TD202', 'TD208', 'TD501'), None),
    ("070", ('TD100', 'TD201'), None),
    ("071", ('TD203', 'TD403'), 'true: from="previous_step" names nothing (the step before is last_output)'),
    ("072", ('TD001',), None),
    ("073", ('TD305', 'TD403'), 'true: as 036'),
    ("074", ('TD001',), None),
    ("075", (), None),
    ("076", ('TD305',), None),
    ("077", ('TD305',), None),
    ("078", ('TD307',), None),
    ("079", ('TD101',), None),
    ("080", ('TD101', 'TD203', 'TD402', 'TD403'), 'true: task_description, user_query, current_iteration, … are declared nowhere'),
    ("081", ('TD101',), None),
    ("082", ('TD001',), None),
    ("083", (), None),
    ("084", (), None),
    ("085", (), None),
    ("086", (), None),
    ("087", ('TD101', 'TD201', 'TD208'), None),
    ("088", ('TD101', 'TD208'), None),
    ("089", ('TD101',), None),
    ("090", ('TD101',), None),
]


def error_codes(path) -> tuple[str, ...]:
    out = io.StringIO()
    with redirect_stdout(out):
        main(["check", str(path), "--format", "json"])
    return tuple(sorted({d["code"] for d in json.loads(out.getvalue()) if d["severity"] == "error"}))


def test_the_table_covers_the_corpus():
    assert sorted(path.name[:3] for path in CORPUS.glob("*.xml")) == [number for number, _, _ in TABLE]


@pytest.mark.parametrize("number,codes,verdict", TABLE, ids=[number for number, _, _ in TABLE])
def test_check_reports_exactly_these_codes(number, codes, verdict):
    (path,) = CORPUS.glob(f"{number}_*.xml")
    assert error_codes(path) == codes
    # every file with a judged error has a verdict, and only those
    assert (verdict is not None) == bool(JUDGED & set(codes))
    assert verdict is None or verdict.startswith("true:")  # no false positive is left standing


def test_the_summary_in_the_docs_counts_the_table():
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[1] / "docs" / "checks.md").read_text(encoding="utf-8")
    judged = [number for number, codes, _ in TABLE if JUDGED & set(codes)]
    clean = [number for number, codes, _ in TABLE if not codes]
    assert f"{len(judged)} of the {len(TABLE)} upstream templates get a TD402/TD403/TD8xx error" in docs
    assert f"{len(clean)} check without an error" in docs
