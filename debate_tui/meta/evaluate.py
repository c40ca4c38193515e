"""Meta-evaluation of batch results: how closely the judge follows the humans.

A results row is `{"id", "group"?, "criterion"?, "predicted", "human",
"predicted_verdict"?, "human_verdict"?, "swapped_verdict"?,
"predicted_errors"?, "human_errors"?}`; "human" may also be the input
line's `{criterion: number}` mapping, read at the row's criterion. Scores
are compared per criterion, MATEval's error types (REP, LINC, DCONT, ILC,
FER, total) included; verdicts against the human ones; located errors
against the annotated ones. Each row counts once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any, cast

from debate_tui.meta import stats
from debate_tui.meta.costs import format_protocols, protocols_block
from debate_tui.meta.jury import format_jury, jury_block
from debate_tui.meta.stats import METHODS, VERDICTS
from debate_tui.meta.vote import format_vote, vote_block

LEVELS = ("summary", "turn")

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
_ENUMERATION = re.compile(r"^\s*\d+[.)]\s*")
_WORD = re.compile(r"\w+")
_LETTER = re.compile(r"[^\W\d_]")
MIN_CONTAINED_WORDS = 3
"""A partial quote must have this many words to match the sentence that contains it."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def validate_row(row: Any) -> None:
    """Raise ValueError naming the first field of a results row that cannot be used."""
    if not isinstance(row, dict):
        raise ValueError(f"a results row must be a JSON object, got {type(row).__name__}")
    if row.get("predicted") is not None and not _is_number(row["predicted"]):
        raise ValueError(f"'predicted' must be a number or null, got {row['predicted']!r}")
    human = row.get("human")
    if isinstance(human, dict):
        human = human.get(row.get("criterion"))
    if human is not None and not _is_number(human):
        raise ValueError(f"'human' must be a number, null or {{criterion: number}}, got {row['human']!r}")
    for key in ("predicted_verdict", "human_verdict", "swapped_verdict"):
        if row.get(key) is not None and row[key] not in VERDICTS:
            raise ValueError(f"{key!r} must be one of {', '.join(VERDICTS)} or null, got {row[key]!r}")
    for key in ("predicted_errors", "human_errors"):
        spans = row.get(key)
        if spans is not None and (
            not isinstance(spans, list)
            or not all(isinstance(s, str) or (isinstance(s, dict) and isinstance(s.get("quote"), str)) for s in spans)
        ):
            raise ValueError(f"{key!r} must be a list of quotes or of {{'quote': ...}} objects")


def meta_evaluate(
    rows: Sequence[dict[str, Any]], level: str = "summary", *, bootstrap: int = 1000, seed: int = 0,
    by_protocol: bool = True,
) -> dict[str, Any]:
    """Correlations per criterion, verdict agreement, swap consistency and error location.

    Blocks other than "level" and "criteria" appear only when rows carry
    their fields. `bootstrap` is the number of resamples for the 95%
    intervals (0 for none); `seed` makes them reproducible. `by_protocol` adds
    "protocols" (cost per item, agreement per dollar; see costs) when rows name
    their protocol.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    for row in rows:
        validate_row(row)
    result: dict[str, Any] = {"level": level, "criteria": {}}
    for criterion, scored in _by_criterion(rows).items():
        pred = [r.get("predicted") for r in scored]
        human = [cast(float, _human(r)) for r in scored]  # _by_criterion kept rows with a human score only
        if level == "turn":
            result["criteria"][criterion] = stats.turn_level(pred, human, bootstrap=bootstrap, seed=seed)
        else:
            groups = [_group(r) for r in scored]
            result["criteria"][criterion] = stats.summary_level(pred, human, groups, bootstrap=bootstrap, seed=seed)
    judged = [r for r in rows if r.get("human_verdict") is not None]
    if judged:
        result["verdicts"] = _verdicts(judged)
    swapped = [r for r in rows if "swapped_verdict" in r]
    if swapped:
        result["position"] = stats.position_consistency(
            [(r.get("predicted_verdict"), r.get("swapped_verdict")) for r in swapped]
        )
    located = [r for r in rows if r.get("predicted_errors") is not None and r.get("human_errors") is not None]
    if located:
        result["errors"] = error_location(located)
    if (voted := vote_block(rows, level, bootstrap=bootstrap, seed=seed)) is not None:
        result["vote"] = voted
    if (jury := jury_block(rows)) is not None:
        result["jury"] = jury
    result = add_reasons(result, rows)
    if by_protocol and (runs := protocols_block(
        rows, lambda run: meta_evaluate(run, level, bootstrap=0, by_protocol=False))) is not None:
        result["protocols"] = runs
    return result


def _by_criterion(rows: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows with a criterion and a human score, by criterion in order of appearance."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        human = _human(row)
        if row.get("criterion") is not None and human is not None and math.isfinite(human):
            out.setdefault(str(row["criterion"]), []).append(row)
    return out


def _human(row: dict[str, Any]) -> float | None:
    human = row.get("human")
    return human.get(row.get("criterion")) if isinstance(human, dict) else human


def _group(row: dict[str, Any]) -> str:
    if row.get("group") is None:
        raise ValueError(f"summary level needs a 'group' on every scored row (row {row.get('id')!r}); use level 'turn'")
    return str(row["group"])


def _verdicts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Overall verdict agreement, plus ScaleEval's system-level agreement per group (scenario)."""
    out = stats.verdict_agreement([r.get("predicted_verdict") for r in rows], [r["human_verdict"] for r in rows])
    by_group: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("group") is not None and row.get("predicted_verdict") is not None:
            by_group.setdefault(str(row["group"]), []).append(row)
    if by_group:
        out["system_agreement_by_group"] = {
            g: stats.preferred([r["predicted_verdict"] for r in rs])
            == stats.preferred([r["human_verdict"] for r in rs])
            for g, rs in by_group.items()
        }
    return out


def located_sentences(spans: Iterable[str | dict[str, Any]]) -> set[str]:
    """The comparable form of located errors: a set of normalised sentences.

    Each quote (a string, or an object with a "quote") is split after
    sentence-ending punctuation, so a quote listing "1. A.2. B." gives two
    sentences; enumeration markers are dropped, then each sentence becomes
    its lower-cased words joined by single spaces (punctuation and quotes
    ignored). Pieces without a letter (bare numbers) are dropped.
    """
    out = set()
    for span in spans:
        quote = span["quote"] if isinstance(span, dict) else span
        for piece in _SENTENCE_END.split(quote):
            key = " ".join(_WORD.findall(_ENUMERATION.sub("", piece).lower()))
            if _LETTER.search(key):
                out.add(key)
    return out


def _matches(a: str, b: str) -> bool:
    """Same sentence, or one is a quote of at least MIN_CONTAINED_WORDS words inside the other."""
    short, long = sorted((a, b), key=len)
    return a == b or (len(short.split()) >= MIN_CONTAINED_WORDS and f" {short} " in f" {long} ")


def error_location(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Precision and recall of located error sentences, micro-averaged over rows.

    A predicted sentence is correct when it matches an annotated sentence of
    the same row (see `located_sentences` and `_matches`); an annotated one
    is found when a predicted sentence matches it. Error types are ignored.
    """
    predicted = annotated = hit_predicted = hit_annotated = 0
    for row in rows:
        pred, gold = located_sentences(row["predicted_errors"]), located_sentences(row["human_errors"])
        predicted += len(pred)
        annotated += len(gold)
        hit_predicted += sum(any(_matches(p, g) for g in gold) for p in pred)
        hit_annotated += sum(any(_matches(p, g) for p in pred) for g in gold)
    precision = hit_predicted / predicted if predicted else None
    recall = hit_annotated / annotated if annotated else None
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else None
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "n": len(rows),
        "predicted": predicted,
        "annotated": annotated,
        "matched_predicted": hit_predicted,
        "matched_annotated": hit_annotated,
    }


def _num(value: float | None, width: int = 6) -> str:
    return f"{value:{width}.3f}" if value is not None else "n/a".rjust(width)


def _cell(value: float | None, interval: list[float | None]) -> str:
    low, high = interval
    bounds = f"[{_num(low, 0)}, {_num(high, 0)}]" if low is not None and high is not None else ""
    return f"{_num(value)} {bounds:<16}"


def _scored_pairs(scored: Sequence[dict[str, Any]]) -> list[tuple[dict[str, Any], float, float]]:
    return [(r, float(r["predicted"]), float(_human(r))) for r in scored  # type: ignore[arg-type]
            if r.get("predicted") is not None and math.isfinite(r["predicted"])]


def undefined_because(scored: Sequence[dict[str, Any]], level: str) -> str:
    """Why a criterion has no correlation, in words (too few items or groups, constant scores)."""
    pairs = _scored_pairs(scored)
    if len(pairs) < 2:
        unscored = len(scored) - len(pairs)
        return (f"too few scored items ({len(pairs)} of {len(scored)}"
                f"{f', {unscored} unscored' if unscored else ''}; a correlation needs 2 or more)")
    if level == "summary":
        groups: dict[str, list[tuple[float, float]]] = {}
        for row, p, h in pairs:
            groups.setdefault(_group(row), []).append((p, h))
        single = sum(len(g) < 2 for g in groups.values())
        flat_p = sum(len(g) >= 2 and len({p for p, _ in g}) == 1 for g in groups.values())
        flat_h = sum(len(g) >= 2 and len({h for _, h in g}) == 1 for g in groups.values())
        return (f"no group has 2 or more scored items whose predicted and human scores both vary: too few groups "
                f"({len(groups)} with scored items: {single} with one item, {flat_p} with constant predicted scores, "
                f"{flat_h} with constant human scores); use whole groups (dataset --limit) or --level turn")
    predicted, human = {p for _, p, _ in pairs}, {h for _, _, h in pairs}
    if len(predicted) == 1:
        return f"the predicted scores are all equal ({predicted.pop():g}): constant scores"
    return f"the human scores are all equal ({human.pop():g}): constant scores" if len(human) == 1 else "undefined"


NO_LABELS = "no labels: no results row has a criterion and a human score (join labels with --labels FILE)"


def add_reasons(result: dict[str, Any], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Put a `reason` beside each figure that is null (a criterion's correlations, the verdicts' accuracy or
    kappa, the whole result when there is nothing to compare); defined figures get none."""
    scored = _by_criterion(rows)
    for name, c in result["criteria"].items():
        if c["pearson"] is None:
            c["reason"] = undefined_because(scored[name], result["level"])
    if v := result.get("verdicts"):
        if v["accuracy"] is None:
            v["reason"] = f"too few items: every one of the {v['unscored']} verdicts is unscored"
        elif v["kappa"] is None:
            v["reason"] = "constant verdicts: kappa is undefined when both sides give one and the same verdict"
    if not result["criteria"] and "verdicts" not in result:
        result["reason"] = NO_LABELS
    return result


def format_table(result: dict[str, Any], rows: Sequence[dict[str, Any]] = ()) -> str:
    """A fixed-width text report of a `meta_evaluate` result; each n/a says why (the vote's, from the `rows`
    it was computed from)."""
    lines = [f"Meta-evaluation, {result['level']} level (95% bootstrap intervals)"]
    criteria = result["criteria"]
    if criteria:
        name_width = max(9, *(len(c) for c in criteria))
        header = f"{'criterion':<{name_width}} {'n':>5} {'unscored':>8} {'groups':>9}  "
        lines.append(header + "".join(f"{m:<24}" for m in METHODS).rstrip())
        for name, c in criteria.items():
            groups = "-" if c["groups_used"] is None else f"{c['groups_used']}/{c['groups_used'] + c['groups_skipped']}"
            cells = "".join(f"{_cell(c[m], c['ci'][m]):<24}" for m in METHODS)
            lines.append(f"{name:<{name_width}} {c['n']:>5} {c['unscored']:>8} {groups:>9}  {cells}".rstrip())
            if c.get("off_scale"):
                lines.append(f"  {name}: {c['off_scale']} predictions off any scale (beyond {stats.OFF_SCALE:g}) "
                             "left out")
            if c.get("reason"):
                lines.append(f"  {name}: n/a because {c['reason']}")
    elif not result.get("verdicts"):
        lines.append(f"n/a without human labels: {result.get('reason') or NO_LABELS}")
    if v := result.get("verdicts"):
        system = {True: "agrees", False: "differs", None: "n/a"}[v["system_agreement"]]
        lines.append(
            f"verdicts: n={v['n']} unscored={v['unscored']} accuracy={_num(v['accuracy'], 0)} "
            f"kappa={_num(v['kappa'], 0)} system-level preference {system}"
        )
        if v.get("reason"):
            lines.append(f"  verdicts: n/a because {v['reason']}")
    if p := result.get("position"):
        lines.append(f"swap: n={p['n']} unscored={p['unscored']} consistent={_num(p['consistent'], 0)}")
    if vote := result.get("vote"):
        as_voted = _by_criterion({**r, "predicted": r.get("predicted_vote")} for r in rows if "predicted_vote" in r)
        why = {name: undefined_because(got, result["level"]) for name, got in as_voted.items()}
        lines += format_vote(vote, why=why)
    if jury := result.get("jury"):
        lines += format_jury(jury)
    if runs := result.get("protocols"):
        lines += format_protocols(runs)
    if e := result.get("errors"):
        lines.append(
            f"error location: n={e['n']} precision={_num(e['precision'], 0)} recall={_num(e['recall'], 0)} "
            f"({e['matched_predicted']}/{e['predicted']} predicted, "
            f"{e['matched_annotated']}/{e['annotated']} annotated)"
        )
    return "\n".join(lines)
