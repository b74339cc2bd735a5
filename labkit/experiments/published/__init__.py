"""Published model runs, re-graded by labkit.

Real runs that are public and usable offline, kept as compact tables under
`data/published/<source>/` (each with a SOURCE.md: repository, commit, original paths,
sha256, licence, citation) and rebuilt by one command from a local clone of the source:

- `reflexion`: the Reflexion authors' logged GPT-4 runs on HumanEval and MBPP (noahshinn/reflexion),
  every logged solution re-graded by labkit's own validator on an oracle-strength ladder;
- `llmbar`: LLMBar's pairwise judge verdicts in both orders (princeton-nlp/LLMBar).

Figures from here are labelled *published run, re-graded by labkit*: never merged with simulated ones.
`python -m labkit.experiments.published --help` lists the commands.
"""
