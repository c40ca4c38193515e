"""Target 4, tokens: prompt and completion tokens per debate, for every protocol and strategy.

Every protocol runs headless through the real engine and litellm against the
fake server (in this child process: only tokens are measured here, not time),
at one fixed configuration: 3 agents, 4 rounds, one criterion, the same
110-word text, and replies of a fixed length (120 words plus the answer line
each protocol asks for), except where a prompt sets the length: ChatEval's
summary of a turn and a condensation are as long as the word limit their
prompt gives (capped at 120). Tokens are the server's usage figures (4 tokens per
3 words), so every protocol is counted by one rule.

MATEval's CoT strategies take one round per error type (five), SA one: the
paper fixes them; O_b_O and SR take the 4 rounds. The ratios: ChatEval's simultaneous-talk-with-summarizer, and history
condensation (`--max-history-tokens`, by summary or by `--condense digest`), against full-history one-by-one.

Stable prefix: every prompt an agent is sent is recorded; for each agent the
longest prefix common to all its prompts must hold the whole material to
judge (system message, task block), and the share of each prompt that
repeats the start of the agent's previous prompt is what a provider's prompt
cache can serve.

Cache: each configuration is then run twice more through a response cache of
its own, the first filling it: the second, identical, must make zero calls.
(The measured run has no cache: at temperature 0 a cache would answer a
speaker whose prompt is identical to another's, e.g. ScaleEval's independent
first verdicts, with that other's reply, and change the debate.)
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from benchmarks.common import KNOWN_MODEL, Row, Section, emit, quiet_env, run_child, work_dir

FILLER_WORDS = 120
TEXT = ("Maria opened the bakery at six, as she had every morning for twenty years. The first customer was a boy "
        "who wanted a cake for his mother's birthday, but he had only a few coins. Maria looked at the coins, then "
        "at the boy, and wrote a price on a card that matched them exactly. She boxed the smallest cake, added a "
        "candle, and told him to come back when he was older to pay the rest. He came back fifteen years later, a "
        "baker himself, and asked whether she needed help with the morning shift. The morning shift was the one "
        "she liked best, because the street was quiet.")
TEXT_B = ("Maria ran a bakery. A boy came with few coins for a cake. She sold it to him for what he had. Years later "
          "he returned as a baker and offered to help her.")
QUESTION = "Which summary tells the story better?"
COMMON = ["--model", KNOWN_MODEL, "--seed", "1"]
CONFIGS: dict[str, list[str]] = {
    "debate (Scorer, Critic, Tie-Breaker; critic never agrees)":
        ["--protocol", "debate", "--criteria", "coherence", "--rounds", "4", "--tie-breaker"],
    "chateval one-by-one": ["--protocol", "chateval", "--criteria", "coherence", "--agents", "3", "--turns", "4",
                            "--strategy", "one-by-one"],
    "chateval simultaneous-talk": ["--protocol", "chateval", "--criteria", "coherence", "--agents", "3",
                                   "--turns", "4", "--strategy", "simultaneous-talk"],
    "chateval simultaneous-talk-with-summarizer": ["--protocol", "chateval", "--criteria", "coherence",
                                                   "--agents", "3", "--turns", "4",
                                                   "--strategy", "simultaneous-talk-with-summarizer"],
    **{f"chateval one-by-one, condensed to {budget}": [
        "--protocol", "chateval", "--criteria", "coherence", "--agents", "3", "--turns", "4",
        "--strategy", "one-by-one", "--max-history-tokens", budget] for budget in ("700", "1000", "1300")},
    **{f"chateval one-by-one, digested to {budget}": [
        "--protocol", "chateval", "--criteria", "coherence", "--agents", "3", "--turns", "4",
        "--strategy", "one-by-one", "--max-history-tokens", budget, "--condense", "digest"]
       for budget in ("700", "1000", "1300")},
    "chateval simultaneous-talk-with-summarizer, condensed to 1000": [
        "--protocol", "chateval", "--criteria", "coherence", "--agents", "3", "--turns", "4",
        "--strategy", "simultaneous-talk-with-summarizer", "--max-history-tokens", "1000"],
    **{f"mateval {strategy}": ["--protocol", "mateval", "--evaluators", "3", "--strategy", strategy,
                               *(["--rounds", "4"] if strategy in ("O_b_O", "SR") else [])]
       for strategy in ("SA", "O_b_O", "SR", "CoT", "SR+CoT")},
    "scaleeval (speakers never agree; majority)": ["--protocol", "scaleeval", "--agents", "3", "--rounds", "4",
                                                   "--on-no-consensus", "majority"],
    "single": ["--protocol", "single", "--criteria", "coherence"],
}
BASELINE = "chateval one-by-one"
CHEAPER = ("chateval simultaneous-talk-with-summarizer", "chateval one-by-one, digested to 700")
"""The target rows. Condensation's saving is set by its budget: at 700 tokens the history holds about four
replies before older ones are digested; the table below gives 700, 1000 and 1300, by summary and by digest."""
FILLER = " ".join(itertools.islice(itertools.cycle(
    "the text keeps its events in order and the reader can follow who does what and why it matters".split()),
    FILLER_WORDS))


# ----- the fake server's replies -----------------------------------------------------------------

_turns = itertools.count()


def reply(request: dict) -> str:
    """A fixed-length reply ending in whatever the prompt asks for, so no turn is re-asked."""
    from debate_tui.testing.fake_server import prompt_text

    prompt = prompt_text(request)
    if asked := re.search(r"(?:Summarize this turn for the referees|Condense this earlier part of the debate) "
                          r"(?:in|into) at most (\d+) words", prompt):
        return " ".join(FILLER.split()[:min(int(asked.group(1)), FILLER_WORDS)]) + "."
    if "Criticise the score" in prompt:
        return f"{FILLER}. The score is too generous: the ending does not follow from the middle."
    if "[Submission 1]" in prompt:
        return f"{FILLER}.\n{'12'[next(_turns) % 2]}"  # speakers alternate, so they never agree
    if "Q: Does the text contain" in prompt:
        types = dict.fromkeys(re.findall(r"Q: Does the text contain [^?]*\((\w+)\) errors\?", prompt))
        return FILLER + ".\n" + "\n".join(f"Q: Does the text contain {t} errors?\nA: No" for t in types)
    if "'Scores: A B'" in prompt:
        return f"{FILLER}.\nScores: 3 4"
    if "'Score: N'" in prompt:
        return f"{FILLER}.\nScore: 3"
    return FILLER + "."


# ----- the child ---------------------------------------------------------------------------------


async def run_all(work: Path, names: Iterable[str] | None = None) -> dict:
    """Each configuration (or those named) run three times: measured, filling the cache, served from it."""
    from debate_tui.engine import runner as runner_module
    from debate_tui.llm.litellm_client import load_litellm

    load_litellm()
    prompts: dict[str, list[str]] = defaultdict(list)
    complete = runner_module.Runner._complete

    async def recording(self, request, slot, agent):  # notes who was sent what: Turn keeps no prompt
        prompts[agent].append(serialize(request.messages))
        return await complete(self, request, slot, agent)

    runner_module.Runner._complete = recording  # type: ignore[method-assign]
    try:
        return await _run_configs(work, [name for name in CONFIGS if names is None or name in names], prompts)
    finally:
        runner_module.Runner._complete = complete  # type: ignore[method-assign]


async def _run_configs(work: Path, names: list[str], prompts: dict[str, list[str]]) -> dict:
    from debate_tui.cli import build_parser
    from debate_tui.cli.task_args import build_task, session_from_args
    from debate_tui.engine.condense import history_state
    from debate_tui.factory import runner_for
    from debate_tui.llm.cache import CachingClient, ResponseCache
    from debate_tui.llm.litellm_client import LiteLLMClient
    from debate_tui.testing.fake_server import FakeLLMServer

    (work / "a.txt").write_text(TEXT)
    (work / "b.txt").write_text(TEXT_B)
    (work / "q.txt").write_text(QUESTION)
    results = {}
    with FakeLLMServer(default_reply=reply) as server:
        for name in names:
            flags = CONFIGS[name]
            texts = ["--text", str(work / "a.txt")]
            if "scaleeval" in name:
                texts += ["--text-b", str(work / "b.txt"), "--source", str(work / "q.txt")]
            args = build_parser().parse_args(["run", *texts, *COMMON, "--api-base", server.base_url, *flags])
            cache = CachingClient(LiteLLMClient(), ResponseCache(work / f"cache-{len(results)}"))
            runs = []
            for client in (LiteLLMClient(), cache, cache):  # measured; fills the cache; served from it
                session = session_from_args(args, build_task(args, lambda note: None), lambda note: None).session
                session.keep_history(history_state(args.max_history_tokens, args.condense))
                for agent in session.agents:
                    agent.params["temperature"] = 0.0
                prompts.clear()
                before = server.calls
                done = await runner_for(session, client, stream=False).run()
                if done.status != "completed":
                    raise RuntimeError(f"{name}: the debate ended {done.status}: {done.error}")
                runs.append({"calls": server.calls - before, "usage": done.usage.model_dump(),
                             "prefix": prefix_stats(prompts, TEXT)})
            first, _, again = runs
            results[name] = {**first["usage"], "server_calls": first["calls"], "prefix": first["prefix"],
                             "rerun_calls": again["calls"], "rerun_usage_calls": again["usage"]["calls"]}
    return results


def serialize(messages: list[dict]) -> str:
    """A prompt as a provider's cache sees it: the messages in order, role and content."""
    return "".join(f"<{m.get('role')}>{m.get('content') or ''}" for m in messages)


def prefix_stats(prompts: dict[str, list[str]], text: str) -> dict:
    """Whether each agent's prompts share a prefix that holds the judged text, and how much repeats.

    `unstable`: agents that are sent the text but whose prompts do not all start
    with the same system message and task (agents never sent it, a summarizer
    of the talk, are not held to that). `cached_share`: characters of each prompt
    that repeat the start of the same agent's previous prompt, over all prompt
    characters: what a provider's prompt cache could serve (it caches prefixes).
    """
    unstable, repeated, total, agents = [], 0, 0, 0
    for agent, sent in prompts.items():
        if len(sent) < 2:
            continue
        agents += 1
        if any(text in prompt for prompt in sent) and text not in os.path.commonprefix(sent):
            unstable.append(agent)
        for previous, current in itertools.pairwise(sent):
            repeated += len(os.path.commonprefix([previous, current]))
        total += sum(len(p) for p in sent[1:])
    return {"stable": not unstable, "agents": agents, "cached_share": repeated / total if total else 0.0,
            "unstable": unstable}


# ----- the measurement ---------------------------------------------------------------------------


def measure() -> Section:
    with work_dir("tokens") as work:
        results = run_child("tokens", ["--child", str(work)], quiet_env(work), timeout=600)

    def total(name: str) -> int:
        return results[name]["prompt_tokens"] + results[name]["completion_tokens"]

    rows = []
    for name in CHEAPER:
        ratio = total(name) / total(BASELINE)
        rows.append(Row("4 tokens", f"{name}, 3 agents, 4 turns", f"{BASELINE} (full history)", ratio, "<= 0.6x",
                        ratio <= 0.6, f"{total(name):,} vs {total(BASELINE):,} tokens"))
    with_prefix = [r for r in results.values() if r["prefix"]["agents"]]
    stable = all(r["prefix"]["stable"] for r in with_prefix)
    share = sum(r["prefix"]["cached_share"] for r in with_prefix) / len(with_prefix)
    unstable = sorted({f"{name}: {agent}" for name, r in results.items() for agent in r["prefix"]["unstable"]})
    rows.append(Row("4 tokens", "stable prompt prefix (system + task) for every agent of every protocol",
                    "each agent's own calls", None, "all stable", stable,
                    f"on average {share:.0%} of a prompt repeats the agent's previous prompt's start"
                    + (f"; not stable: {', '.join(unstable)}" if unstable else ""),
                    value="stable" if stable else "NOT stable"))
    rerun = sum(r["rerun_calls"] for r in results.values())
    rows.append(Row("4 tokens", f"identical rerun of all {len(results)} debates, response cache on", "0 calls",
                    None, "0 calls", rerun == 0, f"first runs made {sum(r['server_calls'] for r in results.values())} "
                    "calls", value=f"{rerun} calls"))
    notes = ["| protocol and strategy (3 agents, 4 rounds) | calls | prompt tokens | completion tokens | total | "
             "prompt share served by a prefix cache |", "|---|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        notes.append(f"| {name} | {r['calls']} | {r['prompt_tokens']:,} | {r['completion_tokens']:,} | "
                     f"{total(name):,} | {r['prefix']['cached_share']:.0%} |")
    return Section(rows, notes)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tokens")
    parser.add_argument("--child", type=Path, metavar="WORK", help="child: run every configuration, print JSON")
    args = parser.parse_args(argv)
    if args.child:
        emit(asyncio.run(run_all(args.child)))
    else:
        section = measure()
        for row in section.rows:
            print(row.cells())
        print("\n".join(section.notes))


if __name__ == "__main__":
    main(sys.argv[1:])
