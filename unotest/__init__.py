"""unotest package."""
