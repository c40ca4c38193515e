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

`--audit K [--seed S] [--escalated K2]` queues a blind audit of a `batch
--policy` results file: K lines drawn at random from the trusted ones (K2 from
the rest), shuffled. The judge's answer, its confidence, the positions and the
debate are hidden until you have answered, then shown. Answers are kept in the
sessions as labels (source audit, blind), the results are left as they are:
`debate-tui labels` exports them and `debate-tui audit` checks the policy's
guarantee with them. The same seed draws the same lines, so a reopened audit
shows what is left of it (`--decide ID:CRITERION=VALUE` answers without the
screen). A panel sets the judge against you over the answers so far.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `debate-tui --help` stays light
    from debate_tui.llm.base import LLMClient
    from debate_tui.meta.review import AuditDraw, ReviewQueue

from debate_tui.cli.common_flags import add_sessions_dir
from debate_tui.cli.outputs import fail


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("review", help="decide the items a batch left to a person",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", metavar="RESULTS.jsonl",
                        help="the results file of a batch, or a saved session (id or file) of a trust ladder no "
                             "tier trusted (`run --policy` exit 5, the TUI's): --list shows its question, "
                             "--decide ID=VALUE answers it")
    parser.add_argument("--who", default=None, metavar="NAME", help="recorded as the decider (default: your user name)")
    parser.add_argument("--override", action="store_true",
                        help="review the completed score lines instead: a key overrides the score")
    parser.add_argument("--audit", type=int, metavar="K",
                        help="a blind audit: K lines drawn at random from the trusted lines of batch --policy results")
    parser.add_argument("--escalated", type=int, default=0, metavar="K2",
                        help="with --audit: also K2 lines drawn from the lines no tier trusted")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="with --audit: the draw's seed (default 0; the same seed draws the same lines)")
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
    """What a session continued after a decision calls: the batch's client (`assembly.clients`: --router, else
    config.toml's [deployments], else the ordinary one), behind the cache."""
    from debate_tui.assembly.clients import routed_client
    from debate_tui.config import effective_config
    from debate_tui.inputs import InputError
    from debate_tui.llm.cache import CacheError, with_cache

    config = effective_config(args)  # read here, at the edge: the calls' timeout and the cache's directory
    try:
        client = routed_client(config, Path(args.router).expanduser() if args.router else None, None)
    except InputError as exc:
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


def _draw(args: argparse.Namespace) -> AuditDraw | None:
    """--audit's draw, checked: None without --audit."""
    from debate_tui.meta.review import AuditDraw

    if args.audit is None:
        if args.escalated:
            raise BadInput("--escalated goes with --audit K")
        return None
    if args.override:
        raise BadInput("--audit and --override are two different queues: give one")
    if args.audit < 0 or args.escalated < 0 or args.audit + args.escalated == 0:
        raise BadInput("--audit K and --escalated K2 must be 0 or more, and not both 0")
    return AuditDraw(args.audit, args.escalated, args.seed)


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
    from debate_tui.cli.ladder_decide import review_waiting, waiting_session
    from debate_tui.cli.task_args import sessions_dir
    from debate_tui.config import effective_config
    from debate_tui.inputs import InputError
    from debate_tui.meta.review import ReviewQueue

    try:  # a one-text ladder's session (run --policy, the TUI) that no tier trusted: its one question
        waiting = waiting_session(effective_config(args).session_store(sessions_dir(args)), args.results)
    except InputError as exc:
        return fail(str(exc))
    if waiting is not None:
        return review_waiting(args, waiting, args.who or getpass.getuser())
    results = ResultsFile(Path(args.results).expanduser())
    try:
        if not results.exists():
            raise BadInput(f"{results.path}: no such results file")
        decisions = _decisions(args.decide)
        draw = _draw(args)
        with results.locked("a review"):
            queue = ReviewQueue(results, effective_config(args).session_store(sessions_dir(args)), _client(args),
                                who=args.who or getpass.getuser(), draw=draw,
                                mode="audit" if draw else "override" if args.override else "decide")
            try:
                queue.load()
            except ValueError as exc:
                raise BadInput(f"{results.path}: {exc}") from None
            total = queue.total
            if args.list:
                asyncio.run(_list(queue))
            elif decisions:
                asyncio.run(_decide_all(queue, decisions))
            elif total:
                from debate_tui.ui.review.app import ReviewApp

                ReviewApp(queue).run()
    except (BadInput, ResultsError) as exc:
        return fail(str(exc))
    if not args.list:
        print(json.dumps({"reviewed": queue.decisions, "queue": total, "left": queue.left, "out": str(results.path)}))
    return 0
