"""`batch --shard i/n` and `batch merge`: every item in exactly one shard, shards joined exactly once."""

from __future__ import annotations

import json

import pytest

from debate_tui.batch.shards import Shard, ShardError, shard_of
from debate_tui.cli import main
from tests.helpers.batch import model_args, read_rows, run_batch, write_items
from tests.helpers.scripts import agreeing_debate


def test_shards_partition_ids_by_a_stable_hash_not_by_position():
    ids = [f"item-{i}" for i in range(1000)]
    parts = [Shard(i, 4).select([type("I", (), {"id": x})() for x in ids]) for i in range(1, 5)]
    seen = [item.id for part in parts for item in part]
    assert sorted(seen) == sorted(ids)  # each id in exactly one shard
    assert all(150 < len(part) < 350 for part in parts)  # spread, not all in one
    assert shard_of("abc", 4) == 3  # pinned: the same on every machine and Python (sha256, not hash())


@pytest.mark.parametrize("bad", ["0/4", "5/4", "1/0", "x/4", "2", "1/4/2", "-1/3"])
def test_a_bad_shard_is_refused(bad):
    with pytest.raises(ShardError, match="I/N"):
        Shard.parse(bad)


def test_bad_shard_flag_exits_2(capsys, llm_server, tmp_path, isolated_dirs):
    items = write_items(tmp_path / "in.jsonl", 3)
    code, _, err = run_batch(capsys, str(items), "--out", str(tmp_path / "o.jsonl"), *model_args(llm_server),
                             "--shard", "0/2")
    assert code == 2 and "--shard must be I/N" in err and llm_server.calls == 0


def test_shards_then_merge_equal_one_whole_batch(capsys, llm_server, tmp_path, isolated_dirs):
    agreeing_debate(llm_server)
    items = write_items(tmp_path / "in.jsonl", 12)
    outs = [tmp_path / f"shard{i}.jsonl" for i in (1, 2, 3)]
    for index, out in enumerate(outs, start=1):
        code, summary, _ = run_batch(capsys, str(items), "--out", str(out), *model_args(llm_server),
                                     "--shard", f"{index}/3")
        assert code == 0
    per_shard = [{r["id"] for r in read_rows(out)} for out in outs]
    assert sum(map(len, per_shard)) == 12 and set().union(*per_shard) == {f"i{i}" for i in range(12)}
    assert llm_server.calls == 12 * 2  # no item run twice
    assert [{r["shard"] for r in read_rows(out)} for out in outs] == [{"1/3"}, {"2/3"}, {"3/3"}]
    merged, again = tmp_path / "all.jsonl", tmp_path / "shard1-again.jsonl"
    again.write_bytes(outs[0].read_bytes())  # shard 1 run a second time
    code = main(["batch", "merge", *map(str, outs), str(again), "--out", str(merged)])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["items"] == 12 and summary["rows"] == 12 and summary["duplicates"] > 0
    rows = read_rows(merged)
    assert sorted(r["id"] for r in rows) == sorted(f"i{i}" for i in range(12))
    assert all(r["status"] == "completed" and r["predicted"] == 4 for r in rows)


def test_merge_refuses_a_file_named_twice_and_names_it(capsys, tmp_path):
    row = {"id": "a", "criterion": "coherence", "predicted": 4, "session": "s1", "status": "completed"}
    one, two, out = tmp_path / "1.jsonl", tmp_path / "2.jsonl", tmp_path / "m.jsonl"
    one.write_text(json.dumps(row) + "\n")
    two.write_text(json.dumps({**row, "id": "b"}) + "\n")
    assert main(["batch", "merge", str(one), str(two), str(one), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{one} named twice" in err and not out.exists()
    same = tmp_path / "." / "1.jsonl"  # the same file by another spelling
    assert main(["batch", "merge", str(one), str(two), str(same), "--out", str(out)]) == 2
    assert "named twice" in capsys.readouterr().err and not out.exists()


def test_merge_names_the_missing_shard_unless_partial_is_allowed(capsys, llm_server, tmp_path, isolated_dirs):
    agreeing_debate(llm_server)
    items = write_items(tmp_path / "in.jsonl", 9)
    outs = [tmp_path / f"shard{i}.jsonl" for i in (1, 2, 3)]
    for index, out in enumerate(outs, start=1):
        code, _, _ = run_batch(capsys, str(items), "--out", str(out), *model_args(llm_server), "--shard", f"{index}/3")
        assert code == 0
    merged = tmp_path / "all.jsonl"
    assert main(["batch", "merge", str(outs[0]), str(outs[2]), "--out", str(merged)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "shard 2/3 missing" in err and not merged.exists()
    assert main(["batch", "merge", str(outs[0]), str(outs[2]), "--out", str(merged), "--allow-partial"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["missing_shards"] == ["2/3"]
    assert {r["id"] for r in read_rows(merged)} == {r["id"] for out in (outs[0], outs[2]) for r in read_rows(out)}


def test_merge_refuses_a_conflict_and_writes_nothing(capsys, tmp_path):
    row = {"id": "a", "group": None, "criterion": "coherence", "predicted": 4, "human": None,
           "session": "s1", "status": "completed", "calls": 2}
    one, two, out = tmp_path / "1.jsonl", tmp_path / "2.jsonl", tmp_path / "m.jsonl"
    one.write_text(json.dumps(row) + "\n")
    two.write_text(json.dumps({**row, "session": "s2", "calls": 0}) + "\n")  # same judgment, other run
    assert main(["batch", "merge", str(one), str(two), "--out", str(out)]) == 0
    assert len(read_rows(out)) == 1
    capsys.readouterr()
    two.write_text(json.dumps({**row, "predicted": 2}) + "\n")
    out.unlink()
    assert main(["batch", "merge", str(one), str(two), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "conflict: id 'a' criterion 'coherence'" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_merge_prefers_a_result_to_a_failure_and_needs_an_existing_file(capsys, tmp_path):
    row = {"id": "a", "criterion": "coherence", "predicted": None, "status": "failed", "error": "boom"}
    one, two, out = tmp_path / "1.jsonl", tmp_path / "2.jsonl", tmp_path / "m.jsonl"
    one.write_text(json.dumps(row) + "\n")
    two.write_text(json.dumps({**row, "predicted": 3, "status": "completed", "error": None}) + "\n")
    assert main(["batch", "merge", str(one), str(two), "--out", str(out)]) == 0
    assert [r["status"] for r in read_rows(out)] == ["completed"]
    assert main(["batch", "merge", str(tmp_path / "nope.jsonl"), "--out", str(out)]) == 2
