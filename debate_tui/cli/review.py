"""`debate-tui review RESULTS.jsonl`: decide, one at a time, the batch items a debate left undecided.

Opens a screen on each item whose status is needs_human: the question, both
submissions side by side, each speaker's final position, the debate on demand
(d). The answer keys decide (1, 2, 0 for a pair; the scale's points for a
score), s skips, b goes back, q quits. Each decision is recorded in the
item's session (who, when, after which turn, the question) and written back to
RESULTS.jsonl at once, so the queue can be left and reopened at any point.
`--list` and `--decide ID=VALUE` do the same without the screen.

`--override` queues the completed score lines instead: a key sets the score,
recorded as an override (who, when, the score it replaces) in the session.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `debate-tui --help` stays light
    from debate_tui.batch.review import ReviewQueue
    from debate_tui.llm.base import LLMClient

from debate_tui.cli.common_flags import add_sessions_dir
from debate_tui.textsafe import inert

EXIT_BAD_INPUT = 2


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("review", help="decide the items a batch left to a person",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", metavar="RESULTS.jsonl", help="the results file of a batch")
    parser.add_argument("--who", default=None, metavar="NAME", help="recorded as the decider (default: your user name)")
    parser.add_argument("--override", action="store_true",
                        help="review the completed score lines instead: a key overrides the score")
    parser.add_argument("--list", action="store_true", help="print the waiting items and their questions, then exit")
    parser.add_argument("--decide", action="append", default=[], metavar="ID=VALUE",
                        help="decide an item without the screen (repeatable; with --override: ID:CRITERION=SCORE)")
    add_sessions_dir(parser)
    parser.add_argument("--router", metavar="FILE",
                        help="the litellm Router config the batch used, if any")
    parser.add_argument("--no-cache", action="store_true",
                        help="do not use the response cache for calls after a decision")
    parser.set_defaults(handler=handle)


class BadInput(Exception):
    """One line for the user; exit code 2."""


def _client(args: argparse.Namespace) -> LLMClient:
    """What a session continued after a decision calls: the batch's client, behind the cache."""
    from debate_tui.config import effective_config
    from debate_tui.llm.cache import CacheError, with_cache
    from debate_tui.llm.router import ModelRouter

    config = effective_config(args)  # read here, at the edge: the calls' timeout and the cache's directory
    client: LLMClient = ModelRouter(timeout_s=config.limits.timeout)
    if args.router:
        from debate_tui.batch.litellm_router import RouterClient, RouterConfigError

        try:
            client = RouterClient.from_file(Path(args.router).expanduser(), fallback=client)
        except RouterConfigError as exc:
            raise BadInput(str(exc)) from None
    try:
        return with_cache(client, config.cache_dir, enabled=not args.no_cache)
    except CacheError as exc:  # locked past its bound, or an unwritable cache directory
        raise BadInput(str(exc)) from None


def _decisions(pairs: list[str]) -> list[tuple[str, str]]:
    out = []
    for pair in pairs:
        ident, sep, value = pair.rpartition("=")
        if not sep or not ident or not value:
            raise BadInput(f"--decide: expected ID=VALUE, got {pair!r}")
        out.append((ident, value))
    return out


async def _list(queue: ReviewQueue) -> None:
    from debate_tui.store import SessionFileError

    for item in queue.items:
        try:
            await queue.open(item)
        except SessionFileError as exc:  # a missing or broken session: said on its line, the list goes on
            question, options = f"(session unreadable: {exc})", ""
        else:
            if item.question:
                question, options = item.question.text, "/".join(item.question.options)
            else:
                question, options = f"(status {item.session.status if item.session else 'unread'})", ""
        print(json.dumps({"id": item.id, "criterion": item.about, "session": item.session_id,
                          "options": options, "question": question}))


async def _decide_all(queue: ReviewQueue, decisions: list[tuple[str, str]]) -> None:
    by_id = {f"{item.id}:{item.criterion}" if item.criterion else item.id: item for item in queue.items}
    for ident, value in decisions:
        item = by_id.get(ident)
        if item is None:
            raise BadInput(f"--decide: no item {ident!r} waits for a decision in {queue.results.path}")
        try:
            await queue.decide(item, value)
        except ValueError as exc:
            raise BadInput(f"--decide {ident}={value}: {exc}") from None
        print(json.dumps({"id": item.id, "criterion": item.criterion, "decided": value, "status": item.status,
                          "session": item.session_id}))


def handle(args: argparse.Namespace) -> int:
    from debate_tui.batch.results import ResultsError, ResultsFile
    from debate_tui.batch.review import ReviewQueue
    from debate_tui.cli.task_args import sessions_dir
    from debate_tui.config import effective_config

    results = ResultsFile(Path(args.results).expanduser())
    try:
        if not results.exists():
            raise BadInput(f"{results.path}: no such results file")
        decisions = _decisions(args.decide)
        with results.locked("a review"):
            queue = ReviewQueue(results, effective_config(args).session_store(sessions_dir(args)), _client(args),
                                who=args.who or getpass.getuser(), mode="override" if args.override else "decide")
            queue.load()
            total = queue.total
            if args.list:
                asyncio.run(_list(queue))
            elif decisions:
                asyncio.run(_decide_all(queue, decisions))
            elif total:
                from debate_tui.ui.review.app import ReviewApp

                ReviewApp(queue).run()
    except (BadInput, ResultsError) as exc:
        print(f"debate-tui: error: {inert(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not args.list:
        print(json.dumps({"reviewed": total, "left": queue.left, "out": str(results.path)}))
    return 0
