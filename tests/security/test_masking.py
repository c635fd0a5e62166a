"""Secrets are masked in their common encodings too: base64, URL encoding, reversed, split across
lines, with ANSI escapes between their characters; in stdout, --json and the trace."""

import base64
import json
import os
import subprocess
import sys
from urllib.parse import quote, quote_plus

from taskdsl.support.redaction import Redactor, secret_values

SECRET = "Zq8-Secret.Value_42"
VARIANTS = {
    "plain": SECRET,
    "base64": base64.b64encode(SECRET.encode()).decode(),
    "base64 inside data": base64.b64encode(b"user:" + SECRET.encode() + b"\n").decode(),
    "url": quote(SECRET + "/&", safe=""),
    "url plus": quote_plus(SECRET),
    "reversed": SECRET[::-1],
    "split": SECRET[:6] + "\n" + SECRET[6:],
    "ansi": SECRET[:4] + "\x1b[1;31m" + SECRET[4:] + "\x1b[0m",
}
SCRIPT = r"""printf 'plain %s\n' "$DB_PASSWORD"
printf 'b64 %s\n' "$(printf '%s' "$DB_PASSWORD" | base64 -w0)"
printf 'b64data %s\n' "$(printf 'user:%s\n' "$DB_PASSWORD" | base64 -w0)"
printf 'rev %s\n' "$(printf '%s' "$DB_PASSWORD" | rev)"
printf 'split %.6s\n%s\n' "$DB_PASSWORD" "${DB_PASSWORD#??????}"
printf 'ansi %.4s\033[1;31m%s\033[0m\n' "$DB_PASSWORD" "${DB_PASSWORD#????}"
"""


def leaks(text: str) -> list[str]:
    return [name for name, form in VARIANTS.items() if form in text or form.replace("\n", "\\n") in text
            or form.replace("\x1b", "\\u001b") in text]


def test_a_script_printing_a_secret_in_encodings_is_masked_everywhere(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "s.task.xml").write_text(
        '<task type="script" name="s"><command>' + SCRIPT.replace("&", "&amp;").replace("<", "&lt;")
        + "</command></task>\n", encoding="utf-8")
    env = {**os.environ, "DB_PASSWORD": SECRET}
    for args in (["run", "s.task.xml", "--trace", "t.jsonl"], ["run", "s.task.xml", "--json"]):
        done = subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert leaks(done.stdout + done.stderr) == []
        assert done.stdout.count("***") >= 6
    trace = (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    assert leaks(trace) == [] and "***" in trace
    json.loads(done.stdout)


def test_every_variant_is_masked():
    redactor = Redactor([SECRET])
    for name, form in VARIANTS.items():
        assert form not in redactor.text(f"before {form} after"), name


def test_a_short_configured_key_is_masked_but_a_short_environment_value_is_not():
    assert "k3y9z" in secret_values({}, extra=["k3y9z"])
    assert secret_values({"GITHUB_TOKEN": "abc1234"}) == ()


SPACED = "Zq8 Secret/Value+42&x"  # a space, a slash and a plus: every URL encoder writes it differently
EMIT = r'''import base64, os, re, textwrap
from urllib.parse import quote, quote_plus
s = os.environ["DB_PASSWORD"]
data = base64.b64encode(("-" * 50 + s + "-" * 30).encode()).decode()
lower = lambda text: re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), text)
print("mime", "\r\n".join(textwrap.wrap(data, 76)))
print("pem", "\n".join(textwrap.wrap(data, 64)))
print("osc", "\x1b]0;title\x07".join(s[i:i + 3] for i in range(0, len(s), 3)))
print("osc-st", "\x1b]8;;http://x\x1b\\".join(s[i:i + 4] for i in range(0, len(s), 4)))
print("charset", "\x1b(B".join(s))
print("cr", s[:5] + "\r" + s[5:])
print("quote", quote(s, safe=""), quote(s), lower(quote(s, safe="")), lower(quote(s)))
print("quote_plus", quote_plus(s), lower(quote_plus(s)), lower(quote_plus(s, safe="/")))
'''


def spaced_leaks(text: str) -> list[str]:
    "The forms of SPACED still readable in text once line breaks, CRs and the escapes EMIT used are removed."
    import re

    bare = re.sub(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\(B|\r|\n", "", text)
    data = base64.b64encode(("-" * 50 + SPACED + "-" * 30).encode()).decode()
    core = data[68:-40]  # characters made of the secret's bits only
    forms = {"plain": SPACED, "base64": core}
    for name, form in (("quote", quote(SPACED, safe="")), ("quote /", quote(SPACED)), ("plus", quote_plus(SPACED))):
        forms[name] = form
        forms[name + " lower"] = re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), form)
    return [name for name, form in forms.items() if form in bare]


def test_wrapped_base64_other_escapes_bare_cr_and_url_forms_are_masked_in_output_json_and_trace(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "emit.py").write_text(EMIT, encoding="utf-8")
    (tmp_path / "s.task.xml").write_text('<task type="script" name="s"><command>python3 emit.py</command></task>\n',
                                         encoding="utf-8")
    env = {**os.environ, "DB_PASSWORD": SPACED}
    raw = subprocess.run([sys.executable, "emit.py"], cwd=tmp_path, env=env, capture_output=True, text=True).stdout
    assert set(spaced_leaks(raw)) == {"plain", "base64", "quote", "quote /", "plus", "quote lower", "quote / lower",
                                      "plus lower"}  # what the script prints does show the secret
    for args in (["run", "s.task.xml", "--trace", "t.jsonl"], ["run", "s.task.xml", "--json"]):
        done = subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        shown = json.loads(done.stdout)["content"] if "--json" in args else done.stdout
        assert spaced_leaks(shown) == [] and spaced_leaks(done.stderr) == []
        assert shown.count("***") >= 12, shown
    trace = "".join(json.dumps(json.loads(line), ensure_ascii=False) for line in
                    (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines())
    assert spaced_leaks(json.loads(json.dumps(trace))) == [] and "***" in trace


def test_a_global_named_like_a_secret_is_masked_as_an_input_of_that_name_is(tmp_path):
    """`--global service_password=…` (and a [globals] value of that name) reached --json and the trace's command
    line in clear, where an input of the same name is masked."""
    (tmp_path / "taskdsl.toml").write_text('globals = { service_password = "placeholder" }\n')
    (tmp_path / "g.task.xml").write_text('<task type="script" name="t"><description>d</description>'
                                         '<command>echo {{service_password}}</command></task>\n')
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "g.task.xml", "--global",
                           "service_password=hunter2hunter2", "--yes", "--json", "--trace", "trace.jsonl"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"] == "***"
    assert "hunter2" not in done.stdout + done.stderr + (tmp_path / "trace.jsonl").read_text()
