"""all-MiniLM-L6-v2's weights and tokenizer, in the ``model`` folder next to this file."""
