"""experiments: one module or folder per worked example, built on the loop."""
