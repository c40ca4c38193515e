"""End to end: `config init`, edit two settings, set one variable, and `run` reaches the server with no model flags."""

from __future__ import annotations

import json
from pathlib import Path

from debate_tui.cli import main
from debate_tui.config import config_path

SERVER_KEY = "sk-local-server-0123456789abcdef"


def test_a_configured_model_runs_a_debate_without_model_flags(capsys, monkeypatch, story_file, llm_server):
    assert main(["config", "init"]) == 0
    path = config_path()
    text = path.read_text()
    text = text.replace('# default_model = "gpt-4o-mini"', 'default_model = "openai/fake-model"')
    text = text.replace(
        '# [models."openai/llama3.1"]\n# api_base = "http://127.0.0.1:8000/v1"\n# api_key_env = "LOCAL_LLM_KEY"',
        f'[models."openai/fake-model"]\napi_base = "{llm_server.base_url}"\napi_key_env = "LOCAL_LLM_KEY"')
    path.write_text(text)
    monkeypatch.setenv("LOCAL_LLM_KEY", SERVER_KEY)
    monkeypatch.delenv("OPENAI_API_KEY")
    llm_server.add_rule("NO ISSUE", match="Criticise the score")
    llm_server.add_rule("Clear and ordered.\nScore: 4")
    capsys.readouterr()

    code = main(["run", "--text", str(story_file)])
    out, err = capsys.readouterr()
    summary = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and summary["status"] == "completed" and summary["scores"] == {"coherence": 4}
    assert "demo" not in err
    assert llm_server.calls == 2 and all(r.has_auth and r.model == "fake-model" for r in llm_server.requests)
    session_text = Path(summary["session_path"]).read_text()
    assert '"api_key_env": "LOCAL_LLM_KEY"' in session_text
    assert SERVER_KEY not in session_text and SERVER_KEY not in Path(summary["report"]).read_text()
