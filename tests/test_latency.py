"""What keeps a user from waiting: the server answers initialize before it imports the checker,
and the grammar model is built once even when a request asks for it during the background build."""

from evaluator_helpers import run_python


def test_the_server_module_leaves_the_checker_rules_and_features_for_after_initialize():
    code = (
        "import sys\n"
        "import taskdsl.lsp.server as server\n"
        "late = ('taskdsl.rules.checker', 'taskdsl.rules', 'taskdsl.language.schema_check', 'taskdsl.features.completion', "
        "'taskdsl.features.hover', 'xmlschema', 'litellm', 'taskdsl.evaluator.plan', 'taskdsl.evaluator.compiler', "
        "'taskdsl.authoring.testcases')\n"
        "print(sorted(m for m in late if m in sys.modules))\n"
        "server.import_features()\n"
        "print(sorted(m for m in late if m in sys.modules))\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.splitlines()
    assert before == "[]"
    assert after == ("['taskdsl.features.completion', 'taskdsl.features.hover', 'taskdsl.language.schema_check', "
                     "'taskdsl.rules', 'taskdsl.rules.checker']")


def test_the_grammar_model_is_built_once_when_two_threads_ask_together():
    code = (
        "import threading\n"
        "from taskdsl.language import schema\n"
        "models = []\n"
        "threads = [threading.Thread(target=lambda: models.append(schema.model())) for _ in range(4)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print(len(models), len({id(m) for m in models}), schema.model_ready())\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4", "1", "True"]

