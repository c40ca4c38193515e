"""The data the whole application shares: what is judged, who judges, what was said.

Everything here is a pydantic model so that a session round-trips through JSON
unchanged. `Session.schema_version` lets `store` migrate older files.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypedDict, get_type_hints

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    create_model,
    field_serializer,
    field_validator,
    model_validator,
)

from debate_tui.choices import Choices
from debate_tui.pasted import escape_markers, injection_signs
from debate_tui.registry import REGISTRY
from debate_tui.textsafe import one_line

Name = Annotated[str, AfterValidator(one_line)]
"""A name shown in one-line fields (criteria, personas, agents): refused when it holds a line break, a
control, bidi or zero-width character, wherever it enters (a TOML file, a session file, the TUI)."""

SCHEMA_VERSION = 1

Verdict = Literal["1", "2", "0"]
VERDICT_FLIP: dict[Verdict, Verdict] = {"1": "2", "2": "1", "0": "0"}
"""A verdict on the swapped pair, in the original numbering."""
"""ScaleEval's convention: submission 1 is better, submission 2 is better, or a tie."""

FinishReason = Literal["stop", "length", "deadline", "cut", "error"]
"""How a reply ended: on its own, at a token cap (the provider's or ours), at the --timeout deadline,
with a stream that stopped without a finish reason, or with an error."""
Status = Literal["pending", "running", "completed", "needs_human", "failed", "cancelled"]
HUMAN_ROLE = "human"
"""The role of a person's turn (a remark, a decision), beside the roles the protocols register."""


def _registered_role(role: str) -> str:
    if role != HUMAN_ROLE and not any(role in registered.roles for registered in REGISTRY.values()):
        raise ValueError(f"unknown role {role!r}: not one a registered protocol's agents play, nor {HUMAN_ROLE}")
    return role


Role = Annotated[str, AfterValidator(_registered_role)]
"""A role some registered protocol's agents play (`registry.REGISTRY`), or a person's."""


AGREE_TOLERANCE = 0.5
"""Two scores agree when they are at most this far apart, in the criterion's own units (`--tolerance`)."""


def agrees(answer: float | str | None, other: float | str | None, tolerance: float = AGREE_TOLERANCE) -> bool:
    """The one definition of "agree" (confidence, calibrate, escalate, meta): the same verdict for a pair,
    |answer - other| <= tolerance for a score; a missing answer agrees with nothing."""
    if answer is None or other is None:
        return False
    if isinstance(answer, str) or isinstance(other, str):
        return str(answer) == str(other)
    return abs(float(answer) - float(other)) <= tolerance + 1e-9


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_session_id() -> str:
    """Sortable by time, unique enough, and safe to use as a file name."""
    return utcnow().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class Criterion(BaseModel):
    """An aspect to judge, with the scale its scores live on."""

    name: Name
    description: str
    low: FiniteFloat = 1
    high: FiniteFloat = 5
    """The scale's edges: finite (`inf` would be saved as null, and the session could not be read back)."""
    steps: list[str] = Field(default_factory=list)
    """Evaluation steps, G-Eval style, shown to every judge."""
    abbreviation: Name | None = None
    """Short label, e.g. REP for MATEval's Repetition error type."""
    kind: Literal["score", "error_type"] = "score"

    @model_validator(mode="after")
    def _scale_is_ordered(self) -> Criterion:
        if self.low >= self.high:
            raise ValueError(f"criterion {self.name!r}: low ({self.low}) must be below high ({self.high})")
        return self

    @property
    def scale(self) -> str:
        """"1-5" as the papers write it; "-10..0" where a dash would read as a minus."""
        separator = ".." if self.low < 0 else "-"
        return f"{self.low:g}{separator}{self.high:g}"


class Persona(BaseModel):
    """Who an agent pretends to be; the role prompt goes into its system message."""

    name: Name
    role_prompt: str
    """What the agent is told, all a session needs; the line a chooser shows lives in the catalog
    (`Catalog.described_personas`), so a session read back holds the very persona that ran."""


def names_from_personas(cast: list[Persona], reserved: frozenset[str] = frozenset()) -> list[str]:
    """Display names from the personas ("General Public"), numbered where a persona repeats or a name is
    `reserved` (taken by another agent)."""
    titles = [" ".join(p.name.replace("_", " ").replace("-", " ").split()).title() for p in cast]
    numbered = {t for t in titles if titles.count(t) > 1 or t in reserved}
    seen: dict[str, int] = {}
    names = []
    for title in titles:
        seen[title] = seen.get(title, 0) + 1
        names.append(f"{title} {seen[title]}" if title in numbered else title)
    return names


class AgentSpec(BaseModel):
    """One debater: its role in the protocol, its persona and the model behind it."""

    name: Name
    role: Role
    persona: Persona | None = None
    model: str
    params: dict[str, Any] = Field(default_factory=dict)
    """Extra litellm parameters (temperature, max_tokens, api_base, ...); never an API key."""
    context_window: int | None = None
    """The model's window in tokens (prompt and reply) when the configuration gives it; else litellm's table."""


class Task(BaseModel):
    """What is judged. `text_b` makes it a pairwise comparison."""

    text: str
    text_b: str | None = None
    source: str | None = None
    """The article, dialogue history or question the text answers."""
    context: str | None = None
    """Extra facts, e.g. Topical-Chat's knowledge snippet."""

    @property
    def pairwise(self) -> bool:
        return self.text_b is not None


ERROR_TYPES: dict[str, str] = {
    "REP": "Repetition",
    "LINC": "Logical Inconsistency",
    "DCONT": "Discontinuity",
    "ILC": "Inappropriate Lexical Choice",
    "FER": "Factual Error",
}
"""MATEval's error types: abbreviation -> name (the paper's Table 1)."""
CHINESE_ERROR_TYPES: dict[str, str] = {"REP": "重复问题", "LINC": "逻辑问题", "DCONT": "连贯性问题", "ILC": "用词不当",
                                       "FER": "事实性错误"}
"""MATEval's Chinese names of the error types, as its LOT reports write them."""


class ErrorSpan(BaseModel):
    """One located error, MATEval style. `start`/`end` are None when the quote is not in the text."""

    type: str
    quote: str
    start: int | None = None
    end: int | None = None
    explanation: str = ""
    deduction: float = 1
    which: Literal["a", "b"] = "a"

    @property
    def located(self) -> bool:
        return self.start is not None


class Usage(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd


class Turn(BaseModel):
    """One completed (or failed) utterance of one agent."""

    slot: int
    """The call's place in the protocol's own sequence: stable across a resume, even for parallel turns."""
    agent: Name
    role: Role
    round: int
    content: str
    criterion: Name | None = None
    score: float | None = None
    score_b: float | None = None
    verdict: Verdict | None = None
    unscored: bool = False
    """A score was asked for, re-asked once, and still could not be read."""
    logprobs: bool = False
    """The reply came with log-probabilities (only asked for by the single judge's `logprobs` option)."""
    weighted_score: float | None = None
    """G-Eval's probability-weighted score: the in-scale alternatives at the score token, weighted by probability."""
    score_mass: float | None = None
    """The probability the score token's in-scale alternatives put within AGREE_TOLERANCE of the parsed score
    (normalised over those alternatives): the judge's own confidence in its score, where log-probabilities came."""
    no_issue: bool | None = None
    """For a critic: did it accept the score."""
    started_at: datetime = Field(default_factory=utcnow)
    duration_s: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    partial: bool = False
    """The stream broke; `content` holds what arrived before it did."""
    finish_reason: FinishReason | None = None
    """How the reply ended; None only in sessions saved before it was recorded."""
    reply_tokens: int | None = None
    """The reply's own completion tokens, kept when a later call for the same turn (its answer asked as JSON)
    adds to `usage`; None: `usage` is the reply's alone."""

    @property
    def truncated(self) -> bool:
        return self.finish_reason in TRUNCATED

    @property
    def ending(self) -> str | None:
        """How a reply that did not end on its own ended, in words; None for one that did (or failed)."""
        if self.finish_reason == "length":
            count = self.usage.completion_tokens if self.reply_tokens is None else self.reply_tokens
            return f"truncated at {count:,} tokens" if count else "truncated at its token cap"
        if self.finish_reason == "deadline":
            return f"cut off at the --timeout deadline, after {self.duration_s:.0f} s"
        if self.finish_reason == "cut":
            return "cut off: the stream ended without a finish reason"
        return None


TRUNCATED: tuple[FinishReason, ...] = ("length", "deadline", "cut")
"""Finish reasons of a reply that did not end on its own: never taken as a complete answer."""


HumanKind = Literal["inject", "override", "decide", "stop", "audit"]
"""`audit`: a blind audit's answer, kept as a label only: it changes nothing in the run or its result."""
LabelSource = Literal["override", "decision", "review", "audit"]
"""Where a person's answer came from, as `debate-tui labels` names it: an override in the TUI, a decision the run
asked for (a tie, a stalemate, a ladder no tier trusted, `resume --decide`), the `review` queue, a blind audit."""
LABEL_KINDS: tuple[HumanKind, ...] = ("override", "decide", "audit")
"""The actions in which a person says what the right answer is."""


class HumanAction(BaseModel):
    """Something a person did to the run, recorded with who, when and why."""

    kind: HumanKind
    after_turn: int
    """Number of completed turns when the action was taken: where a replay applies it."""
    who: str = "user"
    at: datetime = Field(default_factory=utcnow)
    text: str = ""
    criterion: str | None = None
    agent: str | None = None
    value: float | str | None = None
    judge_answer: float | str | None = None
    """What the judge had answered on `criterion` when the person said `value` (a score, or a pair's verdict in
    the original numbering): what the label is compared with. None: no answer yet, or a session saved before."""
    judge_confidence: float | None = None
    """The judge's confidence in `judge_answer`, by its protocol's rule; None when it had none."""
    where: str | None = None
    """The screen or command that took it ("tui override", "resume --decide", "review --audit", ...)."""
    source: LabelSource | None = None
    """What kind of label it makes; None (a session saved before): read from `kind` (`label_source`)."""
    blind: bool = False
    """The person decided without seeing the judge's answer or confidence (a blind audit)."""

    @property
    def label_source(self) -> LabelSource:
        if self.source is not None:
            return self.source
        if self.kind == "override":
            return "override"
        return "audit" if self.kind == "audit" else "decision"


class Vote(BaseModel):
    """What the agents said before any discussion, aggregated the way the final result is: the baseline that
    tells whether the discussion added anything, and at what price. Each protocol says what its first vote is
    (see its module docstring); `slots` are the turns it was read from, so its cost is theirs."""

    scores: dict[Name, float | None] = Field(default_factory=dict)
    verdict: Verdict | None = None
    per_agent: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    agent_verdicts: dict[str, Verdict | None] = Field(default_factory=dict)
    method: str = ""
    """What was counted and how, e.g. "mean of the referees' first-turn scores"."""
    slots: list[int] = Field(default_factory=list)


class Outcome(BaseModel):
    """The result of a run: final scores and/or verdict and how they were reached."""

    scores: dict[str, float | None] = Field(default_factory=dict)
    verdict: Verdict | None = None
    method: str = ""
    """e.g. "NO ISSUE after 2 iterations", "tie-breaker", "consensus in round 1", "human"."""
    per_agent: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    agent_verdicts: dict[str, Verdict | None] = Field(default_factory=dict)
    errors: list[ErrorSpan] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    vote: Vote | None = None
    """The vote before discussion, for a protocol whose agents discuss; None for one without a discussion."""
    confidence: dict[str, float | None] = Field(default_factory=dict)
    """Per criterion, in [0, 1]: how far the judges' own evidence agrees with the answer, by the rule the
    protocol's spec declares (`ProtocolSpec.confidence`); None when unscored or answered by a person."""


CondenseMode = Literal["summary", "digest"]


class HistorySettings(BaseModel):
    """How a long debate's older rounds are condensed (`--max-history-tokens`, `--condense`): kept in the
    session's `state` under these names, so a resume condenses alike."""

    max_history_tokens: int | None = None
    """Tokens an agent's prompt may use before older rounds are condensed; None: its model's window."""
    condense: CondenseMode = "summary"


class PairOrder(BaseModel):
    """The order a pair was shown in (ScaleEval draws it), kept in the session's `state` under "order": the
    agents' turn verdicts are in that presented numbering, everything a person reads in the original one."""

    model_config = ConfigDict(frozen=True)

    swapped: bool = False
    """The agents saw text 2 first."""
    speakers: tuple[str, ...] = ()
    """Who speaks when."""

    def original(self, verdict: Verdict | None) -> Verdict | None:
        """A verdict in the presented numbering, told in the original one (1 = the text given first): the one
        place the numbering is turned back."""
        return VERDICT_FLIP[verdict] if self.swapped and verdict is not None else verdict

    def state(self) -> dict[str, Any]:
        """As kept in the session file, with a sentence for whoever reads it there."""
        return {**self.model_dump(mode="json"), "numbering": (
            "the speakers saw text 2 as Submission 1: turn verdicts are in that presented numbering, outcome "
            "verdicts in the original one" if self.swapped else "the speakers saw the texts in the original order")}


ORDER_KEY: Final = "order"
"""Key in `Session.state` of the pair's `PairOrder`."""


class SessionState(TypedDict, total=False):
    """What a run keeps beside its turns, for a resume, a report or a reader of the file; each key is written
    by one part of the program and may be absent. A key this version does not know (a newer program's) is
    kept as it is."""

    order: dict[str, Any]
    """The pair's `PairOrder` as shown (`Session.keep_order`), with a sentence on its numbering."""
    max_history_tokens: int | None
    condense: CondenseMode
    """With `max_history_tokens`: the run's `HistorySettings` (`Session.keep_history`), for a resume."""
    answer_format: dict[str, str]
    """Model -> the answer format it was asked in (engine/structured)."""
    weighted_scores: dict[str, float | None]
    """Criterion -> the single judge's probability-weighted score (protocols/single)."""
    criteria_variant: dict[str, Any]
    """ScaleEval's criteria variant and the rubric it gave."""
    swap: dict[str, Any]
    """A pair judged in both orders: the two verdicts, whether they agree, the calibrated one (protocols/pairs)."""
    ladder: dict[str, Any]
    """The trust ladder's rungs and who decided (batch/climb)."""


_STATE_FIELDS: dict[str, Any] = {name: (kind, None) for name, kind in get_type_hints(SessionState).items()}
_STATE_CHECK = create_model("SessionStateCheck", __config__=ConfigDict(extra="allow"), **_STATE_FIELDS)
"""`SessionState`'s keys as a model, to check a session file's state on load: pydantic builds no schema from
typing's TypedDict before Python 3.12 (and typing_extensions is no declared dependency)."""

if TYPE_CHECKING:
    State = SessionState
else:
    State = dict[str, Any]  # validated by `Session._checked_state`


class ForkOrigin(BaseModel):
    """Where a fork came from (`debate-tui fork`, the TUI's fork key): its first `turns` completed turns are
    the original session's, copied verbatim; what came after them was asked anew."""

    session: Name
    """The original session's id (one line: a report prints it)."""
    turns: int = Field(ge=0)
    """How many of the original's completed turns were copied (the fork point N)."""


class Session(BaseModel):
    """Everything about one evaluation; saved after every turn."""

    schema_version: int = SCHEMA_VERSION
    id: str = Field(default_factory=new_session_id)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    protocol: str
    options: dict[str, Any] = Field(default_factory=dict)
    criteria: list[Criterion]
    agents: list[AgentSpec]
    task: Task
    turns: list[Turn] = Field(default_factory=list)
    actions: list[HumanAction] = Field(default_factory=list)
    state: State = Field(default_factory=lambda: SessionState())
    """Protocol draws and run settings worth keeping, e.g. ScaleEval's submission and speaker order."""
    status: Status = "pending"
    outcome: Outcome | None = None
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    pending_question: str | None = None
    """Set while the run waits for a human decision."""
    spec: Choices | None = None
    """The resolved run spec the session was built from (set values and their origins, never a key): a resume
    runs as it says, whatever the configuration says by then, and a trust policy's tier keeps it. None: a
    session saved before it was kept."""
    seal: str | None = None
    """This machine's mark that its agents' endpoints and key variables were chosen by the person's own sources
    (endpoints.seal): a resume follows them as made; a file without it (someone else's) may not choose them."""
    forked_from: ForkOrigin | None = None
    """Set on a fork: the original's id and the turns copied from it. None: not a fork (and every session saved
    before forks existed, so no schema step is needed: an older reader ignores the field)."""

    @field_validator("state")
    @classmethod
    def _checked_state(cls, state: dict[str, Any]) -> dict[str, Any]:
        """Each known key's value of its declared type; keys this version does not know kept as they are."""
        return _STATE_CHECK.model_validate(state).model_dump(exclude_unset=True)

    @field_serializer("spec")
    def _spec_data(self, spec: Choices | None) -> dict[str, Any] | None:
        return None if spec is None else spec.data()

    def agent(self, name: str) -> AgentSpec:
        for spec in self.agents:
            if spec.name == name:
                return spec
        raise KeyError(name)

    @property
    def order(self) -> PairOrder:
        """The order the pair was shown in: the original one unless one was drawn (`keep_order`)."""
        kept = self.state.get(ORDER_KEY)
        return PairOrder.model_validate(kept) if isinstance(kept, dict) else PairOrder()

    def keep_order(self, order: PairOrder) -> None:
        self.state[ORDER_KEY] = order.state()

    @property
    def swapped(self) -> bool:
        """The agents saw text 2 first (ScaleEval's drawn order): their turns' verdicts are in that presented
        numbering, while everything a person reads and decides is in the original one."""
        return self.order.swapped

    def original_verdict(self, verdict: Verdict | None) -> Verdict | None:
        """A turn's verdict told in the original numbering (1 = the text given first)."""
        return self.order.original(verdict)

    @property
    def history(self) -> HistorySettings:
        """How older rounds are condensed, as the run was started (`keep_history`)."""
        kept = {name: self.state[name] for name in ("max_history_tokens", "condense") if name in self.state}
        return HistorySettings.model_validate(kept)

    def keep_history(self, settings: HistorySettings) -> None:
        if settings.max_history_tokens is not None:
            self.state["max_history_tokens"] = settings.max_history_tokens
        if settings.condense != "summary":
            self.state["condense"] = settings.condense

    @property
    def models(self) -> list[str]:
        return sorted({spec.model for spec in self.agents})


def task_block(task: Task) -> str:
    """The material to judge, clearly delimited so the judge cannot mistake one part for another: a marker
    written inside a text is escaped (`pasted.escape_markers`), so no text closes its own block."""
    parts = []
    if task.source:
        parts.append(f"[Source]\n{escape_markers(task.source)}\n[End of source]")
    if task.context:
        parts.append(f"[Context]\n{escape_markers(task.context)}\n[End of context]")
    if task.pairwise:
        parts.append(f"[Text 1]\n{escape_markers(task.text)}\n[End of text 1]")
        parts.append(f"[Text 2]\n{escape_markers(task.text_b or '')}\n[End of text 2]")
    else:
        parts.append(f"[Text to evaluate]\n{escape_markers(task.text)}\n[End of text]")
    return "\n\n".join(parts)


def task_injection_signs(task: Task) -> list[str]:
    """What in the material `task_block` pastes speaks to the judges (`pasted.injection_signs`)."""
    return injection_signs(task.text, task.text_b, task.source, task.context)


Session.model_rebuild()  # `Choices` names Criterion only for type checkers: it is known here
