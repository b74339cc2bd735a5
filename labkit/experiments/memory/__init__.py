"""Memory experiments (SPEC §9): each measured, simulated parts labelled."""
