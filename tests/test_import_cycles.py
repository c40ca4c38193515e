"""No module of the package imports itself back at run time, through any chain: a function-level import counts (it
runs), one under TYPE_CHECKING does not. (import-linter's layers see packages; a circle inside cli/ is below them:
`run` and `run_ladder` imported each other until the headless play moved to `cli/headless.py`.)"""

from __future__ import annotations

import pytest


def test_no_runtime_import_cycle_among_the_package_s_modules():
    grimp = pytest.importorskip("grimp")  # import-linter's graph: installed with the lint extra, as CI has it
    graph = grimp.build_graph("debate_tui", exclude_type_checking_imports=True, cache_dir=None)
    cycles = [(module, other) for module in sorted(graph.modules)
              for other in graph.find_modules_directly_imported_by(module)
              if other.startswith("debate_tui") and graph.chain_exists(importer=other, imported=module)]
    assert cycles == []
