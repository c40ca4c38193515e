"""Who may choose where a key goes: one rule, applied by every path (run, batch, resume, `--policy`, the TUI, serve).

A person's own sources may choose an endpoint (an API base, a proxy, a certificate store, the folders whose files
name endpoints) and name a secret (`api_key_env`): the command line and the TUI's form (with the setup it remembers
in the person's own state folder), the process environment they set, and their own config.toml. Sources someone
else may have written may not: a session file, a trust policy, and what the working directory holds (its `.env`,
and so any config.toml that file would point to). What those ask for is not followed, and one line says so:

- a `.env` variable that chooses an endpoint or names a secret is not set (envfile.py);
- an agent read from a session file or a policy is given the person's own connection for its model
  (config.toml's `[models."M"]` api_base and api_key_env); when they configure no endpoint for that model but the
  file names one, the file's endpoint is called without any key (`NO_KEY`): none of the person's secrets goes there.

A session this program built from the person's own sources carries a seal: an HMAC of its agents' connections
with a key kept in the person's state folder (`seal`). A resume of a sealed session follows its connections as
they were made (the person chose them then); a session file without a valid seal came from elsewhere.

`may_steer_keys` is the one classifier; docs/RELIABILITY.md states the rule for people.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debate_tui.choices import CONNECTION
from debate_tui.locations import state_dir

if TYPE_CHECKING:
    from debate_tui.domain import AgentSpec, Session

SESSION_FILE = "session file"
OWN_SESSION = "your own session"
"""The origin of a sealed session file's connections (one this machine built from the person's own sources)."""
POLICY_FILE = "policy file"
ENV_FILE = ".env"
UNTRUSTED = (SESSION_FILE, POLICY_FILE, ENV_FILE)
"""How the sources that may not steer a key start their origin ("session file PATH"); every other origin
("command line", "environment variable NAME", "config.toml (PATH)", the remembered setup) may."""

NO_KEY = "no_key"
"""An agent parameter: this call sends no key (its endpoint came from a file), not even the provider's usual one."""
NO_KEY_VALUE = "no-key"
"""What goes in the Authorization header instead: a client library refuses to call without one."""
GENERATION_PARAMS = frozenset({"max_tokens", "temperature", "logprobs", "top_logprobs", "drop_params", "n"})
"""The agent parameters this product writes besides a connection: all a file's agent keeps of its own."""

_STEERING = re.compile(r"(?i)(API_BASE|BASE_URL|ENDPOINT|_URL$|_HOST$|PROXY|CA_BUNDLE|CERT_FILE|CERT_DIR|^SSL_|"
                       r"_CREDENTIALS_FILE$|_CONFIG_FILE$|^AWS_PROFILE$|_KEY_ENV$)")
_FOLDERS = frozenset({"DEBATE_TUI_CONFIG_DIR", "DEBATE_TUI_STATE_DIR"})
"""The folders whose files name endpoints and secrets (config.toml; the TUI's remembered setup)."""


def may_steer_keys(origin: str) -> bool:
    """Whether a value that came from `origin` may choose an endpoint or name a secret: the one classifier."""
    return not origin.startswith(UNTRUSTED)


def steers_keys(variable: str) -> bool:
    """Whether an environment variable chooses where calls go or which secret they carry (OPENAI_API_BASE,
    HTTPS_PROXY, SSL_CERT_FILE, AWS_PROFILE, DEBATE_TUI_CONFIG_DIR, ...), as opposed to holding a key or a setting."""
    return variable.upper() in _FOLDERS or bool(_STEERING.search(variable))


def admitted(variables: Iterable[str], origin: str) -> tuple[list[str], list[str]]:
    """The variables a file at `origin` may set, and those it may not (they choose an endpoint or name a secret)."""
    names = list(variables)
    refused = [name for name in names if steers_keys(name) and not may_steer_keys(origin)]
    return [name for name in names if name not in refused], refused


def own_connections(agents: Iterable[AgentSpec], origin: str, own: Callable[[str], Mapping[str, Any]]) -> list[str]:
    """Agents read from `origin` (a session file, a policy): where it may not steer a key, each agent keeps only its
    generation settings and takes the person's own connection for its model (`own`: model -> api_base and
    api_key_env from their config.toml); a file's endpoint they do not configure is called without any key.
    One line per model whose file asked for something else, for the person to read before the first call."""
    if may_steer_keys(origin):
        return []
    notes: dict[str, str] = {}
    for agent in agents:
        asked = {key: value for key, value in agent.params.items() if key not in GENERATION_PARAMS}
        mine = {key: value for key, value in own(agent.model).items() if key in CONNECTION and value}
        if asked.get("api_base") and "api_base" not in mine:
            mine = {"api_base": asked["api_base"], NO_KEY: True}
        agent.params = {**{k: v for k, v in agent.params.items() if k in GENERATION_PARAMS}, **mine}
        if asked != mine and asked:
            notes.setdefault(agent.model, _note(origin, agent.model, asked, mine))
    return list(notes.values())


def _note(origin: str, model: str, asked: Mapping[str, Any], given: Mapping[str, Any]) -> str:
    wanted = ", ".join(f"{key} {_shown(value)}" for key, value in asked.items())
    if given.get(NO_KEY):
        done = f"calling {given['api_base']} without any key (configure it in your config.toml to send one)"
    elif given:
        done = "using your own configuration for it (" + ", ".join(f"{k} {v}" for k, v in given.items()) + ")"
    else:
        done = "using the provider's own endpoint and key variable"
    kind = next(source for source in UNTRUSTED if origin.startswith(source))
    return f"{origin} asks {model} for {wanted}, which a {kind} may not choose: {done}"


def _shown(value: Any, most: int = 120) -> str:
    """A file's value as a line shows it: cut, so a file cannot fill the screen through it."""
    text = str(value)
    return text if len(text) <= most else text[:most] + "..."


def endpoint_lines(agents: Iterable[AgentSpec]) -> list[str]:
    """Where each model of a run will be called and with which key variable (its name, never the key)."""
    from debate_tui.llm import DEMO_MODEL

    lines: dict[str, str] = {}
    for agent in agents:
        if agent.model == DEMO_MODEL:
            continue
        params = agent.params
        key = ("no key" if params.get(NO_KEY) else f"the key in {params['api_key_env']}" if params.get("api_key_env")
               else "the provider's usual key variable")
        lines.setdefault(agent.model, f"{agent.model} calls {params.get('api_base') or 'its provider'} with {key}")
    return list(lines.values())


SEAL_KEY = "session-seal.key"
"""The file in the state folder holding this machine's seal key (32 random bytes, readable by the person only)."""


def seal(agents: Iterable[AgentSpec]) -> str | None:
    """The mark that these agents' connections came from the person's own sources; None when they name none (the
    demo model, a provider's defaults: nothing to vouch for) or no key can be kept."""
    text = _connections(agents)
    key = _seal_key(create=True) if text else None
    return None if key is None else _mark(key, text)


def session_origin(session: Session, path: Path) -> str:
    """Where a session file's connections come from, for `may_steer_keys`: the person's own when its seal holds."""
    text = _connections(session.agents)
    key = _seal_key(create=False) if text and session.seal else None
    if key is not None and session.seal is not None:
        from hmac import compare_digest

        if compare_digest(_mark(key, text), session.seal):
            return f"{OWN_SESSION} {path}"
    return f"{SESSION_FILE} {path}"


def resumed_connections(session: Session, path: Path, own: Callable[[str], Mapping[str, Any]]) -> list[str]:
    """Before a resume: a session file that is not the person's own gets their connections (`own_connections`),
    and is sealed as such; the lines say what it had asked for."""
    notes = own_connections(session.agents, session_origin(session, path), own)
    if notes:
        session.seal = seal(session.agents)
    return notes


def _mark(key: bytes, text: str) -> str:
    """HMAC-SHA256 of `text`; hashlib and hmac are imported here, so OpenSSL's loading (1.5 ms) stays out of the
    TUI's start-up, which reads this module for the names above."""
    import hashlib
    import hmac

    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def _connections(agents: Iterable[AgentSpec]) -> str:
    """What a seal covers: each agent's parameters beyond generation settings (its endpoint, key variable, ...)."""
    named = [[agent.name, agent.model, {k: v for k, v in agent.params.items() if k not in GENERATION_PARAMS}]
             for agent in agents]
    if not any(params for _, _, params in named):
        return ""
    return json.dumps(named, sort_keys=True, default=str)


def _seal_key(*, create: bool) -> bytes | None:
    path = state_dir() / SEAL_KEY
    try:
        with open(path, "rb") as handle:
            key = handle.read(64)
        return key if len(key) >= 32 else None
    except FileNotFoundError:
        if not create:
            return None
    except OSError:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:  # another process made it just now
        return _seal_key(create=False)
    except OSError:  # a read-only state folder: sessions go unsealed, and are resumed by the rule
        return None
    key = os.urandom(32)  # what secrets.token_bytes(32) returns
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
    return key
