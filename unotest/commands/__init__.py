"""One module per command, named after it: ``unotest.commands.<name>.<name>_command``."""
