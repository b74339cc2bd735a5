"""grading: what counts as evidence: protected acceptance, the sandbox, the validator, check sets, cases."""
