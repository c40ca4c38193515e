"""Target 2, streaming: five agents streaming at once through litellm into the debate screen.

Measured: the whole app's CPU time per streamed chunk (process CPU, all
threads) while a 5-referee ChatEval simultaneous-talk debate (2 turns, 10
streams of about 215 chunks; 6 turns as fast as the server sends) streams
from the fake server through litellm into the debate screen on a real pty,
against a script that consumes the same streams (same server, replies, model
name and concurrency) with `litellm.acompletion(stream=True)` alone. The
server runs in its own process; both clients import litellm before the clock
starts. Twice: at 50 chunks a second per stream (a fast hosted model; the
UI's cost per frame is then shared by fewer chunks), and as fast as the
server sends; five pairs each, the median of the per-pair ratios reported.

The two sides of a pair run at the same time, against the same server: the
script waits, imported, until the app's first turn starts, then streams its
turns while the app streams its own. On this shared machine litellm's CPU per
chunk drifts by a sixth from one second to the next (as fast as the server
sends, whether a read finds one chunk or several swings it further), so two
runs one after the other differed by up to a third; run together they see the
same machine. After each pair the method is checked the same way with the
script against itself; the median of those checks should read 1.00x (it is
in the detail, with their range: the noise one pair carries).

The CPU window runs from the first chunk to the return of the last call, so
the app's work between turns (finishing a pane, saving the session) is
counted, as a person would pay for it; mounting the screen is not.

Key latency: in a run of the same debate on its own, `p` is typed into the
terminal every 150-300 ms while the panes stream; each press is timed
from the moment it is written to the pty to the moment the app hands the
terminal driver the first frame whose status line shows the new mode. A press
that changes nothing on screen within the next press's time counts as lost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import (
    KNOWN_MODEL,
    PYTHON,
    ROOT,
    Row,
    Section,
    emit,
    fake_server,
    median,
    percentile,
    quiet_env,
    work_dir,
)
from benchmarks.terminal import PtyRun

AGENTS = 5
TURNS = 2
FAST_TURNS = 6
"""As fast as the server sends, two turns stream in about three seconds: too short a sample on a shared machine
(pairs ranged 0.98-1.57x); six take about nine."""
LATENCY_S = 0.5
"""Before the first chunk: time for the debate screen to be mounted before the CPU window opens."""
CHUNK_DELAY_S = 0.02
"""About 50 chunks a second per stream, the pace of a fast hosted model."""
PARAGRAPH = ("The summary keeps the main event of the article and names the people involved, **but** it "
             "repeats one sentence and leaves out the date. ")
REPLY = ("Here is my assessment.\n\n" + "".join(f"Point {i}: {PARAGRAPH}\n\n" for i in range(1, 7))
         + "".join(f"- Detail {i}: {PARAGRAPH}\n" for i in range(1, 7)) + "\nOverall the text is readable.\n\nScore: 4")
"""About 1,800 characters of Markdown (paragraphs, a list, bold), i.e. some 230 chunks of 8 characters."""
REPLY_CAP = 1024
"""Each reply's max_tokens, app and script alike: above the reply's length (the fake server counts some 640
tokens), so every stream carries the whole reply and ends with its score. Under the app's default cap (512)
the server cut every reply and each referee was asked again for its score: other streams than the script's."""
SPEAKING = b"speaking"
"""On the status line as soon as an agent speaks: the debate is streaming."""
MAX_PRESSES = 80
TEXT = ("The city council approved the new budget on Monday. The budget raises spending on schools. "
        "The budget raises spending on schools. Critics said the plan ignores public transport.")


# ----- the baseline: litellm alone ------------------------------------------------------------


async def litellm_alone(url: str, turns: int) -> dict:
    from debate_tui.llm.litellm_client import load_litellm

    litellm = load_litellm()
    messages = [{"role": "user", "content": f"Judge the coherence of this text.\n\n{TEXT}"}]
    chunks = 0
    started: list[float] = []

    async def one() -> None:
        nonlocal chunks
        stream = await litellm.acompletion(model=KNOWN_MODEL, messages=messages, api_base=url, stream=True,
                                           stream_options={"include_usage": True}, timeout=60, num_retries=0,
                                           max_tokens=REPLY_CAP)
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                if not started:
                    if PROFILER is not None:
                        PROFILER.start()
                    started.extend((time.process_time(), time.perf_counter(), time.thread_time()))
                chunks += 1

    for _ in range(turns):
        await asyncio.gather(*(one() for _ in range(AGENTS)))
    if PROFILER is not None:
        PROFILER.stop()
    return {"cpu_s": time.process_time() - started[0], "wall_s": time.perf_counter() - started[1], "chunks": chunks,
            "loop_cpu_s": time.thread_time() - started[2]}


READY = "ready"
"""What a waiting script prints once litellm is imported."""


class WaitingScript:
    """The baseline in a child process: it imports litellm, says so, and streams its turns when told to go."""

    def __init__(self, url: str, turns: int, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [PYTHON, "-m", "benchmarks.streaming", "--litellm", url, "--turns", str(turns), "--wait"],
            env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdin is not None and self.process.stdout is not None
        if self.process.stdout.readline().strip() != READY:
            self.process.kill()
            _, err = self.process.communicate(timeout=10)
            raise RuntimeError(f"the litellm script did not start:\n{err[-3000:]}")

    def go(self) -> None:
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def result(self) -> dict:
        out, err = self.process.communicate(timeout=180)
        if self.process.returncode != 0 or not out.strip():
            raise RuntimeError(f"the litellm script failed ({self.process.returncode}):\n{err[-3000:]}")
        return json.loads(out.strip().splitlines()[-1])

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate(timeout=10)


# ----- the app ----------------------------------------------------------------------------------


class CountingClient:
    """Wraps the app's client: counts streamed chunks and notes CPU from the first chunk to the last call's end.

    The window opens at the first chunk, not the first call: mounting the debate screen and the
    first call's one-off imports inside litellm and openai are start-up, not streaming. The
    process's CPU (what the target compares), the UI thread's alone (what the app adds to
    litellm's work) and the calls' thread's (litellm's work and our client stack, to set against
    the script's own loop) are noted. `complete` runs in the calls' thread.
    """

    def __init__(self, inner) -> None:
        self.inner = inner
        self.chunks = 0
        self.ui_clock = time.pthread_getcpuclockid(threading.main_thread().ident)
        self.cpu_start: float | None = None
        self.ui_start = self.wall_start = self.calls_start = 0.0
        self.cpu_end = self.ui_end = self.wall_end = self.calls_end = 0.0

    def _open(self) -> None:
        if self.cpu_start is None:
            self.cpu_start, self.wall_start = time.process_time(), time.perf_counter()
            self.ui_start, self.calls_start = time.clock_gettime(self.ui_clock), time.thread_time()

    async def complete(self, request, on_delta=None):
        def counted(text: str) -> None:
            self._open()
            self.chunks += 1
            if on_delta is not None:
                on_delta(text)

        try:
            return await self.inner.complete(request, counted if on_delta is not None else None)
        finally:
            self.cpu_end, self.wall_end = time.process_time(), time.perf_counter()
            self.ui_end, self.calls_end = time.clock_gettime(self.ui_clock), time.thread_time()


def debate_args(url: str, text: Path, turns: int) -> list[str]:
    return ["tui", "--autostart", "--protocol", "chateval", "--strategy", "simultaneous-talk",
            "--agents", str(AGENTS), "--turns", str(turns), "--criteria", "coherence",
            "--max-reply-tokens", str(REPLY_CAP), "--model", KNOWN_MODEL, "--api-base", url, "--text", str(text)]


class FrameLog:
    """In the app: when each frame showing a new mode on the status line was handed to the terminal driver."""

    def __init__(self) -> None:
        self.rendered: str | None = None
        self.written: str | None = None
        self.changes: list[tuple[float, str]] = []

    def hook(self, app) -> None:
        from debate_tui.ui.widgets.status_line import StatusLine

        render, log = StatusLine.render, self

        def noting_render(status):
            log.rendered = status.mode
            return render(status)

        StatusLine.render = noting_render  # type: ignore[method-assign]
        driver = app._driver
        write = driver.write

        def noting_write(data: str) -> None:
            write(data)
            if log.rendered is not None and log.rendered != log.written:
                log.written = log.rendered
                log.changes.append((time.perf_counter(), log.rendered))

        driver.write = noting_write


async def app_run(url: str, text: Path, log_frames: bool, turns: int) -> dict:
    from debate_tui.cli import build_parser
    from debate_tui.cli.tui import tui_request
    from debate_tui.llm.litellm_client import load_litellm
    from debate_tui.llm.router import ModelRouter
    from debate_tui.llm.threaded import ThreadedClient
    from debate_tui.ui.app import DebateTUI
    from debate_tui.ui.launch import launch_from
    from debate_tui.ui.state import load_state

    load_litellm()  # its import is start-up's business, not streaming's
    client = CountingClient(ModelRouter())  # counts in the calls' thread, as the app composes its client
    threaded = ThreadedClient(client)
    request = tui_request(build_parser().parse_args(debate_args(url, text, turns)))
    app = DebateTUI(launch_from(request, load_state()), client=threaded)
    frames = FrameLog()
    async with app.run_test(headless=False, size=None):
        if log_frames:
            frames.hook(app)
        deadline = time.perf_counter() + 120
        while time.perf_counter() < deadline and not getattr(app.screen, "finished", False):
            if PROFILER is not None and client.cpu_start is not None and not PROFILER.is_running:
                PROFILER.start()  # here: it samples the thread that starts it, the UI's (the calls have their own)
            await asyncio.sleep(0.05)
        if PROFILER is not None and PROFILER.is_running:
            PROFILER.stop()
        status = app.screen.session.status if hasattr(app.screen, "session") else "?"
        await app.action_quit()
    threaded.close()
    return {"cpu_s": client.cpu_end - (client.cpu_start or 0.0), "wall_s": client.wall_end - client.wall_start,
            "ui_cpu_s": client.ui_end - client.ui_start, "calls_cpu_s": client.calls_end - client.calls_start,
            "chunks": client.chunks, "status": status, "frames": frames.changes,
            "window": [client.wall_start, client.wall_end]}


# ----- the measurement --------------------------------------------------------------------------


def run_app_on_pty(url: str, work: Path, keys: bool, turns: int = TURNS,
                   on_streaming: Callable[[], None] | None = None) -> dict:
    """The app's run on a pty; `on_streaming` is called when its first turn starts."""
    text, out = work / "text.txt", work / f"app-{'keys' if keys else 'cpu'}.json"
    text.write_text(TEXT)
    argv = [PYTHON, "-m", "benchmarks.streaming", "--app", url, "--text", str(text), "--out", str(out),
            "--turns", str(turns)]
    run = PtyRun(argv + (["--frames"] if keys else []), quiet_env(work), cwd=ROOT, markers=[SPEAKING])
    presses: list[float] = []
    try:
        if on_streaming is not None and run.wait_for(SPEAKING, timeout=60) is not None:
            on_streaming()
        if keys:
            presses = press_keys(run)
        code = run.wait(timeout=180)
    finally:
        run.close()
    if code != 0 or not out.exists():
        tail = bytes(run.output[-3000:]).decode(errors="replace")
        raise RuntimeError(f"the streaming app run failed ({code}):\n{tail}")
    result = json.loads(out.read_text())
    if result["status"] != "completed":
        raise RuntimeError(f"the streamed debate ended {result['status']}")
    result["latencies"] = match_presses(presses, result["frames"], result["window"])
    return result


def press_keys(run: PtyRun) -> list[float]:
    """Type p into the terminal every 150-300 ms while the panes stream; when each was typed.

    Each press flips the mode (paused, auto, paused, ...), so each must show as a new mode.
    """
    if run.wait_for(SPEAKING, timeout=60) is None:
        return []
    rng, sent = random.Random(7), []
    while run.process.poll() is None and len(sent) < MAX_PRESSES:
        sent.append(time.perf_counter())
        run.send(b"p")
        time.sleep(rng.uniform(0.15, 0.3))
    return sent


def match_presses(presses: list[float], frames: list[list], window: list[float]) -> list[float]:
    """Seconds from each press typed while streaming to the first frame after it showing a new mode.

    A press whose change never shows before the next press is lost: its latency is infinite.
    perf_counter is the system's monotonic clock on Linux, the same in both processes.
    """
    latencies = []
    for index, sent in enumerate(presses):
        if not window[0] <= sent <= window[1]:
            continue
        before = presses[index + 1] if index + 1 < len(presses) else float("inf")
        shown = next((at for at, _ in frames if sent <= at < before), None)
        latencies.append(float("inf") if shown is None else shown - sent)
    return latencies


def per_chunk(result: dict, clock: str = "cpu_s") -> float:
    """Seconds of `clock` (the process's CPU, or one thread's: "ui_cpu_s", "calls_cpu_s", "loop_cpu_s") a chunk."""
    return result[clock] / result["chunks"]


def side_by_side(url: str, work: Path, env: dict[str, str], turns: int) -> tuple[dict, dict]:
    """One pair: the app and the litellm script streaming the same debate's turns at the same time."""
    script = WaitingScript(url, turns, env)
    try:
        app = run_app_on_pty(url, work, keys=False, turns=turns, on_streaming=script.go)
        return app, script.result()
    finally:
        script.close()


def script_against_itself(url: str, env: dict[str, str], turns: int) -> float:
    """The method's check: two litellm scripts measured the way a pair is; the ratio of their CPU per chunk."""
    first, second = WaitingScript(url, turns, env), WaitingScript(url, turns, env)
    try:
        first.go()
        second.go()
        return per_chunk(first.result()) / per_chunk(second.result())
    finally:
        first.close()
        second.close()


def cpu_ratio(url: str, work: Path, env: dict[str, str], repeats: int, turns: int = TURNS) -> tuple[float, str]:
    """The median over `repeats` pairs of (app CPU per chunk) / (litellm alone CPU per chunk), and the figures.

    Each pair is followed by the method's check (the script against itself), so both see the same stretch
    of the machine's weather.
    """
    ratios, checks, app_ms, ui_ms, calls_ms, loop_ms, base_ms, rates, chunks = [], [], [], [], [], [], [], [], 0
    for _ in range(repeats):
        app, base = side_by_side(url, work, env, turns)
        checks.append(script_against_itself(url, env, turns))
        ratios.append(per_chunk(app) / per_chunk(base))
        app_ms.append(per_chunk(app) * 1000)
        ui_ms.append(per_chunk(app, "ui_cpu_s") * 1000)
        calls_ms.append(per_chunk(app, "calls_cpu_s") * 1000)
        loop_ms.append(per_chunk(base, "loop_cpu_s") * 1000)
        base_ms.append(per_chunk(base) * 1000)
        rates.append(app["chunks"] / app["wall_s"])
        chunks = app["chunks"]
    return median(ratios), (f"{median(app_ms):.3f} vs {median(base_ms):.3f} ms CPU/chunk (UI thread "
                            f"{median(ui_ms):.3f}; the calls' thread {median(calls_ms):.3f} against the script's "
                            f"loop {median(loop_ms):.3f}); {chunks} chunks at {median(rates):.0f}/s; median of "
                            f"{repeats} pairs run at the same time ({spread(ratios)}); the script against itself the "
                            f"same way {median(checks):.2f}x ({spread(checks)})")


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}x"


def measure(repeats: int = 5) -> Section:
    with work_dir("streaming") as work:
        env = quiet_env(work)
        with fake_server(latency=LATENCY_S, chunk_delay=CHUNK_DELAY_S, reply=REPLY) as url:
            paced, paced_detail = cpu_ratio(url, work, env, repeats)
            keyed = run_app_on_pty(url, work, keys=True)
        with fake_server(latency=LATENCY_S, chunk_delay=0.0, reply=REPLY) as url:
            flat_out, flat_out_detail = cpu_ratio(url, work, env, repeats, FAST_TURNS)
    latencies = [s * 1000 for s in keyed["latencies"]]
    lost = sum(1 for value in latencies if value == float("inf"))
    p50, p95 = (percentile(latencies, 0.5), percentile(latencies, 0.95)) if latencies else (float("nan"),) * 2
    return Section([
        Row("2 streaming", f"app CPU per chunk, {AGENTS} agents streaming into the debate screen, "
                           f"{1 / CHUNK_DELAY_S:.0f} chunks/s per stream", "litellm alone, same streams",
            paced, "<= 1.2x", paced <= 1.2, paced_detail),
        Row("2 streaming", "the same, streams as fast as the server sends", "litellm alone, same streams",
            flat_out, "<= 1.2x", flat_out <= 1.2, flat_out_detail),
        Row("2 streaming", f"key press to frame while streaming ({1 / CHUNK_DELAY_S:.0f} chunks/s per stream), "
                           "p50 / p95", "100 ms", None, "p95 < 100 ms", bool(latencies) and p95 < 100,
            f"{len(latencies)} presses of p, {lost} never shown (counted as infinite)",
            value=f"{p50:.0f} / {p95:.0f} ms"),
    ])


PROFILER = None
"""A pyinstrument Profiler when a profile is asked for; started at the first model call (imports are not streaming)."""


def profiled(path: Path | None, work):
    """Run `work`, under pyinstrument when a profile is asked for (pyinstrument is for profiling sessions only)."""
    global PROFILER
    if path is None:
        return work()
    from pyinstrument import Profiler

    profiler = PROFILER = Profiler(interval=0.001, async_mode="disabled")
    try:
        return work()
    finally:
        if profiler.is_running:
            profiler.stop()
        if path.suffix == ".pyisession":
            profiler.last_session.save(str(path))
        else:
            path.write_text(profiler.output_text(unicode=True, show_all=False))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.streaming")
    parser.add_argument("--litellm", metavar="URL", help="child: consume the streams with litellm alone")
    parser.add_argument("--wait", action="store_true", help="child: once litellm is imported, print ready and "
                                                            "stream only after a line on stdin")
    parser.add_argument("--app", metavar="URL", help="child: run the debate in the TUI (on a pty)")
    parser.add_argument("--text", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--frames", action="store_true", help="child: log when frames show a new mode")
    parser.add_argument("--turns", type=int, default=TURNS,
                        help="child: turns of the debate (each streams once per agent)")
    parser.add_argument("--profile", type=Path, help="child: write a pyinstrument profile of the app run here")
    args = parser.parse_args(argv)
    if os.environ.get("BENCH_EXPERIMENT"):  # a profiling session's what-if, never part of the benchmark
        exec(Path(os.environ["BENCH_EXPERIMENT"]).read_text(), {})
    if args.litellm:
        if args.wait:
            from debate_tui.llm.litellm_client import load_litellm

            load_litellm()
            print(READY, flush=True)
            sys.stdin.readline()
        emit(profiled(args.profile, lambda: asyncio.run(litellm_alone(args.litellm, args.turns))))
    elif args.app:
        result = profiled(args.profile, lambda: asyncio.run(app_run(args.app, args.text, args.frames, args.turns)))
        args.out.write_text(json.dumps(result))
    else:
        for row in measure().rows:
            print(row.cells())


if __name__ == "__main__":
    main(sys.argv[1:])
