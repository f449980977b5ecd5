"""``python -m jitkern``'s subcommands that need more than a few lines (the demo)."""
