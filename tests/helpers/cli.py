"""What the command-line tests share: a command run in-process or as a child process, a handler driven through its
own parser, configuration files, and the session `run` would build."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from debate_tui.cli import main
from debate_tui.cli.run import add_parser as add_run_parser
from debate_tui.cli.task_args import build_task, session_from_args
from debate_tui.config import config_path
from debate_tui.engine.runner import RetryPolicy

FAST = RetryPolicy(attempts=4, base_delay_s=0.01, max_delay_s=0.2)


def run_cli(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    lines = [line for line in out.splitlines() if line.strip()]
    return code, (json.loads(lines[-1]) if lines else None), err


def cli_command() -> list[str]:
    return [sys.executable, "-c", "import sys; from debate_tui.cli import main; sys.exit(main())"]


def cli_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(DEBATE_TUI_SESSIONS_DIR=str(tmp_path / "sessions"), DEBATE_TUI_CONFIG_DIR=str(tmp_path / "config"),
               DEBATE_TUI_CACHE_DIR=str(tmp_path / "cache"), LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


def run(module, argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    module.add_parser(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.handler(args)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_config(text: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_run_parser(parser.add_subparsers())
    return parser.parse_args(["run", *argv])


def session_for(*argv: str, warnings: list[str] | None = None):
    args = run_args(*argv)
    warn = (warnings if warnings is not None else []).append
    return session_from_args(args, build_task(args, warn), warn).session


def fake_model_config(base_url: str, key_env: str = "FAKE_LLM_KEY") -> str:
    return (f'default_model = "openai/fake-model"\n'
            f'[models."openai/fake-model"]\napi_base = "{base_url}"\napi_key_env = "{key_env}"\n')


def scored_rows() -> list[dict]:
    pairs = [(1, 2), (1.2, 3), (2, 2), (3, 4), (4, 4), (5, 5)]
    return [{"id": f"i{k}", "criterion": "coherence", "human": h, "predicted": p, "protocol": "single",
             "model": "m", "calls": 1, "cost_usd": 0.002} for k, (h, p) in enumerate(pairs)]
