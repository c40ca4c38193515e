"""`debate-tui batch INPUT.jsonl --out RESULTS.jsonl`: evaluate many items, concurrently and resumably.

Progress goes to stderr; one JSON summary line goes to stdout. Rerunning the
same command skips the items already in RESULTS.jsonl; with the response
cache (temperature 0, the batch default) an identical rerun into a new file
costs no calls either.

`--shard I/N` runs one deterministic part of the input (for array jobs);
`debate-tui batch merge OUT... --out FILE` joins the parts' results.
See docs/BATCH.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debate_tui.cli import freeze_loaded
from debate_tui.cli.common_flags import add_sessions_dir
from debate_tui.cli.exits import Exit
from debate_tui.cli.outputs import fail
from debate_tui.cli.task_args import input_files, say_endpoints, sessions_dir, warn_stderr
from debate_tui.cli.task_flags import TEXT_FLAGS, add_setting, add_task_arguments
from debate_tui.domain import Session, Task
from debate_tui.settings import SETTINGS

if TYPE_CHECKING:  # imported where used: `debate-tui --help` stays light
    from debate_tui.assembly.batch import BatchRequest
    from debate_tui.batch.items import Item, Items
    from debate_tui.batch.results import ResultsFile
    from debate_tui.batch.runner import BatchRun
    from debate_tui.batch.shards import Shard
    from debate_tui.config import Config, Resolved
    from debate_tui.meta.ladder import LadderRun

SHARED_GROUPS = ("how to judge", "generation", "models")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("batch", help="evaluate a JSONL file of items, concurrently and resumably",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", metavar="INPUT.jsonl",
                        help='one {"id", "text", "text_b"?, "source"?, "context"?, "group"?, "human"?, '
                             '"human_verdict"?} a line ("-": stdin)')
    parser.add_argument("--out", required=True, metavar="RESULTS.jsonl",
                        help="results, one line per item and criterion")
    add_judging_arguments(parser)
    run = parser.add_argument_group("batch")
    add_setting(run, SETTINGS["concurrency"])
    run.add_argument("--processes", type=int, metavar="N",
                     help="worker processes, each with its share of --concurrency (default: the cores, at most "
                          "--concurrency, one per 200 items; 1: this process only)")
    run.add_argument("--limit", type=int, metavar="K", help="only the first K items of the input")
    run.add_argument("--shard", metavar="I/N",
                     help="only shard I of N (1 <= I <= N), chosen by a stable hash of each item id; "
                          "join the shards' results with `debate-tui batch merge OUT... --out FILE`")
    run.add_argument("--max-cost", type=float, metavar="USD",
                     help="budget of the whole batch: no call starts once this much is spent "
                          "(default: limits.max_cost)")
    run.add_argument("--max-tokens", type=int, metavar="N",
                     help="token budget of the whole batch (default: limits.max_tokens)")
    run.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="a protocol option without a flag of its own, e.g. tie_breaker=human (repeatable)")
    run.add_argument("--retries", type=int, metavar="N", help="attempts per call (default: limits.retries, else 4)")
    run.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    add_setting(run, SETTINGS["cache_dir"])
    run.add_argument("--router", metavar="FILE",
                     help="litellm Router config (model_list + router_settings; YAML, JSON or TOML)")
    run.add_argument("--ray", metavar="auto|ADDRESS",
                     help="run the shards as Ray tasks on an existing cluster (auto: the one this machine "
                          "belongs to; needs pip install 'debate-tui[ray]')")
    run.add_argument("--ray-tasks", type=int, metavar="N",
                     help="with --ray: shards (one Ray task each; default: the cluster's CPUs)")
    add_sessions_dir(run)
    run.add_argument("--progress-interval", type=float, default=10.0, metavar="S",
                     help="seconds between progress lines when stderr is not a terminal (default 10)")
    run.add_argument("--policy", metavar="POLICY.json",
                     help="run a trust ladder (from `debate-tui calibrate`): tier 1 on every item, each next tier "
                          "only on what the one before did not trust, the rest left for `debate-tui review`; "
                          "the tiers' own task settings replace the judging flags (docs/TRUST.md)")
    jobs = parser.add_argument_group("provider batch")
    jobs.add_argument("--provider-batch", action="store_true",
                      help="send the calls as the provider's batch jobs (OpenAI, Azure, ...; about half price, "
                           "done within 24 h): one job per round, resumable; see docs/BATCH.md")
    jobs.add_argument("--poll-interval", type=float, default=30.0, metavar="S",
                      help="seconds between polls of a running batch job (default 30)")
    jobs.add_argument("--job-max-requests", type=int, default=50_000, metavar="N",
                      help="requests per batch job; a larger round is split (default 50000, OpenAI's limit)")
    parser.set_defaults(handler=handle)


def add_judging_arguments(parser: argparse.ArgumentParser) -> None:
    """The protocol and model options of `run`, taken from its own definition so the two never drift.

    `add_task_arguments` also defines what to judge (--text and friends), which
    here comes from the input file, so only its judging groups are moved over.
    """
    donor = argparse.ArgumentParser(add_help=False)
    add_task_arguments(donor, text_required=False)
    for group in donor._action_groups:
        if group.title in SHARED_GROUPS:
            target = parser.add_argument_group(group.title)
            for action in group._group_actions:
                target._add_action(action)


class BadInput(Exception):
    """One line for the user; the command exits with code 2."""


def _check_flags(args: argparse.Namespace) -> None:
    """What the configuration does not check itself (it validates --concurrency, --max-cost and the like)."""
    if args.limit is not None and args.limit < 0:
        raise BadInput("--limit must be 0 or more")
    if _processes(args) != 1:
        _check_processes(args)
    if args.router and args.api_base:
        raise BadInput("--router and --api-base exclude each other: the router's deployments say where to call")
    _check_ray(args)
    if args.provider_batch and args.router:
        raise BadInput("--provider-batch and --router exclude each other: a batch job goes to one endpoint")
    if args.poll_interval <= 0 or args.job_max_requests < 1:
        raise BadInput("--poll-interval must be above 0 and --job-max-requests at least 1")


def _check_out(args: argparse.Namespace) -> None:
    """--out is a new file or a results file to resume, and none of the files the batch reads."""
    from debate_tui.batch.results import ResultsError, ResultsFile
    from debate_tui.safefile import TargetError, check_distinct

    out = Path(args.out).expanduser()
    inputs = input_files(args)
    if args.input != "-":
        inputs["INPUT"] = Path(args.input).expanduser()
    if args.router:
        inputs["--router"] = Path(args.router).expanduser()
    try:
        check_distinct({"--out": out}, inputs=inputs)
        ResultsFile(out).check_resumable()
    except (TargetError, ResultsError) as exc:
        raise BadInput(str(exc)) from None


def _processes(args: argparse.Namespace) -> int | None:
    """--processes; a command that builds its own flags without it (probe) runs in one process."""
    return getattr(args, "processes", 1)


def _check_processes(args: argparse.Namespace) -> None:
    """--processes runs local worker processes; --ray, --provider-batch and --policy run their own way."""
    if args.processes is None:
        return
    if args.processes < 1:
        raise BadInput("--processes must be 1 or more")
    others = [flag for flag, on in (("--ray", args.ray), ("--provider-batch", args.provider_batch),
                                    ("--policy", args.policy)) if on]
    if args.processes > 1 and others:
        raise BadInput(f"--processes above 1 cannot be combined with {others[0]}, which runs in one process "
                       "(--ray: use --ray-tasks)")


def _check_ray(args: argparse.Namespace) -> None:
    import importlib.util

    if args.ray_tasks is not None and (not args.ray or args.ray_tasks < 1):
        raise BadInput("--ray-tasks needs --ray and a number of 1 or more")
    if not args.ray:
        return
    if importlib.util.find_spec("ray") is None:
        raise BadInput("--ray needs Ray, which is not installed: pip install 'debate-tui[ray]'")
    if args.max_cost is not None or args.max_tokens is not None or args.provider_batch:
        raise BadInput("--ray runs calls in several processes: --max-cost, --max-tokens and --provider-batch "
                       "cannot be held across them")


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` strings; a value is read as JSON when it can be (numbers, true), else kept as text."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise BadInput(f"--option: expected KEY=VALUE, got {pair!r}")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value
    return options


def build_template(args: argparse.Namespace, first_task: Task, resolved: Resolved) -> Session:
    """The session every item copies: protocol, options, criteria, agents; validated once, up front.

    `--option KEY=VALUE` sets options without a flag of their own, over the flags.
    """
    from dataclasses import replace

    from debate_tui.cli.task_flags import choices_from_args
    from debate_tui.factory import OptionError, build_session
    from debate_tui.inputs import InputError
    from debate_tui.resolver import resolve_choices

    if args.seed is None:
        args.seed = 0  # reproducible by default; each item derives its own seed from this and its id
    extra = parse_options(args.option)
    try:
        choices = choices_from_args(args)
        choices = resolve_choices(replace(choices, options={**choices.options, **extra}), resolved)
        built = build_session(first_task, choices, check_inputs=False)  # each line's: _check_tasks
    except OptionError as exc:
        if exc.key not in extra:
            raise BadInput(str(exc)) from None
        raise BadInput(f"--option: {exc.protocol} has no option {exc.key}" if exc.unknown
                       else f"--option {exc.key}: {exc.reason}") from None
    except InputError as exc:
        raise BadInput(str(exc)) from None
    for warning in built.warnings:
        warn_stderr(warning)
    template = built.session
    return template


def _check_tasks(template: Session, items: Iterable[Item]) -> None:
    """The protocol's own refusals (a pair where one text is needed, ...) for every item, before any call."""
    from debate_tui.factory import check_task
    from debate_tui.inputs import InputError

    fields = {key: f'"{key}"' for key in TEXT_FLAGS}  # a line gives its texts as fields, not flags
    try:
        for item in items:
            try:
                check_task(template, item.task, fields)
            except InputError as exc:
                raise BadInput(f"line {item.line} (id {item.id!r}): {exc}") from None
    except InputError as exc:  # the input file itself (changed since it was checked)
        raise BadInput(str(exc)) from None


def _read_items(args: argparse.Namespace) -> tuple[Items, list[str]]:
    """The input's items (a file is walked again when needed, not held) and their ids in input order."""
    from debate_tui.batch.items import open_items
    from debate_tui.inputs import InputError

    try:
        return open_items(args.input)
    except InputError as exc:
        raise BadInput(str(exc)) from None


def _select(args: argparse.Namespace, items: Items, ids: list[str]) -> Items:
    """--limit, then --shard: the shards of a limited batch partition the same K items."""
    from debate_tui.batch.items import only

    if args.limit is None and not args.shard:
        return items
    ids = ids if args.limit is None else ids[:args.limit]
    shard = _shard(args)
    return only(items, [i for i in ids if shard.holds(i)] if shard else ids)


def _shard(args: argparse.Namespace) -> Shard | None:
    """--shard I/N, parsed once for the selection and the results file's records, or BadInput."""
    from debate_tui.batch.shards import Shard, ShardError

    try:
        return Shard.parse(args.shard) if args.shard else None
    except ShardError as exc:
        raise BadInput(str(exc)) from None


def prepare(args: argparse.Namespace, items: Items | None = None, out: Path | None = None) -> BatchRun:
    """Everything a batch needs, or BadInput; nothing is called or written yet.

    A Ray task hands its own items and results file (the input is the driver's, not on its machine).
    """
    from debate_tui.batch.items import first
    from debate_tui.batch.results import ResultsFile

    _check_flags(args)
    if out is None:
        _check_out(args)
    resolved = _resolved(args)
    config = resolved.config
    whole, ids = _read_items(args) if items is None else (items, [])
    template = build_template(args, first(whole).task, resolved)
    items = _select(args, whole, ids) if items is None else items
    shard = _shard(args)
    local = not (args.ray or args.provider_batch)
    return batch_for(args, config, template, items,
                     ResultsFile(out or Path(args.out).expanduser(), str(shard) if shard else None),
                     processes=_processes(args) if local else 1)


def _config(args: argparse.Namespace) -> Config:
    return _resolved(args).config


def _resolved(args: argparse.Namespace) -> Resolved:
    """The flags over the environment over config.toml, with each value's origin (for the run spec)."""
    from debate_tui.config import flag_values, resolve_current
    from debate_tui.inputs import InputError

    try:
        return resolve_current(flag_values(args))
    except InputError as exc:  # ConfigError: names the flag, variable or file line at fault
        raise BadInput(str(exc)) from None


def batch_for(args: argparse.Namespace, config: Config, template: Session, items: Items,
              results: ResultsFile, processes: int | None = 1) -> BatchRun:
    """One batch of `template` over `items` into `results`, with the flags' settings (a tier of a ladder is one),
    assembled by `assembly.batch` once every item is checked.

    `processes` other than 1 (None: the default, see `processes_for`) may run the items in worker processes.
    """
    import functools

    from debate_tui.assembly.batch import assemble_batch

    say_endpoints(template.agents)
    _check_tasks(template, items)
    return assemble_batch(request_of(args), config, template, items, results, processes=processes,
                          rebuild=functools.partial(_part_batch, args), warn=warn_stderr)


def request_of(args: argparse.Namespace) -> BatchRequest:
    """What the flags ask of a batch beyond the configuration (a command without some of them, probe, has their
    defaults)."""
    from debate_tui.assembly.batch import BatchRequest

    router = getattr(args, "router", None)
    return BatchRequest(seed=args.seed, progress_interval_s=args.progress_interval, cache=not args.no_cache,
                        router=Path(router).expanduser() if router else None, model=args.model,
                        sessions_dir=sessions_dir(args), provider_batch=args.provider_batch,
                        poll_interval_s=args.poll_interval, job_max_requests=args.job_max_requests,
                        settle=freeze_loaded)


def _part_batch(args: argparse.Namespace, concurrency: int, items: Items, out: Path) -> BatchRun:
    """A worker process's batch: the same flags over its items, with its share of the concurrency."""
    part = argparse.Namespace(**{**vars(args), "concurrency": concurrency, "processes": 1})
    return prepare(part, items, out)


def prepare_ladder(args: argparse.Namespace) -> LadderRun:
    """`--policy`: each tier of the policy a batch of its recorded task, over what the tiers before passed on."""
    import functools

    from debate_tui.batch.results import ResultsFile
    from debate_tui.meta.ladder import LadderError, LadderRun, load_tiers

    _check_flags(args)
    if args.ray:
        raise BadInput("--policy runs its tiers one after the other in this process; it cannot be used with --ray")
    _check_out(args)
    config = _config(args)
    items = list(_select(args, *_read_items(args)))
    if args.seed is None:
        args.seed = 0
    try:
        tiers = load_tiers(Path(args.policy).expanduser(), items[0].task, config.model_params, warn_stderr)
    except LadderError as exc:
        raise BadInput(str(exc)) from None
    return LadderRun(items, tiers, ResultsFile(Path(args.out).expanduser()),
                     functools.partial(batch_for, args, config))


def handle(args: argparse.Namespace) -> int:
    import functools

    from debate_tui.assembly.batch import run_on_ray, run_until_done
    from debate_tui.batch.results import ResultsError
    from debate_tui.inputs import InputError

    try:
        batch: BatchRun | LadderRun = prepare_ladder(args) if args.policy else prepare(args)
        if args.ray and not args.policy:  # each Ray task rebuilds its batch from the same flags, over its items
            run_on_ray(batch, functools.partial(prepare, args), args.ray, args.ray_tasks)  # type: ignore[arg-type]
        else:
            run_until_done(batch)
    except (BadInput, InputError, ResultsError) as exc:
        return fail(str(exc))
    summary = batch.summary()
    print(json.dumps(summary), flush=True)
    cache = getattr(batch, "cache", None)
    if cache is not None:
        cache.cache.close()  # done with it: a process that runs many batches (a test) keeps no file open
    if cache is not None and cache.cache.problem:  # the calls went on uncached; say so, and not as a success
        return fail(cache.cache.problem)
    if summary["stopped"]:
        print(f"debate-tui: batch stopped: {summary['stopped']}; rerun the same command to resume", file=sys.stderr)
        return Exit.STOPPED
    return Exit.FAILED if summary["failed"] else Exit.OK
