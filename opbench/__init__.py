"""opbench: the shared core (case grammar, inputs, mapping, framework backends) and the CLI."""

__version__ = "0.1.0"
