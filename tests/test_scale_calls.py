"""Retries, fallbacks and the answer cache (SPEC §18) through the real command line (a subprocess)
against a loopback OpenAI-compatible server (tests/loopback_openai.py); litellm is not mocked."""

import json
import os
import stat

from evaluator_helpers import taskdsl_async
from loopback_openai import loopback  # noqa: F401 (the fixture)
from taskdsl.project.config import load_config

MODEL = "openai/local-model"
SAY = """<task name="say">
  <instructions>Say {{text}}</instructions>
  <inputs><input name="text"/></inputs>
</task>
"""


def project(folder, toml=""):
    (folder / "taskdsl.toml").write_text(toml, encoding="utf-8")
    (folder / "say.task.xml").write_text(SAY, encoding="utf-8")
    return folder


async def say(folder, *extra):
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--input", "text=hello", "--model", MODEL,
                                         "--json", *extra)
    return code, json.loads(out) if out.strip().startswith("{") else out, err


# --------------------------------------------------------------------------- retries


async def test_429_twice_then_200_completes_after_the_wait_retry_after_asks(tmp_path, loopback):
    fake = await loopback(failures={"local-model": [(429, {"Retry-After": "1"})] * 2})
    code, report, err = await say(project(tmp_path))
    assert code == 0, err
    assert report["content"] == "local-model says: Say hello"
    assert fake.count("local-model") == 3
    first, second, third = fake.times("local-model")
    assert second - first >= 0.95 and third - second >= 0.95  # Retry-After: 1 was honoured
    retries = report["notes"]["retries"]
    assert [(r["attempt"], r["status"], r["wait_s"]) for r in retries] == [(1, 429, 1.0), (2, 429, 1.0)]
    assert report["notes"]["dataUsage"]["model_calls"] == 1


async def test_each_retry_is_in_the_trace(tmp_path, loopback):
    await loopback(failures={"local-model": [(503, {"Retry-After": "0"})]})
    code, report, err = await say(project(tmp_path), "--trace", "trace.jsonl")
    assert code == 0, err
    calls = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()
             if json.loads(line)["event"] == "model_call"]
    assert [(r["status"], r["wait_s"]) for r in calls[0]["retries"]] == [(503, 0.0)]


async def test_other_4xx_are_not_retried_and_retries_0_turns_it_off(tmp_path, loopback):
    fake = await loopback(always={"local-model": 400})
    code, report, err = await say(project(tmp_path))
    assert code == 1 and fake.count() == 1  # a 400 is final
    assert report["error"]["type"] == "TASK_FAILURE"

    fake = await loopback(always={"local-model": 503})
    code, report, err = await say(project(tmp_path), "--retries", "0")
    assert code == 1 and fake.count() == 1


async def test_retries_come_from_the_run_table_and_back_off_without_retry_after(tmp_path, loopback):
    fake = await loopback(always={"local-model": 500})
    code, report, err = await say(project(tmp_path, "[run]\nretries = 1\n"))
    assert code == 1 and fake.count() == 2
    assert report["error"]["details"]["retries"][0]["status"] == 500
    assert 0 <= report["error"]["details"]["retries"][0]["wait_s"] <= 0.5  # full jitter under the first step


# --------------------------------------------------------------------------- fallbacks

FALLBACK = f'[models."{MODEL}"]\nfallbacks = ["openai/backup"]\n'


async def test_a_model_answering_5xx_falls_back_and_the_plan_said_so(tmp_path, loopback):
    fake = await loopback(always={"local-model": 503}, failures={"local-model": []})
    folder = project(tmp_path, FALLBACK)
    code, plan, err = await taskdsl_async(folder, "run", "say.task.xml", "--input", "text=hello", "--model", MODEL,
                                          "--plan")
    assert code == 0, err
    assert f"call {MODEL} (price unknown), openai/backup (price unknown)" in plan
    assert f"if {MODEL} still fails after its retries: openai/backup (about $0.0000 more if used)" in plan

    # the 503s ask for no wait: the test does not sleep through backoff
    fake.failures["local-model"] = [(503, {"Retry-After": "0"})] * 4
    code, report, err = await say(folder)
    assert code == 0, err
    assert report["content"] == "backup says: Say hello"
    assert (report["notes"]["model"], report["notes"]["fallback_from"]) == ("openai/backup", MODEL)
    assert fake.count("local-model") == 4 and fake.count("backup") == 1  # 1 + 3 retries, then the fallback


async def test_when_every_model_fails_the_error_names_them_all(tmp_path, loopback):
    fake = await loopback(always={"local-model": 400, "backup": 400})
    code, report, err = await say(project(tmp_path, FALLBACK))
    assert code == 1
    assert report["error"]["message"].startswith(f"model '{MODEL}' and its fallbacks failed: {MODEL} (")
    assert report["error"]["details"]["tried"] == [MODEL, "openai/backup"]
    assert fake.count() == 2


def test_models_tables_are_checked_at_the_key(tmp_path):
    (tmp_path / "taskdsl.toml").write_text(
        '[models."gpt-4o"]\nfallbacks = ["gpt-4o-mnii", "taskdsl/echoo", "gpt-4o-mini"]\nmax_concurency = 2\n'
        'rpm = 0\ntpm = 1000\n', encoding="utf-8")
    config = load_config(tmp_path)
    found = [(d.code, d.severity.value, config.text[d.span.start:d.span.end], d.message) for d in config.problems]
    assert found[0] == ("TD601", "warning", '"gpt-4o-mnii"',
                        "fallback model 'gpt-4o-mnii' is unknown to litellm's model map: did you mean 'gpt-4o-mini'?")
    assert found[1][:3] == ("TD601", "error", '"taskdsl/echoo"')
    assert found[2][:3] == ("TD901", "error", "max_concurency")
    assert found[3][:3] == ("TD902", "error", "0")
    assert config.get("models") == (("gpt-4o", (("fallbacks", ("gpt-4o-mnii", "taskdsl/echoo", "gpt-4o-mini")),
                                                 ("tpm", 1000))),)


# --------------------------------------------------------------------------- the answer cache


async def test_a_second_cached_run_sends_nothing_and_prints_the_same(tmp_path, loopback):
    fake = await loopback()
    folder = project(tmp_path)
    first = await taskdsl_async(folder, "run", "say.task.xml", "--input", "text=hello", "--model", MODEL, "--cache")
    second = await taskdsl_async(folder, "run", "say.task.xml", "--input", "text=hello", "--model", MODEL, "--cache")
    assert first[0] == second[0] == 0
    assert first[1] == second[1] == "local-model says: Say hello\n"
    assert fake.count() == 1

    code, report, err = await say(folder, "--cache")
    assert report["notes"]["cached"] is True
    assert report["notes"]["dataUsage"]["cached"] == 1 and report["notes"]["dataUsage"]["model_calls"] == 0
    assert report["notes"]["dataUsage"]["cost"] == 0
    # the cached answer keeps the prompt tokens the model reported when it answered (the loopback's 10)
    assert report["notes"]["prompt_tokens"] == report["notes"]["dataUsage"]["prompt_tokens"] == 10

    await taskdsl_async(folder, "run", "say.task.xml", "--input", "text=hello", "--model", MODEL, "--no-cache")
    await taskdsl_async(folder, "run", "say.task.xml", "--input", "text=hello", "--model", MODEL)  # run: off by default
    assert fake.count() == 3

    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--input", "text=hello", "--model", MODEL,
                                         "--cache", "--plan")
    assert "answers already in the cache are reused: cached calls cost nothing" in out

    code, out, err = await taskdsl_async(folder, "cache", "info", "--json")
    info = json.loads(out)
    assert info["entries"] == 1 and info["folder"].startswith(str(tmp_path / "cache-home"))
    entry = [os.path.join(w, f) for w, _, fs in os.walk(info["folder"]) for f in fs][0]
    assert stat.S_IMODE(os.stat(entry).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(info["folder"]).st_mode) == 0o700
    code, out, err = await taskdsl_async(folder, "cache", "clear")
    assert (code, out) == (0, f"removed 1 cached answer of {folder}\n")
    await taskdsl_async(folder, "run", "say.task.xml", "--input", "text=hello", "--model", MODEL, "--cache")
    assert fake.count() == 4


async def test_the_run_table_turns_the_cache_on_and_offline_models_are_never_cached(tmp_path, loopback):
    fake = await loopback()
    folder = project(tmp_path, "[run]\ncache = true\n")
    for _ in range(2):
        assert (await say(folder))[0] == 0
    assert fake.count() == 1
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--input", "text=hi", "--model",
                                         "taskdsl/echo", "--cache")
    assert code == 0
    code, out, err = await taskdsl_async(folder, "cache", "info", "--json")
    assert json.loads(out)["entries"] == 1  # the echo run stored nothing


async def test_a_planted_entry_or_link_is_a_miss_never_followed(tmp_path, loopback):
    fake = await loopback()
    folder = project(tmp_path)
    await say(folder, "--cache")
    info = json.loads((await taskdsl_async(folder, "cache", "info", "--json"))[1])
    entry = [os.path.join(w, f) for w, _, fs in os.walk(info["folder"]) for f in fs][0]
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    os.remove(entry)
    os.symlink(victim, entry)  # another local process plants a link where the answer goes
    code, report, err = await say(folder, "--cache")
    assert code == 0 and "cached" not in report["notes"] and fake.count() == 2  # a miss: called again
    assert victim.read_text(encoding="utf-8") == "keep me"  # the writer never wrote through the link:
    assert not os.path.islink(entry)  # the entry was written beside it and renamed over the link
    os.remove(entry)
    with open(entry, "w", encoding="utf-8") as f:
        json.dump({"v": 1, "key": "not this one", "content": "forged"}, f)
    code, report, err = await say(folder, "--cache")
    assert report["content"] == "local-model says: Say hello" and fake.count() == 3


async def test_an_answer_that_shows_a_secret_is_not_kept_in_the_cache(tmp_path, loopback, monkeypatch):
    """A model that quotes its prompt quotes a secret a script printed into it: masked, the entry would not be the
    answer; in clear, the secret would sit on disk after the run. Such an answer is not cached."""
    fake = await loopback()
    folder = project(tmp_path)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "supersecretvalue123")
    for _ in range(2):
        code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--input", "text=supersecretvalue123",
                                             "--model", MODEL, "--cache")
        assert (code, out) == (0, "local-model says: Say ***\n")
    assert fake.count() == 2  # called again: nothing was kept
    info = json.loads((await taskdsl_async(folder, "cache", "info", "--json"))[1])
    assert info["entries"] == 0
    assert not any("supersecretvalue123" in open(os.path.join(w, f), encoding="utf-8").read()
                   for w, _, fs in os.walk(tmp_path) for f in fs if f.endswith(".json"))
    await say(folder, "--cache")  # an answer without a secret is kept as before
    assert json.loads((await taskdsl_async(folder, "cache", "info", "--json"))[1])["entries"] == 1


async def test_taskdsl_test_uses_the_cache_by_default(tmp_path, loopback):
    fake = await loopback()
    folder = project(tmp_path)
    (folder / "say.test.xml").write_text(f"""<tests>
  <test name="it says hello" task="say" model="{MODEL}">
    <input name="text">hello</input>
    <expect test='"Say hello" in output'/>
  </test>
</tests>
""", encoding="utf-8")
    for _ in range(2):
        code, out, err = await taskdsl_async(folder, "test")
        assert code == 0, out + err
    assert fake.count() == 1
    code, out, err = await taskdsl_async(folder, "test", "--no-cache")
    assert code == 0 and fake.count() == 2


async def test_an_entry_in_a_folder_others_may_write_or_of_another_user_or_a_fifo_is_a_miss(tmp_path, loopback):
    """TASKDSL_CACHE_DIR on a shared folder: another user's entry for the same key (the key is computable from the
    template) was served as the answer, and a FIFO at the entry blocked the run beyond --timeout and SIGTERM."""
    fake = await loopback()
    folder = project(tmp_path)
    await say(folder, "--cache")
    info = json.loads((await taskdsl_async(folder, "cache", "info", "--json"))[1])
    entry = [os.path.join(w, f) for w, _, fs in os.walk(info["folder"]) for f in fs][0]
    with open(entry, encoding="utf-8") as f:
        poisoned = json.load(f)
    poisoned["content"] = "POISONED"
    with open(entry, "w", encoding="utf-8") as f:
        json.dump(poisoned, f)
    os.chmod(os.path.dirname(entry), 0o777)  # a folder others may write: whatever it holds may be theirs
    code, report, _ = await say(folder, "--cache")
    assert (code, report["content"], fake.count()) == (0, "local-model says: Say hello", 2)
    os.chmod(os.path.dirname(entry), 0o700)
    with open(entry, "w", encoding="utf-8") as f:
        json.dump(poisoned, f)
    os.chmod(entry, 0o666)  # an entry others may write
    code, report, _ = await say(folder, "--cache")
    assert (report["content"], fake.count()) == ("local-model says: Say hello", 3)
    if os.geteuid() == 0:  # an entry of another user (only root can give a file away)
        with open(entry, "w", encoding="utf-8") as f:
            json.dump(poisoned, f)
        os.chmod(entry, 0o600)
        os.chown(entry, 65534, 65534)
        code, report, _ = await say(folder, "--cache")
        assert (report["content"], fake.count()) == ("local-model says: Say hello", 4)
        os.remove(entry)
        os.mkfifo(entry)
        code, report, _ = await say(folder, "--cache", "--timeout", "30")
        assert (code, report["content"]) == (0, "local-model says: Say hello")
