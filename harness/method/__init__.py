"""The method, as statistics over plain data: the order of a block's slices and the race for the budget, verdicts,
moderated variances, noise and the pilot's findings, pooling over runs. It starts nothing (harness.run does)."""
