"""grimoire-beholder."""
