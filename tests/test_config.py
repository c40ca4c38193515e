"""The configuration: precedence, validation, secrets refused, init and show, and what reads it."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from debate_tui.choices import Choices
from debate_tui.cli import main
from debate_tui.cli.config import STARTER
from debate_tui.config import Config, ConfigError, Limits, config_path, load_config, resolve_current
from debate_tui.engine.runner import RetryPolicy
from debate_tui.factory import option_defaults
from debate_tui.llm import DEFAULT_TIMEOUT_S, DEMO_MODEL
from debate_tui.llm.base import ChatRequest, LLMError
from debate_tui.llm.litellm_client import LiteLLMClient
from debate_tui.protocols import get_protocol
from debate_tui.resolver import resolve_choices
from tests.helpers import FAKE_KEY, REPO
from tests.helpers.batch import model_args, run_batch, write_items
from tests.helpers.cli import session_for, write_config


def setting(config: Config, dotted: str):
    value = config
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


# ----- precedence ------------------------------------------------------------------------

PRECEDENCE = [
    # setting, TOML for the file, environment variable, flag, (file, env, flag) values as read back
    ("default_model", 'default_model = "file-model"', "DEBATE_TUI_MODEL", "model",
     ("file-model", "env-model", "flag-model")),
    ("protocol", 'protocol = "chateval"', "DEBATE_TUI_PROTOCOL", "protocol", ("chateval", "single", "mateval")),
    ("limits.timeout", "[limits]\ntimeout = 30", "DEBATE_TUI_TIMEOUT", "timeout", (30.0, 20.0, 10.0)),
    ("limits.retries", "[limits]\nretries = 7", "DEBATE_TUI_RETRIES", "retries", (7, 3, 2)),
    ("limits.max_cost", "[limits]\nmax_cost = 2.5", "DEBATE_TUI_MAX_COST", "max_cost", (2.5, 1.5, 0.5)),
    ("sessions_dir", 'sessions_dir = "/file/sessions"', "DEBATE_TUI_SESSIONS_DIR", "sessions_dir",
     (Path("/file/sessions"), Path("/env/sessions"), Path("/flag/sessions"))),
]
ENV_VALUES = {"default_model": "env-model", "protocol": "single", "limits.timeout": "20", "limits.retries": "3",
              "limits.max_cost": "1.5", "sessions_dir": "/env/sessions"}
FLAG_VALUES = {"default_model": "flag-model", "protocol": "mateval", "limits.timeout": 10.0, "limits.retries": 2,
               "limits.max_cost": 0.5, "sessions_dir": "/flag/sessions"}


@pytest.mark.parametrize(("name", "toml", "env", "flag", "expected"), PRECEDENCE, ids=[p[0] for p in PRECEDENCE])
def test_flag_beats_environment_beats_file_beats_default(monkeypatch, name, toml, env, flag, expected):
    monkeypatch.delenv(env, raising=False)
    default = setting(Config(), name)
    assert setting(resolve_current({}).config, name) == default
    write_config(toml)
    assert setting(resolve_current({}).config, name) == expected[0]
    monkeypatch.setenv(env, ENV_VALUES[name])
    assert setting(resolve_current({}).config, name) == expected[1]
    resolved = resolve_current({flag: FLAG_VALUES[name]})
    assert setting(resolved.config, name) == expected[2]
    origin = resolved.origins[tuple(name.split("."))]
    assert (origin.kind, origin.detail, str(origin)) == ("flag", f"--{flag.replace('_', '-')}",
                                                         f"flag --{flag.replace('_', '-')}")


def test_an_empty_environment_variable_counts_as_unset(monkeypatch):
    write_config('default_model = "file-model"')
    monkeypatch.setenv("DEBATE_TUI_MODEL", "")
    assert load_config().default_model == "file-model"


def test_role_models_come_from_file_and_environment(monkeypatch):
    write_config('[roles]\ncritic = "file-critic"\nscorer = "file-scorer"')
    monkeypatch.setenv("DEBATE_TUI_CRITIC_MODEL", "env-critic")
    assert load_config().role_models() == {"scorer": "file-scorer", "critic": "env-critic"}


# ----- validation --------------------------------------------------------------------------

@pytest.mark.parametrize(("toml", "expected"), [
    ("[limits]\ntimeout = -1", "limits.timeout: Input should be greater than 0"),
    ('[limits]\nretries = "many"', "limits.retries: Input should be a valid integer"),
    ("[limits]\nretriez = 3", "limits.retriez: unknown setting"),
    ('protocol = "socratic"', "protocol: unknown protocol 'socratic'; valid: debate"),
    ('default_model = "gpt 4o"', "default_model: expected a litellm model string"),
    ('[models."openai/x"]\napi_base = "localhost:8000"',
     'models."openai/x".api_base: expected an http:// or https:// URL'),
    ('[models."openai/x"]\napi_key_env = "my key"',
     'models."openai/x".api_key_env: expected the NAME of an environment variable'),
    ('[keymap]\n"debate.pause" = ""', 'keymap."debate.pause": String should have at least 1 character'),
    ('personas_dir = "/no/such/dir"', "personas_dir: /no/such/dir is not a directory"),
    ("default_model = ", "not valid TOML"),
])
def test_a_bad_setting_is_named_with_the_file(toml, expected):
    path = write_config(toml)
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert str(caught.value).startswith(f"{path}: ")
    assert expected in str(caught.value)


def test_every_problem_is_listed_one_per_line():
    write_config('protocol = "x"\n[limits]\ntimeout = 0\nretries = 0')
    with pytest.raises(ConfigError) as caught:
        load_config()
    fields = [line.split(": ")[1] for line in str(caught.value).splitlines()]
    assert fields == ["protocol", "limits.timeout", "limits.retries"]


def test_a_bad_environment_variable_or_flag_is_named_as_such(monkeypatch):
    monkeypatch.setenv("DEBATE_TUI_RETRIES", "lots")
    with pytest.raises(ConfigError, match=r"^environment variable DEBATE_TUI_RETRIES: limits.retries: "):
        load_config()
    monkeypatch.delenv("DEBATE_TUI_RETRIES")
    with pytest.raises(ConfigError, match=r"^flag --timeout: limits.timeout: Input should be greater than 0"):
        resolve_current({"timeout": "-3"})


def test_commands_report_a_bad_config_and_exit_2(capsys, story_file):
    path = write_config("[limits]\ntimeout = 0")
    for argv in (["sessions"], ["run", "--text", str(story_file)], ["config", "show"], ["models"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"debate-tui: error: {path}: limits.timeout: Input should be greater than 0" in err


# ----- no keys in the file -----------------------------------------------------------------

SECRET = "sk-proj-abcdefghijklmnop0123456789"


@pytest.mark.parametrize(("toml", "where"), [
    ('[models."gpt-4o-mini"]\napi_key = "whatever-it-is"', 'models.gpt-4o-mini.api_key: a key setting is not allowed'),
    ('[models."gpt-4o-mini"]\napi_key_env = "' + SECRET + '"', 'api_key_env: the value looks like a key'),
    ('openai_token = "abc"', "openai_token: a key setting is not allowed"),
    ('[models."openai/x"]\napi_base = "https://proxy.example/v1?key=' + SECRET + '"',
     "api_base: the value looks like a key"),
    ('[models."' + SECRET + '"]\napi_base = "http://127.0.0.1:1/v1"', "this name looks like a key"),
])
def test_a_key_looking_setting_is_refused_without_showing_it(toml, where):
    path = write_config(toml)
    with pytest.raises(ConfigError) as caught:
        load_config()
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and where in message
    assert "Keys never go in the config file" in message and 'api_key_env = "OPENAI_API_KEY"' in message
    assert SECRET not in message and "whatever-it-is" not in message


# ----- init and show -----------------------------------------------------------------------

def test_init_writes_a_starter_that_loads_and_refuses_to_overwrite(capsys):
    assert main(["config", "path"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path == config_path() and not path.exists()
    without_file = load_config()
    assert main(["config", "init"]) == 0
    assert path.read_text() == STARTER
    assert load_config() == without_file
    path.write_text("# mine\n")
    assert main(["config", "init"]) == 2
    assert "--force" in capsys.readouterr().err and path.read_text() == "# mine\n"
    assert main(["config", "init", "--force"]) == 0 and path.read_text() == STARTER


def _settings(model: type[BaseModel], prefix: str = "") -> set[str]:
    names: set[str] = set()
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            names |= _settings(field.annotation, f"{prefix}{name}.")
        else:
            names.add(f"{prefix}{name}")
    return names


def test_the_starter_shows_every_setting_and_uncommented_it_still_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for folder in ("personas", "criteria"):
        (tmp_path / "debate-tui" / folder).mkdir(parents=True)
    uncommented = re.sub(r"(?m)^# (\S+ = .+|\[.+\])$", r"\1", STARTER)
    write_config(uncommented)
    config = load_config()
    assert config.default_model == "gpt-4o-mini" and config.limits.max_cost == 1.0
    assert config.models["openai/llama3.1"].api_key_env == "LOCAL_LLM_KEY"
    spec = resolve_choices(Choices(), resolve_current({}))
    assert option_defaults(get_protocol("debate"), spec) == {"rounds": 4, "critic_persona": "strictly-negative"}
    table, mentioned = "", set()
    for line in uncommented.splitlines():
        if line.startswith("["):
            table, *inner = line.strip("[]").split(".")
            if table == "generation" and inner:
                mentioned.add(f"generation.{inner[0]}")
        elif " = " in line and not line.startswith("#"):
            key = line.split(" = ")[0]
            mentioned.add(f"{table}.{key}" if table in ("roles", "limits", "generation") else table or key)
    assert _settings(Config) <= mentioned


def test_the_starter_names_each_declared_setting_s_variable_and_flag():
    from debate_tui.settings import ROLES, SETTINGS

    roles = {f"{role}_model" for role in ROLES}
    assert "DEBATE_TUI_<ROLE>_MODEL" in STARTER
    assert [s.env for s in SETTINGS.values() if s.name not in roles - {"critic_model"} and s.env not in STARTER] == []
    assert [s.flag for s in SETTINGS.values() if s.help and s.flag not in STARTER] == []


def test_show_prints_every_value_with_its_origin_and_no_key(capsys, monkeypatch, tmp_path):
    write_config(
        'default_model = "openai/fake-model"\n'
        'theme = "nord"\n'
        '[roles]\ncritic = "anthropic/claude-3-5-haiku-latest"\n'
        '[models."openai/fake-model"]\napi_base = "http://127.0.0.1:8000/v1"\napi_key_env = "FAKE_LLM_KEY"\n'
        '[protocols.debate]\nrounds = 2\n'
        '[keymap]\n"debate.pause" = "ctrl+space"\n'
        '[limits]\nretries = 2\n'
    )
    monkeypatch.setenv("FAKE_LLM_KEY", SECRET)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("DEBATE_TUI_TIMEOUT", "45")
    assert main(["config", "show", "--max-cost", "0.25"]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out and FAKE_KEY not in out
    for line in ('default_model = "openai/fake-model"  # file',
                 "timeout = 45.0  # environment variable DEBATE_TUI_TIMEOUT",
                 "max_cost = 0.25  # flag --max-cost",
                 "retry_delay = 1.0  # default",
                 '"debate.pause" = "ctrl+space"  # file',
                 "[protocols.debate]",
                 "#   openai/fake-model [default]: key FAKE_LLM_KEY (set), api_key_env of models.\"openai/fake-model\"",
                 "#   anthropic/claude-3-5-haiku-latest [critic]: key ANTHROPIC_API_KEY (NOT SET), "
                 "the provider's usual variable"):
        assert line in out.splitlines(), line
    shown = load_config_from_text(out, tmp_path)
    assert shown == resolve_current({"max_cost": 0.25}).config


def load_config_from_text(text: str, tmp_path: Path) -> Config:
    """Load `text` as if it were the config file, from a fresh config directory."""
    folder = tmp_path / "reloaded"
    folder.mkdir(exist_ok=True)
    (folder / "config.toml").write_text(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEBATE_TUI_CONFIG_DIR", str(folder))
        return load_config()


def test_init_then_show_round_trips(capsys, tmp_path):
    assert main(["config", "init"]) == 0
    capsys.readouterr()
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert "# file: " + str(config_path()) in out and "no model configured" in out
    assert load_config_from_text(out, tmp_path) == load_config()


def test_show_checks_protocol_options_against_the_protocol(capsys):
    path = write_config("[protocols.debate]\nrounds = 0\nroundz = 3")
    assert main(["config", "show"]) == 2
    assert f"{path}: protocols.debate.roundz: unknown option for debate" in capsys.readouterr().err
    write_config("[protocols.debate]\nrounds = 0")
    assert main(["config", "show"]) == 2
    assert f"{path}: protocols.debate.rounds: Input should be greater than or equal to 1" in capsys.readouterr().err


# ----- caching -----------------------------------------------------------------------------

def test_load_config_is_cached_until_the_file_or_environment_changes(monkeypatch):
    first = load_config()
    assert load_config() is first
    monkeypatch.setenv("DEBATE_TUI_TIMEOUT", "9")
    second = load_config()
    assert second is not first and second.limits.timeout == 9
    write_config("[limits]\nretries = 5")
    assert load_config().limits.retries == 5 and load_config() is load_config()


def test_loading_the_config_does_not_import_litellm():
    code = ("import sys, debate_tui.config as c; c.load_config(); "
            "assert 'litellm' not in sys.modules, 'litellm imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


# ----- what reads the configuration -------------------------------------------------------

MODELS_TOML = (
    'default_model = "openai/fake-model"\n'
    '[roles]\ncritic = "openai/fake-judge"\n'
    '[models."openai/fake-model"]\napi_base = "http://127.0.0.1:8000/v1"\napi_key_env = "FAKE_LLM_KEY"\n'
    '[models."openai/fake-judge"]\napi_base = "http://127.0.0.1:8001/v1"\n'
)


JUDGING = {"max_tokens": 512, "temperature": 0.0}
"""The built-in generation settings of a DEBATE agent: the default reply cap, temperature 0."""


def test_sessions_get_models_per_role_with_their_api_base_and_key_variable(story_file):
    write_config(MODELS_TOML)
    agents = {a.name: a for a in session_for("--text", str(story_file)).agents}
    assert agents["Scorer"].model == "openai/fake-model"
    assert agents["Scorer"].params == {"api_base": "http://127.0.0.1:8000/v1", "api_key_env": "FAKE_LLM_KEY",
                                       **JUDGING}
    assert agents["Critic"].model == "openai/fake-judge"
    assert agents["Critic"].params == {"api_base": "http://127.0.0.1:8001/v1", **JUDGING}


def test_flags_override_the_configured_models(story_file):
    write_config(MODELS_TOML)
    agents = {a.name: a for a in session_for("--text", str(story_file), "--model", "ollama/llama3.1",
                                             "--api-base", "http://127.0.0.1:9999").agents}
    assert agents["Scorer"].model == "ollama/llama3.1" and agents["Critic"].model == "openai/fake-judge"
    assert agents["Critic"].params == {"api_base": "http://127.0.0.1:9999", **JUDGING}
    demo = session_for("--text", str(story_file), "--demo").agents
    assert {a.model for a in demo} == {DEMO_MODEL} and all(a.params == JUDGING for a in demo)


def test_protocol_and_its_options_come_from_the_config_under_the_flags(story_file):
    write_config('protocol = "debate"\n[protocols.debate]\nrounds = 2\ncritic_persona = "plain"')
    session = session_for("--text", str(story_file), "--demo")
    assert session.protocol == "debate" and session.options["rounds"] == 2
    assert session.options["critic_persona"] == "plain"
    assert session_for("--text", str(story_file), "--demo", "--rounds", "3").options["rounds"] == 3
    path = write_config("[protocols.debate]\nrounds = 99")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: protocols.debate.rounds: ")):
        session_for("--text", str(story_file), "--demo")


def test_without_a_model_the_demo_hint_gives_the_two_lines_to_configure(story_file):
    warnings: list[str] = []
    session_for("--text", str(story_file), warnings=warnings)
    hint = "\n".join(warnings)
    assert "offline demo model" in hint and str(config_path()) in hint
    assert 'default_model = "gpt-4o-mini"' in hint and "export OPENAI_API_KEY=..." in hint


def test_retries_and_timeout_come_from_the_limits(monkeypatch):
    write_config("[limits]\nretries = 2\nretry_delay = 0.5\ntimeout = 7")
    policy = RetryPolicy.of(load_config().limits)  # read at the edge, handed down
    assert (policy.attempts, policy.base_delay_s) == (2, 0.5) and load_config().limits.timeout == 7
    assert LiteLLMClient(timeout_s=load_config().limits.timeout).timeout_s == 7
    assert LiteLLMClient().timeout_s == DEFAULT_TIMEOUT_S, "the client reads no configuration itself"
    monkeypatch.setenv("DEBATE_TUI_RETRIES", "5")
    monkeypatch.setenv("DEBATE_TUI_RETRY_DELAY", "0.01")
    policy = RetryPolicy.of(load_config().limits)
    assert (policy.attempts, policy.base_delay_s) == (5, 0.01)


def test_sessions_dir_comes_from_the_config_unless_the_environment_says(monkeypatch, tmp_path):
    write_config(f'sessions_dir = "{tmp_path / "from-file"}"')
    assert load_config().session_store().root == tmp_path / "sessions"  # conftest's DEBATE_TUI_SESSIONS_DIR
    monkeypatch.delenv("DEBATE_TUI_SESSIONS_DIR")
    assert load_config().session_store().root == tmp_path / "from-file"


async def test_the_key_is_read_from_the_named_variable_at_call_time(monkeypatch, llm_server):
    request = ChatRequest(model="openai/fake-model", messages=[{"role": "user", "content": "hi"}],
                          params={"api_base": llm_server.base_url, "api_key_env": "FAKE_LLM_KEY"})
    monkeypatch.delenv("FAKE_LLM_KEY", raising=False)
    with pytest.raises(LLMError) as caught:
        await LiteLLMClient(timeout_s=10).complete(request)
    assert caught.value.kind == "auth"
    assert str(caught.value) == "environment variable FAKE_LLM_KEY named in the config is not set"
    assert llm_server.calls == 0
    monkeypatch.setenv("FAKE_LLM_KEY", SECRET)
    assert (await LiteLLMClient(timeout_s=10).complete(request)).text == "Score: 3"
    assert llm_server.requests[0].has_auth and "api_key_env" not in llm_server.requests[0].body
    assert request.params == {"api_base": llm_server.base_url, "api_key_env": "FAKE_LLM_KEY"}


def test_the_starter_and_show_give_the_defaults_a_batch_runs_with(capsys, llm_server, tmp_path):
    """Issue 33 #10: `config show` and `config init` said concurrency 4 while batch ran 8 at once."""

    limits = STARTER.split("\n[limits]\n")[1].split("\n[")[0]
    shown = {key: tomllib.loads(f"v = {value}")["v"]
             for key, value in re.findall(r"(?m)^# (\w+) = (.+)$", limits)}
    defaults = Config().limits
    assert shown.keys() == Limits.model_fields.keys()
    for key, value in shown.items():  # a budget's example is no default: budgets are unset by default
        assert getattr(defaults, key) in (None, value), key
    assert main(["config", "show"]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("concurrency = ")]
    items, out = write_items(tmp_path / "in.jsonl", 1), tmp_path / "out.jsonl"
    code, summary, _ = run_batch(capsys, str(items), "--out", str(out), *model_args(llm_server))
    assert code == 0 and line == f"concurrency = {summary['concurrency']['max']}  # default"
    assert f"concurrency = {summary['concurrency']['max']}" in limits


def test_the_critic_persona_is_found_where_personas_are(story_file, tmp_path, monkeypatch):
    """Issue 33 #9: `--critic-persona editor.toml` and, with personas_dir, `--critic-persona editor` said
    "unknown persona" while `--personas` found both."""
    editor = tmp_path / "editor.toml"
    editor.write_text('[[persona]]\nname = "editor"\nrole_prompt = "You are a newspaper editor."\n')
    for flag in ("--critic-persona", "--personas"):
        critic = next(a for a in session_for("--text", str(story_file), "--demo", flag, str(editor)).agents
                      if a.role == "critic")
        assert critic.persona.role_prompt == "You are a newspaper editor.", flag
    write_config(f'personas_dir = "{tmp_path}"')
    for flag in ("--critic-persona", "--personas"):
        critic = next(a for a in session_for("--text", str(story_file), "--demo", flag, "editor").agents
                      if a.role == "critic")
        assert critic.persona.name == "editor", flag
    write_config(f'personas_dir = "{tmp_path}"\n[protocols.debate]\ncritic_persona = "editor"')
    critic = next(a for a in session_for("--text", str(story_file), "--demo").agents if a.role == "critic")
    assert critic.persona.name == "editor"


def test_export_dir_is_a_path_from_the_file_or_its_variable_and_unset_by_default(monkeypatch, tmp_path):
    assert load_config().export_dir is None
    write_config('export_dir = "~/exports"\n')
    assert load_config().export_dir == Path("~/exports").expanduser()
    monkeypatch.setenv("DEBATE_TUI_EXPORT_DIR", str(tmp_path / "out"))
    resolved = resolve_current({})
    assert resolved.config.export_dir == tmp_path / "out"
    assert str(resolved.origins[("export_dir",)]) == "environment variable DEBATE_TUI_EXPORT_DIR"


def test_the_starter_writes_each_setting_from_the_table_with_its_meaning_variable_and_flag():
    from debate_tui.settings import SETTINGS

    comments = " ".join(line.removeprefix("# ") for line in STARTER.splitlines() if line.startswith("# "))
    for setting in SETTINGS.values():
        if setting.toml[0] == "roles":
            continue  # the role models share one block of `[roles]`
        assert " ".join(setting.doc.split()) in comments, setting.name
        given = ", ".join(where for where in (setting.env, setting.flags) if where)
        assert f"({given})" in comments, setting.name
        assert f"\n# {setting.toml[-1]} = {setting.example}\n" in STARTER, setting.name
