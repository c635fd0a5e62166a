"""All rule families; importing this package registers every rule in the registry."""

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
