"""Peak memory of one call against a server whose reply is a gzip bomb, 1 GB long, or one endless SSE line.

Each case runs in a child process: litellm imported and one ordinary call made
first (its buffers, pools and caches are the baseline), then the peak-RSS mark
is reset (Linux: `/proc/self/clear_refs`) and the hostile call made through
`LiteLLMClient`, plain (as a batch calls) or streamed (as `run` and the TUI
do). The figure is the peak RSS during that call minus the RSS before it. The
fake server runs in a process of its own, so its memory is not counted. Before
the byte bound, the same calls took 2.3 GB (gzip bomb), 3.3 GB (1 GB plain
reply) and filled a 4 GB cap (endless line).

    python -m benchmarks --only hostile_replies
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from benchmarks.common import Row, Section, emit, fake_server, quiet_env, run_child, work_dir

CASES = (("gzip_bomb", False), ("gzip_bomb", True), ("huge", False), ("endless_line", True))
LIMIT_MB = 64
"""The target: one call's peak within tens of MB."""


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def child(url: str, fault: str, stream: bool) -> None:
    """One warm-up call, then the hostile one; prints the figures as JSON."""
    from debate_tui.llm.base import ChatRequest, LLMError
    from debate_tui.llm.litellm_client import LiteLLMClient

    client = LiteLLMClient(timeout_s=120)
    on_delta = (lambda delta: None) if stream else None

    def request(text: str) -> ChatRequest:
        return ChatRequest("openai/fake-model", [{"role": "user", "content": text}], {"api_base": url})

    async def calls() -> tuple[int, int, str, float]:
        await client.complete(request("warm up"), on_delta)
        before = _status_kib("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # the peak mark starts again from the current RSS
        started = time.perf_counter()
        try:
            await client.complete(request(f"hostile {fault}"), on_delta)
            ended = "no error"
        except LLMError as exc:
            ended = f"{exc.kind}: {exc}"
        return before, _status_kib("VmHWM"), ended, time.perf_counter() - started

    before, peak, ended, seconds = asyncio.run(calls())
    emit({"before_mb": before / 1024, "peak_mb": peak / 1024, "error": ended, "seconds": seconds})


def measure() -> Section:
    rows = []
    with work_dir("hostile-replies-") as work:
        env = quiet_env(work)
        for fault, stream in CASES:
            rules = [{"match": "hostile", "fault": fault}]
            with fake_server(rules=rules, work=work) as url:
                result = run_child("hostile_replies", [url, fault, "stream" if stream else "plain"], env)
            grown = result["peak_mb"] - result["before_mb"]
            how = "streamed" if stream else "plain"
            rows.append(Row(f"bounded reply: {fault} ({how})", f"{grown:.1f} MB over {result['before_mb']:.0f} MB",
                            "", None, f"<= {LIMIT_MB} MB", grown <= LIMIT_MB and "passed" in result["error"],
                            f"{result['error']}; {result['seconds']:.2f} s", value=f"{grown:.1f} MB"))
    return Section(rows)


if __name__ == "__main__":
    if len(sys.argv) == 4:
        child(sys.argv[1], sys.argv[2], sys.argv[3] == "stream")
    else:
        for row in measure().rows:
            print(" | ".join(row.cells()))
