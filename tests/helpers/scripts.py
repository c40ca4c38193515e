"""What the fake server answers in each protocol's tests: the rules a test adds before it runs a session, and the
texts and names those rules match on."""

from __future__ import annotations

import itertools
import random

from debate_tui.choices import Choices
from debate_tui.domain import Session, Task
from debate_tui.factory import build_session
from debate_tui.protocols import scaleeval
from tests.helpers import STORY

CRITIC = "Criticise the score if it is not justified"

TIE_BREAKER = "You are the Tie-Breaker"


def debate_script(server, *, agree_at: int | None, tie_breaker_score: int | None = None) -> None:
    """Scorer answers 5, 4, 3, 2, 1, 2, ...; the Critic objects until iteration `agree_at`."""
    scores = itertools.cycle([5, 4, 3, 2, 1, 2, 3, 4])
    if tie_breaker_score is not None:
        server.add_rule(f"Siding with the critic.\nScore: {tie_breaker_score}", match=TIE_BREAKER)
    if agree_at is not None:
        server.add_rule("The score ignores the repeated sentence; it is too high.", match=CRITIC, times=agree_at - 1)
        server.add_rule("NO ISSUE", match=CRITIC)
    else:
        server.add_rule("I still disagree: the repetition deserves a lower score.", match=CRITIC)
    server.add_rule(lambda request: f"Reasoning about coherence.\nScore: {next(scores)}")


def agreeing_debate(server) -> None:
    """Scorer says 4, the Critic accepts at once: two calls per item and criterion."""
    server.add_rule("NO ISSUE", match=CRITIC)
    server.add_rule("Reasoning about the text.\nScore: 4")


def never_agreeing_debate(server) -> None:
    server.add_rule("I still disagree: the score is too high.", match=CRITIC)
    server.add_rule("Reasoning about the text.\nScore: 4")


REMINDER = "had no score I could read"

JUDGES = {"judge-a": "Score: 1", "judge-b": "Score: 3", "judge-c": "Score: 1"}
"""Scores on both criteria's scales (fluency is 1-3)."""


def scripted(server, replies: dict[str, str]) -> None:
    for model, reply in replies.items():
        server.add_rule(reply, model=model)


def jury_session(server, models: list[str], text_b: str | None = None, **options) -> Session:
    choices = Choices(protocol="single", api_base=server.base_url, criteria=["coherence", "fluency"],
                      options={"jury": ",".join(f"openai/{m}" for m in models), **options})
    return build_session(Task(text=STORY, text_b=text_b), choices).session


def speaking(name: str) -> str:
    """A rule pattern for the request in which `name` is asked to talk."""
    return f"clear, {name}!"


def chateval_script(server, replies: dict[str, list[str]]) -> None:
    """Each referee answers its replies in turn, the last one repeated."""
    for name, answers in replies.items():
        for answer in answers[:-1]:
            server.add_rule(answer, match=speaking(name), times=1)
        server.add_rule(answers[-1], match=speaking(name))


MARKER = "(with a worked example)"

PLAIN = "Use the quadratic formula."

MARKED = f"Use the quadratic formula {MARKER}: x = (-b ± sqrt(b^2 - 4ac)) / 2a."

QUESTION = "How do I solve a quadratic equation?"

NAMES = ["Speaker 1", "Speaker 2", "Speaker 3"]

CONTRARIAN = "fake-contrarian"


def presented_first(request: dict) -> str:
    prompt = request["messages"][-1]["content"]
    return prompt.split("[Submission 1]:", 1)[1].split("[Submission 2]:", 1)[0]


def prefer_marker(request: dict) -> str:
    """A speaker that prefers the submission carrying the marker, in the numbering it was shown."""
    return f"The submission with the worked example helps more.\n{'1' if MARKER in presented_first(request) else '2'}"


def prefer_plain(request: dict) -> str:
    return f"Short is better here.\n{'2' if MARKER in presented_first(request) else '1'}"


def seed_where(swapped: bool) -> int:
    return next(s for s in range(100) if scaleeval.Order.draw(random.Random(s), NAMES).swapped is swapped)


def scaleeval_script(server, stubborn_rounds: int | None = None) -> None:
    """Everyone prefers the marked answer; Speaker 3 (if contrarian) disagrees for the initial round
    and `stubborn_rounds` discussion rounds (None: forever)."""
    if stubborn_rounds is not None:
        server.add_rule(prefer_plain, model=CONTRARIAN, times=1 + stubborn_rounds)
    else:
        server.add_rule(prefer_plain, model=CONTRARIAN)
    server.add_rule(prefer_marker)


CONTRARIAN_SPEAKER = {"Speaker 3": f"openai/{CONTRARIAN}"}
"""`per_agent` for a ScaleEval session whose third speaker is the contrarian the scripts single out."""

SUMMARIZER = "You are the Summarizer"

FEEDBACK = "You are the Feedback agent"

REPEATED = "He went to the pool every morning."

REPORT = f"""Final evaluation report.
Q: Does the text contain Repetition (REP) errors?
A: Yes
Location: "{REPEATED}"
Explanation: Said twice in a row.
Deduction: -1
Location: "{REPEATED.lower()}"
Explanation: The second evaluator quoted it too.
Deduction: -1
Q: Does the text contain Logical Inconsistency (LINC) errors?
A: No
Q: Does the text contain Discontinuity (DCONT) errors?
A: No
Q: Does the text contain Inappropriate Lexical Choice (ILC) errors?
A: Yes
Location: "At first he was afraid of the water."
Explanation: "afraid of" is too strong here.
Deduction: -1
Q: Does the text contain Factual Error (FER) errors?
A: No
Scores: REP -1, LINC 0, DCONT 0, ILC -1, FER 0. Total: -2
"""


def mateval_script(server, report: str = REPORT) -> None:
    server.add_rule(report, match=SUMMARIZER)
    server.add_rule("Feedback: the evaluators agree; be briefer next round.", match=FEEDBACK)
    server.add_rule("I see no error of this type.")
