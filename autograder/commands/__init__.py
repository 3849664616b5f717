"""One module per CLI subcommand, each with a keyword-only ``main(...)``."""
