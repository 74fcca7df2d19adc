"""What a reader sees: the findings as data, results/README.md and the study pages, report.html."""
