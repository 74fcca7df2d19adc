"""The method: blocks of warm servers in rounds, the pilot, noise, verdicts and pooling over runs."""
