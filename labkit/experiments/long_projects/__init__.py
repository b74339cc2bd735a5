"""Worked example D (issue 24): long-running work carried by artifacts and evidence."""
