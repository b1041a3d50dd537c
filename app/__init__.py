"""callscope's application layer: the CLI entry (Qt-free) and the Qt GUI (imported only by `callscope gui`)."""
