"""The authoring loop: `taskdsl test` (testcases.py, test_cli.py), prompt previews (preview.py) and
pictures of a template (graph.py). Each is a thin view over the run path (`evaluator.plan`) and
the semantic model; none has its own way of reading what a template means."""
