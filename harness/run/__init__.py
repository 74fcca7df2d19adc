"""Running it: the servers, backends, load drivers and child processes, the machine, the run loop."""
