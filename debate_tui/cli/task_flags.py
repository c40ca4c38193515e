"""The task options shared by `debate-tui run` and the TUI: what to judge, how, and with which models.

Only their definitions, apart from `task_args` (which validates them with the pydantic models), so that
building the TUI's parser imports no pydantic before its first frame.
"""

from __future__ import annotations

import argparse

from debate_tui.protocols import PROTOCOLS
from debate_tui.protocols.criteria_variants import VARIANTS

# Generic option name -> protocol option key: each protocol reads the keys it knows.
OPTION_KEYS = ("rounds", "critic_persona", "seed", "strategy", "evaluators", "on_no_consensus", "criteria_variant",
               "agents", "turns", "swap", "samples", "logprobs")


def add_task_arguments(parser: argparse.ArgumentParser, *, text_required: bool) -> None:
    task = parser.add_argument_group("what to judge")
    task.add_argument("--text", required=text_required, metavar="PATH|-", help="the text to evaluate ('-' reads stdin)")
    task.add_argument("--text-b", metavar="PATH", help="a second text, for pairwise comparison")
    task.add_argument("--source", metavar="PATH", help="the article, dialogue or question the text answers")
    task.add_argument("--context", metavar="PATH", help="extra facts the text should use (e.g. a knowledge snippet)")
    how = parser.add_argument_group("how to judge")
    how.add_argument("--protocol", choices=sorted(PROTOCOLS),
                     help="evaluation protocol (default: `protocol` in config.toml, else debate)")
    how.add_argument("--criteria", metavar="NAME[,NAME]|FILE.toml",
                     help="criteria to judge, built-in names or a TOML file (default depends on the protocol)")
    how.add_argument("--rounds", type=int, metavar="N",
                     help="DEBATE: maximum Critic iterations (default 4); ScaleEval: discussion rounds after the "
                          "initial verdicts (default 2); MATEval O_b_O/SR: rounds (default one per error type)")
    how.add_argument("--critic-persona", metavar="NAME",
                     help="DEBATE critic: strictly-negative (default), moderately-negative, weakly-negative, plain, sophisticated")
    how.add_argument("--tie-breaker", action="store_true", help="DEBATE: a Tie-Breaker agent decides when no agreement")
    how.add_argument("--seed", type=int, metavar="N", help="seed for every random draw (stored in the session)")
    how.add_argument("--strategy", metavar="NAME",
                     help="MATEval discussion strategy: SR+CoT (default), CoT, SR, O_b_O, SA (single agent); "
                          "ChatEval communication strategy: one-by-one (default), simultaneous-talk, "
                          "simultaneous-talk-with-summarizer")
    how.add_argument("--agents", type=int, metavar="N",
                     help="ChatEval: referees, 2 to 5 (default 3); ScaleEval: speakers, 2 to 5 (default 3)")
    how.add_argument("--turns", type=int, metavar="T", help="ChatEval: discussion turns (default 2)")
    how.add_argument("--personas", metavar="NAME[,NAME]|FILE.toml",
                     help="ChatEval referees' personas, cycled over the agents (default: general-public, critic, "
                          "news-author, psychologist, scientist); single: the judge's persona")
    how.add_argument("--swap", action="store_true",
                     help="ChatEval, single: judge a pair again with the texts exchanged (position bias check)")
    how.add_argument("--samples", type=int, metavar="N", help="single: replies drawn per criterion and averaged (default 1)")
    how.add_argument("--logprobs", action="store_true", default=None,
                     help="single: also report G-Eval's probability-weighted score, where the provider returns "
                          "log-probabilities (asks for the top 5 per token)")
    how.add_argument("--evaluators", type=int, metavar="N", help="MATEval: evaluator agents (default 2)")
    how.add_argument("--no-feedback", action="store_true",
                     help="MATEval: no feedback agent after each round (the paper's MATEval-FB ablation)")
    how.add_argument("--count-unlocated", action="store_true",
                     help="MATEval: an error whose quote is not found in the text costs its point too (the paper's "
                          "rule; by default it is listed as not located and costs nothing)")
    how.add_argument("--on-no-consensus", choices=("human", "majority", "tie", "undecided"),
                     help="ScaleEval, when the speakers still disagree after the last round: ask a person "
                          "(default; headless: exit code 5, resume with --decide), the majority, a tie, or no verdict")
    how.add_argument("--criteria-variant", choices=VARIANTS,
                     help="ScaleEval robustness runs: the rubric as written (general, default) or perturbed "
                          "from the seed (the paper's Table 7)")
    add_generation_arguments(parser)
    models = parser.add_argument_group("models")
    models.add_argument("--model", metavar="MODEL", help="any litellm model string, e.g. gpt-4o-mini, anthropic/claude-3-5-haiku-latest, ollama/llama3.1")
    models.add_argument("--api-base", metavar="URL", help="base URL of an OpenAI-compatible server or proxy")
    models.add_argument("--demo", action="store_true", help="use the offline demo model (no provider, not a real judgment)")
    models.add_argument("--agent-model", action="append", metavar="NAME=MODEL", default=[],
                        help="a model for one agent, e.g. 'Speaker 2=claude-3-5-haiku-latest' (repeatable; "
                             "the others use --model)")


def add_generation_arguments(parser: argparse.ArgumentParser) -> None:
    """How replies are generated; each overrides `[generation]` in config.toml and its DEBATE_TUI_* variable."""
    generation = parser.add_argument_group("generation")
    generation.add_argument(
        "--max-reply-tokens", type=int, metavar="N",
        help="tokens one reply may have: sent as max_tokens and enforced on the stream (default per role: 512, "
             "a MATEval evaluator 768, a summarizer 1536; a model's own max_reply_tokens in config.toml wins)")
    generation.add_argument(
        "--temperature", type=float, metavar="T",
        help="sampling temperature (default 0 for judging turns; the single judge with --samples above 1 keeps 1)")
    generation.add_argument(
        "--structured", action="store_true", default=None,
        help="ask the answer line as a small JSON object where the provider supports a response schema "
             "(else free text; the session records which was used)")
