"""A batch's event loop: uvloop's where it is installed, asyncio's own where it is not (Windows); on uvloop, the
default executor's work (litellm building each call) runs on the loop's thread."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from debate_tui.batch import loop
from debate_tui.batch.runner import BatchRun
from tests.helpers.batch import model_args, run_batch, write_items
from tests.helpers.scripts import agreeing_debate


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop is not built for Windows")
def test_a_batch_runs_every_item_on_uvloops_loop(capsys, llm_server, tmp_path, monkeypatch):
    loops: list[str] = []
    real_one = BatchRun._one

    async def recording(self, item, criteria):
        loops.append(type(asyncio.get_running_loop()).__module__.split(".")[0])
        await real_one(self, item, criteria)

    monkeypatch.setattr(BatchRun, "_one", recording)
    agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 3), tmp_path / "out.jsonl"
    code, summary, _ = run_batch(capsys, str(items), "--out", str(out), *model_args(llm_server))
    assert code == 0 and summary["done"] == 3 and loops == ["uvloop"] * 3


def test_without_uvloop_the_standard_loop_is_used(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvloop", None)  # an import of it now fails, as where it is not installed
    assert loop.loop_factory() is None
    with asyncio.Runner(loop_factory=loop.loop_factory()) as runner:
        assert runner.run(asyncio.sleep(0, "ran")) == "ran"
        assert type(runner.get_loop()).__module__.startswith("asyncio")


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop is not built for Windows")
def test_a_batchs_calls_are_built_on_the_loops_own_thread(capsys, llm_server, tmp_path, monkeypatch):
    """litellm hands each call's first part to the default executor: in a batch that runs on the loop's thread,
    and the calls (real litellm against the fake server) still come back."""
    threads: list[bool] = []
    real_one = BatchRun._one

    async def recording(self, item, criteria):
        ran_on = await asyncio.get_running_loop().run_in_executor(None, threading.get_ident)
        threads.append(ran_on == threading.get_ident())
        await real_one(self, item, criteria)

    monkeypatch.setattr(BatchRun, "_one", recording)
    agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 3), tmp_path / "out.jsonl"
    code, summary, _ = run_batch(capsys, str(items), "--out", str(out), *model_args(llm_server))
    assert code == 0 and summary["done"] == 3 and threads == [True] * 3


async def test_the_inline_executor_gives_back_the_result_or_the_error():
    with loop.InlineExecutor() as inline:
        assert inline.submit(threading.get_ident).result() == threading.get_ident()
        with pytest.raises(ZeroDivisionError):
            inline.submit(divmod, 1, 0).result()


def test_asyncios_own_loop_keeps_its_threads_it_looks_host_names_up_in_them():
    async def where() -> tuple[bool, int]:
        made = loop.run_calls_inline(asyncio.get_running_loop())
        return made, await asyncio.get_running_loop().run_in_executor(None, threading.get_ident)

    with asyncio.Runner() as runner:
        made, ident = runner.run(where())
    assert made is False and ident != threading.get_ident()


@pytest.mark.skipif(sys.platform == "win32", reason="no SIGTERM handlers on Windows")
def test_after_a_batch_ctrl_c_and_sigterm_reach_the_process_again(capsys, llm_server, tmp_path):
    """uvloop's remove_signal_handler leaves its handler, bound to the closed loop, installed: a process that went
    on after a batch (ladder_demo --serve) lost every Ctrl+C and SIGTERM."""
    import signal

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    agreeing_debate(llm_server)
    items, out = write_items(tmp_path / "in.jsonl", 1), tmp_path / "out.jsonl"
    code, _, _ = run_batch(capsys, str(items), "--out", str(out), *model_args(llm_server))
    assert code == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
