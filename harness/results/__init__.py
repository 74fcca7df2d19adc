"""What a run leaves: typed result files written atomically, and where and with what it was made."""
