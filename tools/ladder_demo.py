"""A three-tier trust ladder run live on the fake server: a cheap single judge, a jury, a debate, then a person.

    python tools/ladder_demo.py [--calibration-per-kind 12] [--items-per-kind 5]

Everything goes through the real commands (`batch`, `calibrate`, `batch --policy`,
`review --list`) and the real path (litellm to the fake OpenAI-compatible server on
127.0.0.1; model names litellm prices, so the costs are litellm's list prices for
the tokens the fake server reports). No network call. Runs in a temporary
directory (sessions, cache, config).

The scripted judges, by item kind (a marker in the text; human coherence labels):
- EASY-ITEM (human 3): the cheap judge's 3 samples all say 3 (confidence 1).
- MEDIUM-ITEM (human 4): the cheap judge's samples say 1, 3, 5 (confidence 1/3,
  answer 3: wrong); the jury's three judges all say 4 (confidence 1).
- HARD-ITEM (human 2): the jury says 1, 3, 5 (confidence 1/3); in the debate the
  Scorer says 2, the Critic objects once, the Scorer keeps 2 and the Critic
  accepts (confidence 1: accepted, not moved). Every debate's Critic objects once.
- HOPELESS-ITEM (human 5): nobody is sure; the debate's Critic never accepts and
  the Scorer's score moves 4, 3, 2, 1, 2 (confidence 0): a person decides.

The tiers are calibrated on `--calibration-per-kind` items of each kind (every tier
judges every calibration item, as `calibrate` needs), alpha 0.2, delta 0.2,
`--min-trusted 5` (a small demo), then run with `batch --policy` on new items. The
comparison is the debate tier alone on the same new items, without the response cache (the ladder's
tier 3 has just answered half of them).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import signal
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from debate_tui.testing.fake_server import FakeLLMServer, Request, prompt_text

KINDS = {"EASY-ITEM": 3, "MEDIUM-ITEM": 4, "HARD-ITEM": 2, "HOPELESS-ITEM": 5}
CHEAP, DEBATER = "openai/gpt-4o-mini", "openai/gpt-4o"
JURY = ("openai/gpt-4.1-nano", "openai/gpt-4.1-mini", "openai/gpt-3.5-turbo")
CRITIC = "Criticise the score if it is not justified"
OBJECTION = "OBJECTION:"


def tier_flags(api_base: str) -> list[list[str]]:
    """The three tiers' batch flags, cheapest first."""
    common = ["--api-base", api_base, "--criteria", "coherence"]
    return [["--protocol", "single", "--samples", "3", "--model", CHEAP, *common],
            ["--protocol", "single", "--jury", ",".join(JURY), *common],
            ["--protocol", "debate", "--model", DEBATER, *common]]


def _kind(request: Request) -> str:
    text = prompt_text(request)
    return next((kind for kind in KINDS if kind in text), "")


def script(server: FakeLLMServer) -> None:
    """The judges' replies, by model and item kind (see the module docstring)."""
    spread: dict[str, Any] = {}

    def cheap(request: Request) -> str:
        if _kind(request) == "EASY-ITEM":
            return "Score: 3"
        return f"Score: {next(spread.setdefault(prompt_text(request), itertools.cycle([1, 3, 5])))}"

    server.add_rule(cheap, model=CHEAP.removeprefix("openai/"))
    for number, model in enumerate(JURY):
        server.add_rule(lambda r, n=number: "Score: 4" if _kind(r) in ("MEDIUM-ITEM", "EASY-ITEM")
                        else f"Score: {[1, 3, 5][n]}", model=model.removeprefix("openai/"))
    debater = DEBATER.removeprefix("openai/")
    server.add_rule("NO ISSUE", model=debater, match=lambda r: CRITIC in prompt_text(r) and OBJECTION in prompt_text(r)
                    and _kind(r) != "HOPELESS-ITEM")
    server.add_rule(f"{OBJECTION} the score ignores the problems.", model=debater,
                    match=lambda r: CRITIC in prompt_text(r))
    moving: dict[str, Any] = {}

    def scorer(request: Request) -> str:
        if _kind(request) != "HOPELESS-ITEM":
            return {"EASY-ITEM": "Score: 3", "MEDIUM-ITEM": "Score: 4"}.get(_kind(request), "Score: 2")
        item = prompt_text(request).split("HOPELESS-ITEM", 1)[1][:12]
        return f"Score: {next(moving.setdefault(item, itertools.cycle([4, 3, 2, 1, 2])))}"

    server.add_rule(scorer, model=debater)


def write_items(path: Path, per_kind: int, prefix: str) -> Path:
    lines = []
    for kind, human in KINDS.items():
        for number in range(per_kind):
            text = f"{kind} {prefix}{number}: He went to the pool every morning. At first he was afraid of the water."
            lines.append({"id": f"{prefix}-{kind.lower()}-{number}", "text": text, "human": {"coherence": human}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def cli(*argv: str) -> tuple[int, str]:
    """A debate-tui command in this process: its exit code and stdout (stderr dropped)."""
    from debate_tui.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    return code, out.getvalue()


def last_json(text: str) -> dict[str, Any]:
    return dict(json.loads(text.strip().splitlines()[-1]))


def calibrate(server: FakeLLMServer, work: Path, calibration_per_kind: int) -> tuple[Path, str]:
    """Script the judges, judge the calibration items with every tier, and calibrate: the policy and its table."""
    script(server)
    calibration = write_items(work / "calibration.jsonl", calibration_per_kind, "cal")
    tiers = []
    for number, flags in enumerate(tier_flags(server.base_url), start=1):
        tier = work / f"cal-tier{number}.jsonl"
        code, _ = cli("batch", str(calibration), "--out", str(tier), *flags)
        assert code == 0, f"calibration batch of tier {number}: exit {code}"
        tiers.append(str(tier))
    policy = work / "policy.json"
    code, table = cli("calibrate", *tiers, "--alpha", "0.2", "--delta", "0.2", "--min-trusted", "5",
                      "--out", str(policy))
    assert code == 0, f"calibrate: exit {code}"
    return policy, table


def run_demo(server: FakeLLMServer, work: Path, calibration_per_kind: int, items_per_kind: int) -> dict[str, Any]:
    """Calibrate the three tiers, run the ladder live, and debate everything for comparison."""
    policy, table = calibrate(server, work, calibration_per_kind)
    items = write_items(work / "items.jsonl", items_per_kind, "new")
    calls_before = server.calls
    code, out = cli("batch", str(items), "--policy", str(policy), "--out", str(work / "results.jsonl"))
    assert code == 0, f"batch --policy: exit {code}"
    ladder = last_json(out)
    ladder["server_calls"] = server.calls - calls_before
    code, queue = cli("review", str(work / "results.jsonl"), "--list")
    calls_before = server.calls
    code, out = cli("batch", str(items), "--out", str(work / "debate-all.jsonl"), "--no-cache",
                    *tier_flags(server.base_url)[2])
    everything = last_json(out)
    everything["server_calls"] = server.calls - calls_before
    lines = [json.loads(line) for line in (work / "results.jsonl").read_text().splitlines()]
    return {"calibration": table, "ladder": ladder, "debate_all": everything,
            "landed": Counter(str(line["tier"]) for line in lines),
            "review": [json.loads(line) for line in queue.splitlines() if line.strip()], "lines": lines}


def use_dirs(work: Path) -> None:
    for name in ("SESSIONS", "CONFIG", "CACHE"):
        os.environ[f"DEBATE_TUI_{name}_DIR"] = str(work / name.lower())
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake-for-the-local-server")


def texts(work: Path) -> dict[str, Path]:
    """One text of each kind, to open in the TUI."""
    folder = work / "texts"
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for kind in KINDS:
        path = out[kind] = folder / f"{kind.split('-')[0].lower()}.txt"
        path.write_text(f"{kind} tui: He went to the pool every morning. At first he was afraid of the water.\n",
                        encoding="utf-8")
    return out


def how_to_open(work: Path, policy: Path, shown: dict[str, Path]) -> str:
    """The command that opens the TUI on this ladder, and which text climbs how far."""
    dirs = " ".join(f"DEBATE_TUI_{name}_DIR={work / name.lower()}" for name in ("SESSIONS", "CONFIG", "CACHE"))
    lines = ["open the TUI on this ladder (in another terminal; the fake server checks no key, any value will do):",
             f"  {dirs} OPENAI_API_KEY=fake debate-tui --text {shown['HOPELESS-ITEM']} --policy {policy}",
             "texts: " + "; ".join(f"{path} ({climbs})" for path, climbs in (
                 (shown["EASY-ITEM"], "tier 1 trusts it"), (shown["MEDIUM-ITEM"], "tier 2, the jury"),
                 (shown["HARD-ITEM"], "tier 3, the debate"), (shown["HOPELESS-ITEM"], "no tier: a person decides"))),
             "Ctrl+C (or SIGTERM) stops the server"]
    return "\n".join(lines)


def stop_on_signals() -> threading.Event:
    """An event Ctrl+C or SIGTERM sets: installed before the server says it is ready, so a signal sent as soon
    as it has said so is never lost; the `with` that closes the server is then left as usual (SIGTERM's
    default would end the process on the spot)."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def serve(work: Path, calibration_per_kind: int) -> int:
    """Calibrate, then serve the scripted judges until Ctrl+C or SIGTERM (streamed slowly enough to watch)."""
    work.mkdir(parents=True, exist_ok=True)
    use_dirs(work)
    with FakeLLMServer(chunk_delay=0.02, chunk_size=6) as server:
        policy, _ = calibrate(server, work, calibration_per_kind)
        stop = stop_on_signals()
        print(f"fake server {server.base_url}; policy {policy}", flush=True)
        print(how_to_open(work, policy, texts(work)), flush=True)
        while not stop.wait(1.0):
            pass
    print("stopped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calibration-per-kind", type=int, default=12)
    parser.add_argument("--items-per-kind", type=int, default=5)
    parser.add_argument("--serve", metavar="DIR",
                        help="calibrate into DIR (its sessions, cache and config there too), print the policy's path "
                             "and the command that opens the TUI on it (DEBATE_TUI_{SESSIONS,CONFIG,CACHE}_DIR=DIR/... "
                             "debate-tui --text FILE --policy DIR/policy.json), and keep the fake server running "
                             "until Ctrl+C or SIGTERM")
    args = parser.parse_args(argv)
    if args.serve:
        return serve(Path(args.serve), args.calibration_per_kind)
    with tempfile.TemporaryDirectory() as scratch, FakeLLMServer() as server:
        work = Path(scratch)
        use_dirs(work)
        result = run_demo(server, work, args.calibration_per_kind, args.items_per_kind)
    print(result["calibration"])
    ladder, everything = result["ladder"], result["debate_all"]
    print(f"\nitems: {len(result['lines'])}; lines per tier: {dict(sorted(result['landed'].items()))}")
    for tier in ladder["tiers"]:
        print(f"tier {tier['tier']} {tier['label']}: ran on {tier['items']} items, trusted {tier['trusted']}, "
              f"passed on {tier['passed_on']}, {tier['calls']} calls, ${tier['cost_usd']:.6f}")
    print(f"ladder: {ladder['calls']} calls, ${ladder['cost_usd']:.6f}; needs a person: {ladder['needs_human']}")
    print(f"debating every item: {everything['calls']} calls, ${everything['cost_usd']:.6f}")
    for waiting in result["review"]:
        print(f"review: {waiting['id']} {waiting['criterion']}: {waiting['question']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
