"""`deftly rollout`: one agent turn per task line, each in its own fresh workspace, on this
machine (a process pool) or on a Ray cluster; results appended as they finish.

Decisions, in one place:

- **status**: `ok` (the agent's turn ran to an end the loop chose: `stop_reason` says which
  — `end_turn`, `stop_turn`, `max_steps`, `budget`), `failed` (the workspace, the setup
  command, the model or the worker failed, or the provider failed for good:
  `stop_reason` is `workspace`, `setup`, `model`, `worker_died`, `internal` or the loop's
  `error`, and `error` says what happened and what to do), `timeout` (the turn ran past
  `--timeout`; `stop_reason` `timeout`; the diff so far is kept). A task cut short by
  cancelling the rollout gets no line, so a rerun runs it again.
- **transcripts** travel back with the result; by default inline (a list of the
  transcript's JSON records), with `--transcripts DIR` written by the driver to
  `DIR/<id>.jsonl` and the result holds that path (no shared storage needed).
- **secrets**: keys come from each worker's environment only; task payloads and results
  never hold one. A local Ray instance inherits the driver's environment; for a cluster,
  `--env NAME` forwards that variable through Ray's runtime_env.
"""
