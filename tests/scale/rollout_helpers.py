"""What the rollout tests share: a real git repo, a scripted model server that answers each
task by the id in its prompt, task files, and `deftly rollout` run for real."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tests.cli import run_deftly
from tests.scripted.script import Call, Step, calls, say
from tests.scripted.server import ModelServer

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo: Path, *args: str) -> str:
    """Run git in `repo`; its stdout."""
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    ).stdout


def make_repo(path: Path) -> Path:
    """A git repo with README.md ("hello") committed on `main`, then a second commit
    tagged `v2` that adds NOTES.md."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("hello\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "first")
    (path / "NOTES.md").write_text("notes\n")
    git(path, "add", "NOTES.md")
    git(path, "commit", "-q", "-m", "second")
    git(path, "tag", "v2")
    return path


def task_of(body: dict[str, Any]) -> str:
    """The task id a request belongs to: the `TASK <id>` its prompt starts with."""
    for message in body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            text = content if isinstance(content, str) else content[0].get("text", "")
            if text.startswith("TASK "):
                return text.split()[1]
    raise AssertionError("a request without a task prompt")


def step_of(body: dict[str, Any]) -> int:
    """How many replies this task's conversation already has."""
    return sum(1 for message in body["messages"] if message["role"] == "assistant")


def edit_steps(task_id: str) -> list[Step]:
    """Read README.md, change it and add a new file, then say so."""
    return [
        calls(Call("Read", {"path": "README.md"})),
        calls(
            Call("Edit", {"path": "README.md", "old_string": "hello", "new_string": "hello world"}),
            Call("Write", {"path": "added/new.txt", "content": f"made by {task_id}\n"}),
        ),
        say(f"edited for {task_id}"),
    ]


def per_task(
    steps: Callable[[str], list[Step]] = lambda task_id: [say(f"answer {task_id}")],
    on_request: Callable[[str, int, dict[str, Any]], Step | None] | None = None,
) -> Callable[[dict[str, Any]], Step]:
    """A script function: each task's conversation follows `steps(task_id)`; `on_request`
    may answer (or wait) first."""

    def answer(body: dict[str, Any]) -> Step:
        task_id, step = task_of(body), step_of(body)
        if on_request is not None:
            chosen = on_request(task_id, step, body)
            if chosen is not None:
                return chosen
        script = steps(task_id)
        return script[step] if step < len(script) else say("(no more steps)")

    return answer


def write_tasks(path: Path, tasks: Iterable[dict[str, Any] | str]) -> Path:
    """A tasks file: dicts as JSON lines, strings as they are."""
    lines = [t if isinstance(t, str) else json.dumps(t) for t in tasks]
    path.write_text("\n".join(lines) + "\n")
    return path


def task(task_id: str, repo: Path | str, **fields: Any) -> dict[str, Any]:
    """A task line whose prompt names its id (what the scripted server keys on)."""
    return {"id": task_id, "repo": str(repo), "prompt": f"TASK {task_id} do it", **fields}


def rollout(
    server: ModelServer, tasks_file: Path, *args: str, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """`deftly rollout TASKS ARGS` against `server`."""
    return run_deftly(
        "rollout",
        str(tasks_file),
        "--base-url",
        server.openai_url,
        "--model",
        "scripted",
        *args,
        timeout=timeout,
        OPENAI_API_KEY="k",
        RAY_DEFAULT_OBJECT_STORE_MEMORY_PROPORTION="0.005",  # a local Ray's store: ~100 MB
    )


def results(path: Path) -> list[dict[str, Any]]:
    """Every result line of `path`."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A result without what differs between runs (seconds, transcript timestamps and
    paths, attempts)."""
    kept = {k: v for k, v in record.items() if k not in ("seconds", "transcript", "attempts")}
    kept["transcript_types"] = [r["type"] for r in record["transcript"] or []]
    return kept
