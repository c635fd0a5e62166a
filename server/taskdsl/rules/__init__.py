"""Rank 5, rules: what is wrong and how to fix it — the registry and every rule family (importing
this package registers them all), the checker, suppression, the one fixer, rule pages, parallel
checking.
May import: support, language, project, meaning, library."""

from taskdsl.rules import (  # noqa: F401  (imported for their registrations)
    codes_parser_schema,
    structure,
    context_rules,
    variables,
    models,
    conditions,
    library_rules,
    security,
    config_codes,
)
from taskdsl.rules.registry import RULES, Rule, RuleContext, run_rules

__all__ = ["RULES", "Rule", "RuleContext", "run_rules"]
