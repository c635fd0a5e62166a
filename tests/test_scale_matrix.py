"""`taskdsl test --model A --model B`, `--repeat N` and `<test repeat min_pass>` through the real
command line against the loopback OpenAI-compatible server (tests/loopback_openai.py)."""

import itertools
import json
import xml.etree.ElementTree as ET

from evaluator_helpers import taskdsl_async
from loopback_openai import loopback  # noqa: F401 (the fixture)
from test_scale_calls import project

TESTS = """<tests>
  <test name="says hello" task="say">
    <input name="text">hello</input>
    <expect test='"Say hello" in output'/>
  </test>
  <test name="mostly says hi" task="say" repeat="4" min_pass="0.5">
    <input name="text">hi</input>
    <expect test='"Say hi" in output'/>
  </test>
</tests>
"""


def flaky_answers():
    turns: dict[str, itertools.count] = {}

    def answer(model, prompt):
        if model == "flaky" and next(turns.setdefault(prompt, itertools.count())) % 2:
            return "nope"  # every other answer of the flaky model to the same prompt misses
        return prompt

    return answer


async def test_the_model_matrix_is_a_side_by_side_table_in_text_json_and_junit(tmp_path, loopback):
    fake = await loopback(answer=flaky_answers())
    folder = project(tmp_path)
    (folder / "say.test.xml").write_text(TESTS, encoding="utf-8")
    models = ["--model", "openai/steady", "--model", "openai/flaky"]
    code, out, err = await taskdsl_async(folder, "test", *models, "--repeat", "2", "--junit", "report.xml")
    assert code == 1, err  # "says hello" passes 1 of 2 flaky runs: under its min_pass of 1
    table = out[out.index("test "):].splitlines()
    assert table[0].split() == ["test", "openai/steady", "openai/flaky"]
    assert table[2].split() == ["say.test.xml::says", "hello", "✓", "2/2", "✗", "1/2"]
    assert table[3].split() == ["say.test.xml::mostly", "says", "hi", "✓", "8/8", "✓", "4/8"]
    assert table[5].split() == ["pass", "rate", "100%", "50%"]
    assert table[6].split()[0] == "tokens" and table[7].split()[0] == "cost"
    assert table[8].split()[:2] == ["median", "latency"]
    assert "FAIL say.test.xml::says hello [openai/flaky]\n     1/2 runs passed (min_pass 1); first failure: expect" in out
    assert fake.count("steady") == 10 and fake.count("flaky") == 10  # repeats are not answered from the cache

    suite = ET.parse(folder / "report.xml").getroot()
    names = {case.get("name"): case.find("failure") is not None for case in suite.iter("testcase")}
    assert names == {"says hello [openai/steady]": False, "mostly says hi [openai/steady]": False,
                     "says hello [openai/flaky]": True, "mostly says hi [openai/flaky]": False}

    code, out, err = await taskdsl_async(folder, "test", *models, "--format", "json")
    report = json.loads(out)
    assert [m["model"] for m in report["matrix"]["models"]] == ["openai/steady", "openai/flaky"]
    assert report["matrix"]["models"][0]["pass_rate"] == 1.0
    cell = report["matrix"]["tests"][1]["results"][1]
    assert (cell["model"], cell["runs"], cell["passes"], cell["passed"]) == ("openai/flaky", 4, 2, True)
    assert report["matrix"]["tests"][1]["min_pass"] == 0.5
