"""The benchmark harness, by stage: `plan` (what a run measures), `run` (servers, backends, drivers, the run loop),
`method` (blocks, the pilot, noise, verdicts, pooling), `results` (the files a run leaves) and `render` (the findings,
the markdown pages and report.html). `studies` holds each study's plan half and report half; `cli` the commands."""
