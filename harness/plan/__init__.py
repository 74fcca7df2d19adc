"""What a run measures: the matrix of servers, scenarios and levels, run-all's options, the interpreters."""
