"""Every setting a person may give outside config.toml's tables, declared once: its name, type and bounds, where
it goes in config.toml (and at which more specific layers), its DEBATE_TUI_* variable, its flag and help, its
setup form field.

The flags (`cli/task_flags`, `cli/config`), the config schema's bounds (`config.schema`, `generation.ReplySettings`),
the merge (`config.resolve`), `config show`, the first frame's reader (`ui/opening`) and the settings reference in
docs/configuration.md are made from this table, so a new setting is one row here (and what reads its value).

Plain data: the TUI's parser is built from it before its first frame, so nothing heavy is imported here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from debate_tui.precedence import ORDER, REPLY_ORDER, Layer, Scope, described
from debate_tui.registry import ROLES as REGISTERED_ROLES

ROLES = tuple(REGISTERED_ROLES)
"""The agent roles a `[roles]` table may give a model of their own (and `[generation.roles.R]` reply settings)."""

PREFIX = "DEBATE_TUI_"

SCOPE_TABLES = {Scope.MODELS: '[models."M"]', Scope.ROLES: "[generation.roles.R]", Scope.GENERATION: "[generation]"}
"""Where each configured place of a reply setting is written in config.toml."""


@dataclass(frozen=True)
class Origin:
    """Where a configured value came from, as data: its kind and which flag, variable or file."""

    kind: Literal["flag", "environment", "file", "default"]
    detail: str = ""
    """The flag (--timeout), the variable (DEBATE_TUI_TIMEOUT) or the file's path."""

    @property
    def layer(self) -> Layer:
        """Its precedence layer (`precedence.ORDER`)."""
        return {"flag": Layer.TYPED, "environment": Layer.ENVIRONMENT, "file": Layer.CONFIG_FILE}.get(
            self.kind, Layer.DEFAULT)

    def __str__(self) -> str:
        """As a person reads it: "flag --timeout", "environment variable DEBATE_TUI_TIMEOUT", "file", "default"."""
        return {"flag": f"flag {self.detail}", "environment": f"environment variable {self.detail}"}.get(
            self.kind, self.kind)


FILE = Origin("file")
DEFAULT = Origin("default")


def env_var(name: str) -> str:
    """The one environment naming: setting `max_cost` is DEBATE_TUI_MAX_COST."""
    return f"{PREFIX}{name.upper()}"


def flag(name: str) -> str:
    """The one flag naming: setting `max_cost` is --max-cost (argparse destination `max_cost`)."""
    return f"--{name.replace('_', '-')}"


@dataclass(frozen=True)
class Setting:
    """One setting. Its value is taken from the first layer that gives it, in `precedence.ORDER` (a reply
    setting's: `precedence.REPLY_ORDER`)."""

    name: str
    """The one name: argparse destination, flag (`flag`), environment variable (`env_var`)."""
    toml: tuple[str, ...]
    """Where it is written in config.toml: `("limits", "timeout")` is `[limits]` timeout."""
    doc: str
    """What it is, as config.toml's reference and the schema's description say it."""
    kind: Callable[[str], Any] | None = None
    """How a flag's text becomes a value (int, float; None: kept as text)."""
    metavar: str | None = None
    help: str | None = None
    """The flag's help; None: a setting only a file or a variable gives (a flag of `config show` still sets it)."""
    bounds: tuple[tuple[str, float], ...] = ()
    """Pydantic's constraints, e.g. `(("ge", 0), ("le", 2))`."""
    layers: tuple[Scope, ...] = ()
    """The more specific configured places that may set it too (reply settings, `precedence.SCOPES`)."""
    form: str | None = None
    """The setup form's input id, where the form offers it."""
    form_label: str = ""
    """The setup form's label of that input."""
    placeholder: str = ""
    """What the form's empty input says it leaves to the default."""
    elsewhere: str | None = None
    """A flag with its own help, declared by the task flags (`--model`), or the one command that takes the
    setting's own flag (`batch`: `--concurrency`, `--cache-dir`)."""
    example: str = ""
    """Its value as TOML in the starter config (`config init`), commented out."""

    @property
    def flags(self) -> str:
        """The flag commands take, for the reference; empty where only `config show` takes one."""
        return self.flag if self.help is not None else self.elsewhere or ""  # (a command's name comes with help)

    @property
    def input_type(self) -> Literal["integer", "number", "text"]:
        """The form input's type, from how a flag's text becomes a value."""
        return "integer" if self.kind is int else "number" if self.kind is float else "text"

    @property
    def env(self) -> str:
        return env_var(self.name)

    @property
    def flag(self) -> str:
        return flag(self.name)

    def constraints(self) -> dict[str, Any]:
        return dict(self.bounds)

    def field(self, default: Any = None) -> Any:
        """Its pydantic field: the default, the bounds and the description, at every layer that has it."""
        from pydantic import Field  # here: the table itself is read before pydantic is imported

        return Field(default, description=self.doc, **self.constraints())

    def described(self) -> str:
        """Its bounds in words, for a help text and the reference ("at least 0, at most 2")."""
        words = {"gt": "above", "ge": "at least", "lt": "below", "le": "at most"}
        return ", ".join(f"{words[key]} {value:g}" for key, value in self.bounds)


POSITIVE = (("gt", 0),)
DEFAULT_CONCURRENCY = 8
"""Batch items in flight at once unless `--concurrency` or `[limits]` says otherwise."""

REPLY = (
    Setting("max_reply_tokens", ("generation", "max_reply_tokens"),
            "Tokens one reply may have, sent as max_tokens and enforced on the stream; unset: per role, 512 "
            "(a MATEval evaluator 768, a summarizer 1,536).",
            int, "N", "tokens one reply may have: sent as max_tokens and enforced on the stream (default per role: "
            "512, a MATEval evaluator 768, a summarizer 1536); over a model's and a role's own max_reply_tokens "
            "in config.toml", POSITIVE, (Scope.ROLES, Scope.MODELS), "max-reply-tokens",
            "reply cap", "tokens per reply (default 512; evaluator 768, summarizer 1536)", example="512"),
    Setting("temperature", ("generation", "temperature"),
            "Sampling temperature; unset: 0 for judging turns, 1 for the single judge's `--samples` above 1.",
            float, "T", "sampling temperature (default 0 for judging turns; the single judge with --samples above 1 "
            "keeps 1); over a model's and a role's own temperature in config.toml",
            (("ge", 0), ("le", 2)), (Scope.ROLES, Scope.MODELS), "temperature",
            "temperature", "0 for judging (default)", example="0.0"),
)
"""The reply settings: one schema (`generation.ReplySettings`) at every layer they have."""

GENERATION = (*REPLY, Setting(
    "structured", ("generation", "structured"),
    'Ask the answer line as a small JSON object: "auto" where the provider can constrain it to a schema (litellm '
    "says so, or your own server takes one), true also from a hosted model litellm does not know.",
    None, "{auto,on,off}",
    "ask the answer again as a small JSON object constrained to a schema: auto where the free text gives none (in "
    "place of the reminder), on (the flag alone) on every answer, off never; default: auto where every model is "
    "served from your own api_base, else off; asked of a model litellm says takes a schema and of your own server "
    "(--api-base), else free text (the session records which)", form="structured", form_label="JSON answers",
    placeholder="as configured", example="false"))
"""`[generation]`: the reply settings and the answer format (the flags of `add_generation_arguments`)."""

LIMITS = (
    Setting("max_cost", ("limits", "max_cost"), "Budget of one run in US dollars; unset: no limit.", float, "USD",
            "stop (status cancelled) before a call would take the run's cost past USD", POSITIVE, example="1.0"),
    Setting("max_tokens", ("limits", "max_tokens"),
            "Budget of one run in tokens (prompt and completion); unset: no limit.", int, "N",
            "stop (status cancelled) before a call would take the run past N tokens", POSITIVE, example="200000"),
    Setting("timeout", ("limits", "timeout"),
            "Seconds one model call may take, streaming included: at this deadline the reply so far is kept.",
            float, "SECONDS", "wall-clock deadline of each model call, streaming included: the connection is closed "
            "and the reply so far kept, marked as cut off at the deadline (default 120)", POSITIVE, example="120.0"),
    Setting("retries", ("limits", "retries"), "Attempts per model call, the first included.", int, "N",
            "attempts per model call, the first included (default 4)", (("ge", 1), ("le", 20)), example="4"),
    Setting("retry_delay", ("limits", "retry_delay"),
            "Seconds before the first retry, doubled for each next one (a server's Retry-After wins).",
            float, bounds=(("ge", 0), ("le", 60)), example="1.0"),
    Setting("concurrency", ("limits", "concurrency"),
            "Items in flight at once in batch runs (each item's calls follow one another, or run in parallel where "
            "a protocol's agents speak at once).", int, "N",
            f"items in flight at once (default: limits.concurrency in config.toml, else {DEFAULT_CONCURRENCY})",
            (("ge", 1), ("le", 256)), elsewhere="batch", example=str(DEFAULT_CONCURRENCY)),
)
"""`[limits]`: what one run may spend, and how calls are timed and retried (the flags of `add_limit_arguments`
are those with help that no one command takes alone; `batch` takes --concurrency)."""

TOP = (
    Setting("model", ("default_model",),
            "The litellm model every agent uses unless its role has one; unset: the offline demo model.",
            elsewhere="--model", example='"gpt-4o-mini"'),
    *(Setting(f"{role}_model", ("roles", role), f"The model of the {role.replace('_', '-')} role.") for role in ROLES),
    Setting("protocol", ("protocol",), "The evaluation protocol used when none is given: debate, chateval, mateval, "
            "scaleeval or single.", elsewhere="--protocol", example='"debate"'),
    Setting("personas_dir", ("personas_dir",), "A directory of your own persona TOML files.",
            example='"~/debate-tui/personas"'),
    Setting("criteria_dir", ("criteria_dir",), "A directory of your own criteria TOML files.",
            example='"~/debate-tui/criteria"'),
    Setting("sessions_dir", ("sessions_dir",), "Where session files (and their reports) are saved.", metavar="DIR",
            help="sessions directory (default: sessions_dir in config.toml or DEBATE_TUI_SESSIONS_DIR, else the user "
                 "data dir)", example='"~/debates"'),
    Setting("export_dir", ("export_dir",),
            "Where the TUI's export dialog offers to write (the path stays editable); unset: the current directory.",
            example='"~/debate-reports"'),
    Setting("cache_dir", ("cache_dir",), "Where the response cache lives.", metavar="DIR",
            help="response cache (default: cache_dir in config.toml, else the user cache dir)", elsewhere="batch",
            example='"~/.cache/debate-tui"'),
    Setting("theme", ("theme",), "The TUI theme by name, over the one last picked in the TUI; unset: the TUI's "
            "default.", example='"textual-dark"'),
)
"""Settings at the top of config.toml, and the role models of `[roles]` (their flags are the commands' own)."""

SETTINGS: dict[str, Setting] = {setting.name: setting for setting in (*TOP, *LIMITS, *GENERATION)}
"""Every setting that can be given outside the file, by name."""

OVERRIDES: dict[str, tuple[str, ...]] = {name: setting.toml for name, setting in SETTINGS.items()}
"""Name -> where it goes in config.toml (DEBATE_TUI_<NAME>, --<name>)."""


def reference_table() -> str:
    """The settings reference of docs/configuration.md, made from the table (`cli.reference --write` puts it)."""
    order = described(ORDER, SCOPE_TABLES)
    reply = described(REPLY_ORDER, {scope: f"`{table}`" for scope, table in SCOPE_TABLES.items()})
    rows = [f"Precedence (`debate_tui/precedence.py`), the first that sets a setting winning: {order}. "
            f"(config.toml under the remembered setup when it was saved before it.) A reply setting: {reply}.", "",
            "| setting (config.toml) | variable | flag | more specific layers | bounds | meaning |",
            "|---|---|---|---|---|---|"]
    for setting in SETTINGS.values():
        place = ".".join(setting.toml)
        layers = ", ".join(f"`{SCOPE_TABLES[layer]}`" for layer in setting.layers if layer is not Scope.GENERATION)
        shown_flag = f"`{setting.flags}`" if setting.flags else ""
        rows.append(f"| `{place}` | `{setting.env}` | {shown_flag} | {layers} | {setting.described()} | "
                    f"{setting.doc.replace('|', '/')} |")
    return "\n".join(rows) + "\n"
