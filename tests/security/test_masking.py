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
