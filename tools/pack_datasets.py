"""Rebuild the data sets shipped in the package from a plain copy of the data folder.

    python3 tools/pack_datasets.py /work/shared/data

Writes one reproducible `<set>.tar.xz` per data set into debate_tui/data/datasets/
(sorted members, zero times and owners, so an unchanged source gives identical bytes),
holding only the files debate_tui.meta.datasets reads (`SHIPPED`).
"""

from __future__ import annotations

import io
import lzma
import sys
import tarfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "debate_tui" / "data" / "datasets"
SHIPPED = {
    "summeval": ["summeval/M*_outputs_annotations.jsonl"],
    "topical_chat": ["topical_chat/topical_chat.json", "topical_chat/gpt35_geval/gpt3.5_*_geval.json"],
    "faireval": ["faireval/vicuna80_pairs.json"],
    "mateval": ["mateval/ROC/ROC_test_change_final.json", "mateval/ROC/ROC_test_change_new.csv",
                "mateval/LOT/LOT_test_change_final.json", "mateval/LOT/LOT_test_output_new.csv"],
    "scaleeval": ["scaleeval/responses/*/*.jsonl"],
}
"""Archive name -> glob patterns relative to the data folder."""


def pack(source: Path, name: str, patterns: list[str]) -> Path:
    """One archive; members keep their path relative to the data folder."""
    members = sorted({p for pattern in patterns for p in source.glob(pattern)})
    if not members:
        raise SystemExit(f"{name}: no file matches {patterns} in {source}")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in members:
            data = path.read_bytes()
            info = tarfile.TarInfo(path.relative_to(source).as_posix())
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    target = OUT / f"{name}.tar.xz"
    target.write_bytes(lzma.compress(buffer.getvalue(), preset=9 | lzma.PRESET_EXTREME))
    return target


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.exit(__doc__)
    source = Path(argv[0])
    OUT.mkdir(parents=True, exist_ok=True)
    for name, patterns in SHIPPED.items():
        target = pack(source, name, patterns)
        print(f"{target.relative_to(OUT.parents[2])}: {target.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
