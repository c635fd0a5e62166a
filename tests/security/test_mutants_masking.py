"""Masking, exactly: what is a secret, what its masked text is, in which encodings (the mutants of
taskdsl.support.redaction that the other tests let live, see docs/security.md "Mutation testing")."""

import base64
import logging

import pytest

from taskdsl.support.redaction import MaskingFilter, Redactor, mask_logs, secret_values

SECRET = "Zq8-Secret.Value_42"


def test_which_environment_variables_are_secrets():
    environ = {"OPENAI_API_KEY": "sk-0123456789", "GITHUB_TOKEN": "abcd1234", "APP_SECRET": "s3cr3t-app",
               "DB_password": "pa55word-db", "AWS_CREDENTIALS": "aws-cred-99", "HOME": "/home/someone-long",
               "SHORT_TOKEN": "abc1234"}
    # names holding KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL (any case), values of 8 characters or more
    assert sorted(secret_values(environ)) == sorted(["sk-0123456789", "abcd1234", "s3cr3t-app", "pa55word-db",
                                                     "aws-cred-99"])


def test_the_secrets_of_the_process_environment_are_masked_by_default(monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", "hunter2-but-longer")
    assert "hunter2-but-longer" in secret_values()
    assert Redactor().text("connect with hunter2-but-longer") == "connect with ***"
    assert Redactor(extra=["k3y9z"]).text("key k3y9z and hunter2-but-longer") == "key *** and ***"


def test_a_configured_key_counts_from_four_characters_and_no_key_is_no_secret():
    assert secret_values({}, extra=[None, "k3y9", "k3y", 12345]) == ("k3y9",)


def test_with_no_secret_nothing_changes():
    assert Redactor([]).text("nothing secret here") == "nothing secret here"
    value = {"a": ["x"]}
    assert Redactor([]).mask(value) is value


def test_a_secret_holding_another_is_masked_whole():
    # the shorter secret first: the longer one must still vanish whole, not leave "-and-more" behind
    redactor = Redactor(["abcdefgh", "abcdefgh-and-more"])
    assert redactor.text("key abcdefgh-and-more end; abcdefgh") == "key *** end; ***"


def test_documents_are_masked_inside_dicts_lists_and_tuples():
    redactor = Redactor([SECRET])
    document = {"output": f"printed {SECRET}", "steps": [SECRET, ("x", f"<{SECRET}>")], "count": 3, "ok": None}
    assert redactor.mask(document) == {"output": "printed ***", "steps": ["***", ["x", "<***>"]], "count": 3,
                                       "ok": None}


def test_base64_is_masked_at_each_alignment_up_to_the_characters_shared_with_neighbours():
    """Every base64 character made only of the secret's bits is masked; the one or two characters
    that also hold a neighbouring byte's bits (and the padding) stay."""
    redactor = Redactor([SECRET])
    for before, encoded, masked in [
        (b"", "WnE4LVNlY3JldC5WYWx1ZV80Mgo=", "***go="),
        (b"u", "dVpxOC1TZWNyZXQuVmFsdWVfNDIK", "dV***IK"),
        (b"us", "dXNacTgtU2VjcmV0LlZhbHVlXzQyCg==", "dXN***Cg=="),
        (b"user:", "dXNlcjpacTgtU2VjcmV0LlZhbHVlXzQyCg==", "dXNlcjp***Cg=="),
    ]:
        assert base64.b64encode(before + SECRET.encode() + b"\n").decode() == encoded
        assert redactor.text(encoded) == masked


def test_a_five_character_key_is_masked_in_base64_a_four_character_key_only_plain_and_reversed():
    assert Redactor(["k3y9z"]).text("azN5OXo= z9y3k") == "***o= ***"
    # a 4-character key's base64 holds 5 characters of its own: too short to mask without masking words
    assert Redactor(["k3y9"]).text("k3y9 9y3k azN5OQ==") == "*** *** azN5OQ=="


def test_percent_encoding_is_masked_in_upper_and_lower_case():
    redactor = Redactor(["pa/ss:word+1"])
    assert redactor.text("a=pa%2Fss%3Aword%2B1&b=pa%2fss%3aword%2b1&c=pa%2Fss%3Aword%2B1") == "a=***&b=***&c=***"
    assert redactor.text("q=pa%2Fss%3Aword%2B1") == "q=***"
    assert redactor.text("q=pa/ss:word+1 pa%2Fss") == "q=*** pa%2Fss"
    spaced = Redactor(["pa/ss word"])  # a space: percent-encoded as %20, or as + in a form
    assert spaced.text("a=pa%2Fss%20word b=pa%2Fss+word c=pa%2fss%20word") == "a=*** b=*** c=***"


def test_a_secret_with_bytes_that_are_not_utf8_is_masked():
    # an environment variable's value holding invalid UTF-8 reaches Python with surrogate escapes
    secret = "abc\udcffdefgh1"
    assert secret_values({"API_KEY": secret}) == (secret,)
    redactor = Redactor([secret])
    assert redactor.text(f"x {secret} y") == "x *** y"
    # as a program prints it: the raw byte, base64-encoded or percent-encoded
    assert base64.b64encode(b"abc\xffdefgh1").decode() == "YWJj/2RlZmdoMQ=="
    assert redactor.text("YWJj/2RlZmdoMQ== abc%FFdefgh1 abc%ffdefgh1") == "***Q== *** ***"


def test_a_secret_holding_a_lone_surrogate_is_masked():
    # a value read from JSON ("\ud800") can hold half a character: masking must not fail on it
    secret = "abc\ud800defgh"
    assert Redactor([secret]).text(f"x {secret} y {secret[::-1]}") == "x *** y ***"


def test_the_trace_file_opener_is_private(tmp_path):
    from taskdsl.support.redaction import open_private

    with open_private(str(tmp_path / "t.jsonl")) as handle:
        handle.write("{}\n")
    assert (tmp_path / "t.jsonl").read_text(encoding="utf-8") == "{}\n"
    assert (tmp_path / "t.jsonl").stat().st_mode & 0o777 == 0o600


def test_log_records_and_their_tracebacks_are_masked_before_any_handler_writes_them(tmp_path):
    logger = logging.getLogger("taskdsl.test.masking")
    handler = logging.FileHandler(tmp_path / "server.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        mask_logs(Redactor([SECRET]))
        mask_logs(Redactor([SECRET]))  # twice: one filter per handler
        assert sum(isinstance(f, MaskingFilter) for f in handler.filters) == 1
        logger.warning("calling with key %s", SECRET)
        logger.warning("nothing secret: %s", "fine")
        try:
            raise ValueError(f"bad key {SECRET}")
        except ValueError:
            logger.exception("the call failed")
        logger.warning("not raised", exc_info=KeyError(f"key {SECRET}"))  # an exception without a traceback
    finally:
        root.removeHandler(handler)
        handler.close()
    text = (tmp_path / "server.log").read_text(encoding="utf-8")
    assert SECRET not in text
    lines = text.splitlines()
    assert lines[:3] == ["WARNING calling with key ***", "WARNING nothing secret: fine", "ERROR the call failed"]
    assert lines[-3:] == ["ValueError: bad key ***", "WARNING not raised", "KeyError: 'key ***'"]


def test_a_masking_filter_without_a_redactor_masks_the_environment_secrets(monkeypatch):
    monkeypatch.setenv("APP_SECRET", "s3cr3t-app-value")
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "value %s", ("s3cr3t-app-value",), None)
    assert MaskingFilter().filter(record) is True
    assert record.getMessage() == "value ***"


def test_a_run_whose_environment_holds_a_secret_that_is_not_utf8_runs_and_masks_it(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "s.task.xml").write_text(
        '<task type="script" name="s"><command>printf \'%s\' "$API_KEY" | base64</command></task>\n',
        encoding="utf-8")
    env = {**os.environb, b"API_KEY": b"abc\xffdefgh1"}
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "s.task.xml"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "Error" not in done.stderr, done.stderr
    assert "YWJj/2RlZmdoMQ" not in done.stdout and "***Q==" in done.stdout


# ---- the survivors of the run after the invisible separators and escaped forms were added

def test_a_secret_escaped_in_json_or_a_python_literal_is_masked_whole():
    """A secret holding a quote, a backslash, a tab and a letter outside ASCII, as a JSON string (both
    ways of writing non-ASCII) and a Python repr write it: each form masked whole, not one character
    short at either end."""
    import json

    secret = 'pa"ss\\wörd\tX1'
    forms = {"json": json.dumps(secret, ensure_ascii=False)[1:-1], "json ascii": json.dumps(secret)[1:-1],
             "repr": repr(secret)[1:-1]}
    assert len(set(forms.values())) == 3  # three different texts, each a form of its own
    for name, form in forms.items():
        assert Redactor([secret]).text(f"<{form}>") == "<***>", name


def test_a_secret_with_a_slash_and_a_space_is_masked_as_quote_plus_writes_it_keeping_the_slash():
    from urllib.parse import quote_plus

    secret = "open sesame/now42"
    assert quote_plus(secret, safe="/") == "open+sesame/now42"
    assert Redactor([secret]).text("?q=open+sesame/now42&x") == "?q=***&x"


def test_an_encoded_percent_in_the_secret_itself_is_not_read_in_either_case():
    """The secret as written is matched as written; only its encoded forms take `%XX` in either case."""
    assert Redactor(["pass%2Fword1"]).text("pass%2Fword1 pass%2fword1") == "*** pass%2fword1"


def test_a_number_or_a_numeric_key_that_shows_a_secret_becomes_the_mask_and_no_other_does():
    redactor = Redactor(["123456789"])
    assert redactor.mask({123456789: "v", 5: "w", 1.5: 123456789, True: False, "a": [123456789, 7]}) == \
        {"***": "v", 5: "w", 1.5: "***", True: False, "a": ["***", 7]}


def test_secrets_split_by_gaps_are_masked_each_and_the_text_between_is_kept():
    redactor = Redactor(["SECRETVALUE1"])
    assert redactor.text("S\nECRETVALUE1") == "***"  # the gap right after the first character
    assert redactor.text("a SECRET\nVALUE1 and SECRET\nVALUE1 b") == "a *** and *** b"


def test_with_inputs_masks_every_leaf_of_an_input_named_like_a_secret():
    base = Redactor(["already-secret"])
    inputs = {"api_token": {"user": "ada-lovelace", "pins": [12345678, "short", {"inner": "deep-secret-1"}],
                            "flag": True, "none": None}, "topic": "weather-today"}
    redactor = base.with_inputs(inputs)
    assert set(redactor.secrets) == {"already-secret", "ada-lovelace", "12345678", "deep-secret-1"}
    assert redactor.text("ada-lovelace 12345678 deep-secret-1 short weather-today already-secret") == \
        "*** *** *** short weather-today ***"
    assert base.with_inputs({"topic": "weather-today"}) is base  # nothing new: the same redactor
    assert base.with_inputs(None) is base


def test_json_and_repr_mask_before_encoding():
    secret = 'he said "hi"\\now'
    redactor = Redactor([secret])
    assert redactor.json({"k": secret, secret: 1}) == '{"k": "***", "***": 1}'
    assert redactor.json([secret], indent=1) == '[\n "***"\n]'
    assert redactor.repr({"k": secret}) == "{'k': '***'}"


# --- the survivors of the run on the module with the second pass for U+009B/U+009D (docs/security.md) ---

def test_an_8bit_csi_or_osc_introducer_that_a_utf8_terminal_shows_as_nothing_is_a_gap():
    """On a terminal reading UTF-8, U+009B and U+009D show as nothing and what follows as itself: read as the
    start of a sequence only, `\\x9b` + the next letter (or `\\x9d` up to a BEL) hid the secret's letters."""
    redactor = Redactor([SECRET])
    assert redactor.text(f"a {SECRET[:5]}\x9b{SECRET[5:]} b") == "a *** b"
    assert redactor.text(f"a {SECRET[:5]}\x9d{SECRET[5:]}\x07 b") == "a ***\x07 b"
    assert redactor.text(f"a {SECRET[:5]}\x9b31m{SECRET[5:]} b") == "a *** b"  # as a sequence: masked too
    assert redactor.text("plain \x9b text \x9d kept") == "plain \x9b text \x9d kept"


def test_a_struck_over_first_character_at_the_very_start_is_masked_without_reaching_before_it():
    redactor = Redactor([SECRET])
    assert redactor.text(f"\x08{SECRET[:5]}\n{SECRET[5:]} b") == "\x08*** b"
    assert redactor.text(f"x\x08{SECRET[:5]}\n{SECRET[5:]} b") == "*** b"  # `x` struck over by its first letter


def test_a_null_or_a_boolean_is_kept_as_json_writes_it_whatever_the_keys():
    redactor = Redactor(["None", "True", "False"])  # configured keys count from four characters
    assert redactor.mask({"a": None, "b": True, "c": [False]}) == {"a": None, "b": True, "c": [False]}
    assert redactor.json({"a": None, "b": True}) == '{"a": null, "b": true}'


def test_an_input_named_like_a_secret_masks_its_keys_and_any_value_as_written_and_only_string_names_count():
    import decimal

    base = Redactor(["already-secret"])
    redactor = base.with_inputs({"api_token": {"a-long-key-name": "v", "amount": decimal.Decimal("12345678.9")}})
    assert set(redactor.secrets) == {"already-secret", "a-long-key-name", "12345678.9"}
    assert base.with_inputs({1: "a-value-of-no-name", "topic": "weather-today"}) is base
