"""A run's comparisons analysed: read back from its files (read_back), pooled with the runs before it (evidence),
judged (judging), and what would close those still open (closing). Values, not words: the studies' report halves
and render/ tell them."""
