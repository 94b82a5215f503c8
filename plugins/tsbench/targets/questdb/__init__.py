"""QuestDB target (see README.md)."""
