"""loop: the six-step loop: roles, reflection records, probes, decisions, stop rules, accounting."""
