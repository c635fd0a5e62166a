"""taskdsl.language.models: litellm's bundled map read as JSON (never imported), prefixes, did-you-mean; TD601."""

import subprocess
import sys

from _rulehelp import apply_fix, check, found, where
from taskdsl.language import models
from taskdsl.language.diagnostics import Severity


def test_known_models_and_prefixes():
    assert models.is_known_model("gpt-4o-mini")
    assert models.is_known_model("openai/gpt-4o")  # provider/key with the key's own provider
    assert models.is_known_model("ollama/llama3.2:latest")  # any name behind an open provider
    assert models.is_known_model("openai/my-finetune")
    assert models.is_known_model("taskdsl/echo") and models.is_known_model("taskdsl/replay")
    assert not models.is_known_model("gpt-4o-mni")
    assert not models.is_known_model("anthropic/gpt-4o-mini")  # gpt-4o-mini is not an anthropic model
    assert not models.is_known_model("nonsense-model")
    assert not models.is_known_model("")
    assert "gpt-4o-mini" in models.known_models()


def test_suggest_and_context_window():
    assert models.suggest("gpt-4o-mni")[0] == "gpt-4o-mini"
    window = models.context_window("gpt-4o-mini")
    assert isinstance(window, int) and window >= 100_000
    assert models.context_window("openai/gpt-4o-mini") == window
    assert models.context_window("no-such-model") is None


def test_td601_unknown_model_with_did_you_mean():
    text = "<task>\n  <description>x</description>\n  <model> gpt-4o-mni </model>\n</task>\n"
    result, [d] = found(text, "TD601")
    assert (d.severity, where(result, d)) == (Severity.WARNING, (3, 11, "gpt-4o-mni"))
    assert d.message.startswith("model 'gpt-4o-mni' is unknown to litellm's model map: did you mean 'gpt-4o-mini'")
    assert not any(f.safe for f in d.fixes)  # changing the model is the user's call
    fixed = apply_fix(text, d)
    assert "<model> gpt-4o-mini </model>" in fixed and check(fixed).diagnostics == []
    assert found(text.replace("gpt-4o-mni", "ollama/llama3"), "TD601")[1] == []


def test_td601_never_imports_litellm():
    code = (
        "import sys\n"
        "from taskdsl.rules.checker import check_text\n"
        "r = check_text('<task><description>x</description><model>gpt-4o-mni</model></task>')\n"
        "assert [d.code for d in r.diagnostics] == ['TD601'], r.diagnostics\n"
        "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
