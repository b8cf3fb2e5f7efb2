"""The layering rules of docs/architecture.md, read from the source: which package may import which."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "robid"


def _imports(package: str) -> set[str]:
    """Every robid module imported anywhere (module level or inside functions) by the files of ``package``."""
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py") if (ROOT / package).is_dir() else [ROOT / f"{package}.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("robid"):
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("robid"))
    return found


def _outside(package: str) -> set[str]:
    return {m for m in _imports(package) if not m.startswith(f"robid.{package}")}


def test_the_record_needs_nothing_of_robid_but_its_errors_and_the_vocabulary():
    """robid.errors and robid.defaults (the word sets, a leaf: test_the_vocabulary_and_defaults_import_nothing)."""
    leaves = ("robid.errors", "robid.defaults")
    assert {m for m in _outside("record") if not m.startswith(leaves)} == set()


@pytest.mark.parametrize("package", ["signals", "estimation"])
def test_numerical_packages_read_and_write_no_file(package):
    """Arrays and records in, arrays and records out: no robid.io (files are read at the edges)."""
    assert not [m for m in _outside(package) if m.startswith("robid.io")]


@pytest.mark.parametrize("package", ["identification", "estimation", "signals", "payload", "export"])
def test_identification_side_never_imports_the_virtual_robot(package):
    assert not [m for m in _outside(package) if m.startswith("robid.simulation")]


def test_the_report_renders_the_record_and_processes_nothing():
    """No signal processing and no data sets in the report: everything it shows is in the record (a validation
    file given to the report goes through robid.identification.held_out_run)."""
    used = _outside("report")
    assert not [m for m in used if m.startswith(("robid.signals", "robid.identification.datasets"))]
    # the identified model the record describes is evaluated (friction curves of an adopted nonlinear model), not
    # re-derived from measurements
    allowed = {"robid.identification", "robid.identification.held_out_run", "robid.identification.predict",
               "robid.identification.predict.check_result_matches", "robid.identification.identified_model",
               "robid.identification.identified_model.IdentifiedModel"}
    assert {m for m in used if m.startswith("robid.identification")} <= allowed


def test_no_package_imports_the_command_line_or_the_campaign():
    for package in ("model", "symbolic", "dynamics", "excitation", "signals", "estimation", "simulation", "io",
                    "elastic", "identification", "report", "record", "payload", "export", "schemas"):
        used = _outside(package)
        assert not [m for m in used if m.startswith(("robid.cli", "robid.campaign"))], package


def test_the_file_definitions_are_a_leaf():
    """robid.schemas describes the input files; the readers import it, it imports nothing of robid but the
    vocabulary and defaults (robid.defaults, itself a leaf)."""
    assert {m for m in _outside("schemas") if m != "robid.defaults" and not m.startswith("robid.defaults.")} == set()


@pytest.mark.parametrize("module", ["defaults.py", "version.py"])
def test_the_vocabulary_and_defaults_import_nothing(module):
    """robid.defaults holds the word sets and defaults the schemas, the command line and the library share: a leaf,
    so that each of them can import it (tests/test_vocabulary.py); robid.version likewise."""
    tree = ast.parse((ROOT / module).read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


def test_reading_a_result_loads_no_numerical_code_but_numpy():
    import subprocess
    import sys

    code = (
        "import sys, robid.record, robid.io.result_file; "
        "print(sorted(m for m in ('scipy', 'sympy', 'cvxpy', 'matplotlib', 'robid.robot', 'robid.model') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_command_line_parser_loads_no_numerical_code():
    """``robid --help`` and every ``robid CMD --help`` stay fast: building the parser imports neither the
    numerical packages nor scipy, sympy or cvxpy (commands import what they need when they run)."""
    import subprocess
    import sys

    code = (
        "import sys, robid.cli; robid.cli.build_parser(); "
        "print(sorted(m for m in ('scipy', 'sympy', 'cvxpy', 'matplotlib', 'pandas', 'robid.signals', "
        "'robid.estimation', 'robid.payload', 'robid.export') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("module", ["io/files.py", "io/keys.py", "io/escaping.py"])
def test_the_io_leaves_import_nothing_of_robid_but_its_errors(module):
    """robid.io.files, keys and escaping are used by every layer (the robot readers, the controller programs):
    they import nothing of robid but robid.errors."""
    tree = ast.parse((ROOT / module).read_text())
    used = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    used |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in used if m.startswith("robid")} <= {"robid.errors"}


def test_the_request_layer_sits_between_the_front_ends_and_the_library():
    """robid.requests turns the front ends' plain values into the library's options (issue 35): it may use the
    vocabulary, the errors, the record codec and the option types of the signal stage and the reader, never a front
    end (cli, campaign, fleet) nor what builds on identification; and the front ends reach the option types
    through it (the command line's and the campaign's processing options)."""
    allowed = ("robid.defaults", "robid.errors", "robid.record", "robid.signals", "robid.io.screening")
    assert {m for m in _imports("requests") if not m.startswith(allowed)} == set()
    for front_end in ("cli/process_cmd", "campaign/runner"):
        assert "robid.requests" in _imports(front_end), front_end
def test_the_docs_the_code_cites_exist():
    """Every ``docs/NAME.md`` a module cites is in the repository (the interfaces spec among them: issue 35)."""
    import re

    cited = {m for path in ROOT.rglob("*.py") for m in re.findall(r"docs/([\w.-]+\.md)", path.read_text())}
    assert "interfaces.md" in cited
    assert sorted(name for name in cited if not (ROOT.parent / "docs" / name).is_file()) == []


def _module_graph() -> dict[str, set[str]]:
    """robid module -> the robid modules it imports, at module level or inside functions (issue 35); imports under
    ``if TYPE_CHECKING:`` are left out: they never run (annotations only). ``from robid.x import y`` counts as an
    import of robid.x.y when that is a module, else of robid.x."""
    modules = {}
    for path in ROOT.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path

    def owner(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        skipped = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(block.test) for stmt in block.body for n in ast.walk(stmt)}
        targets = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("robid"):
                targets |= {owner(f"{node.module}.{a.name}") for a in node.names}
            elif isinstance(node, ast.Import):
                targets |= {owner(a.name) for a in node.names if a.name.startswith("robid")}
        graph[name] = {t for t in targets if t and t != name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_import_circle_counting_imports_inside_functions():
    """Issue 35: a lazy import inside a function hides a circle from Python but not from a reader; none is left
    (the CLI's lazy loads of numerical code are one-way, from robid.cli down, and need no exception)."""
    assert _circles(_module_graph()) == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def _documented_layers() -> dict[str, int]:
    """The layer order of docs/architecture.md ("Arrows point from lower to higher layers ..."): package or module
    (dotted, below robid) -> its layer's rank; ``requests`` between the library and the front ends it names."""
    text = (ROOT.parent / "docs" / "architecture.md").read_text()
    start = text.index("no package imports one above it:")
    sentence = text[start:].split(":", 1)[1].split(". ", 1)[0]
    layers: dict[str, int] = {}
    for rank, group in enumerate(sentence.split("→")):
        for name in re.findall(r"`([a-z_.]+)`", group):
            layers[name] = rank
    said = re.search(r"`requests` sits between the front ends \(([^)]*)\)", text)
    front_ends = re.findall(r"`([a-z_]+)`", said.group(1))
    below = min(layers[f] for f in front_ends)
    layers = {name: rank * 2 for name, rank in layers.items()}
    layers["requests"] = below * 2 - 1
    return layers


def _layer_of(module: str, layers: dict[str, int]) -> str | None:
    """The documented name (longest dotted prefix) that ``module`` (``robid.io.files``) belongs to."""
    parts = module.split(".")[1:]
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in layers:
            return ".".join(parts[:n])
    return None


#: modules outside the order: the package's public facade and ``python -m robid`` (they import from every layer)
_FACADES = ("robid", "robid.__main__")


def test_every_import_follows_the_documented_layer_order_every_package_included():
    """Issue 35: every module of robid/ belongs to a layer of docs/architecture.md, and none imports (at module
    level or inside a function; TYPE_CHECKING imports excluded, they never run) a module of a higher layer."""
    layers = _documented_layers()
    graph = _module_graph()
    unplaced = sorted(m for m in graph if m not in _FACADES and _layer_of(m, layers) is None)
    assert unplaced == [], "modules docs/architecture.md's layer order does not name"
    assert _upward(graph, layers) == []


def _upward(graph: dict[str, set[str]], layers: dict[str, int]) -> list[str]:
    """Every import of ``graph`` from a module into a module of a higher layer, one line each."""
    upward = []
    for module, targets in sorted(graph.items()):
        if module in _FACADES:
            continue
        own = layers[_layer_of(module, layers)]
        for target in sorted(targets):
            name = _layer_of(target, layers)
            if name is not None and layers[name] > own:
                upward.append(f"{module} ({_layer_of(module, layers)}) imports {target} ({name})")
    return upward


def test_the_layer_reader_reads_the_documented_order():
    layers = _documented_layers()
    assert layers["errors"] == layers["io.files"] < layers["model"] < layers["symbolic"] < layers["robot"]
    assert layers["identification"] < layers["report"] < layers["requests"] < layers["campaign"] < layers["cli"]
    assert _layer_of("robid.io.files", layers) == "io.files" and _layer_of("robid.io.ros_bag", layers) == "io"
    made_up = {"robid.io.files": {"robid.io.ros_bag"}, "robid.model.loader": {"robid.errors"},
               "robid.cli.main": {"robid.requests"}, "robid.requests": {"robid.campaign.runner"}}
    assert _upward(made_up, layers) == ["robid.io.files (io.files) imports robid.io.ros_bag (io)",
                                        "robid.requests (requests) imports robid.campaign.runner (campaign)"]
