"""The layers' promise: each layer imports only the layers below it.

From the bottom: the rules core (standard library only), the views (core,
numpy, Pillow for images), the environments (core, views, numpy, Gymnasium,
PettingZoo, and numba for the compiled batched engine), the agents, then training and the web app (each on top of the
agents, neither importing the other). Nothing imports the tests, the
benchmarks, the research tools, the examples or the training script.

Every import statement counts, inside functions too (a lazy import is still a
dependency), and so does a module name written as a literal argument of
``importlib.import_module``. One exception, stated here: the command line
``allfives_env/__main__.py`` dispatches some subcommands (``play``,
``evaluate``, ``serve``...) to higher layers by a lazy import of the module
named in its ``FORWARDED`` table; it has no import statement for them. The
Gymnasium environment's opponents given by name are resolved through an
entry point (see ``allfives_env/opponents.py``), not by an import.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Layers from the bottom: (name, module prefixes). A module belongs to the layer of its longest matching prefix.
LAYERS = {
    "core": ("allfives_env.core",),
    "views": ("allfives_env.views",),
    "environments": ("allfives_env",),
    "agents": ("agents",),
    "training": ("allfives_train",),
    "web": ("allfives_web",),
    "scripts": ("tests", "benchmarks", "research", "examples", "train"),
}
#: Which layers each layer may import (its own included).
MAY_IMPORT = {
    "core": {"core"},
    "views": {"core", "views"},
    "environments": {"core", "views", "environments"},
    "agents": {"core", "views", "environments", "agents"},
    "training": {"core", "views", "environments", "agents", "training"},
    "web": {"core", "views", "environments", "agents", "web"},
}
#: Third-party packages (top-level import names) a layer may import; None: any.
THIRD_PARTY = {
    "core": set(),
    "views": {"numpy", "PIL"},
    "environments": {"numpy", "gymnasium", "pettingzoo", "numba"},
    "agents": None,
    "training": None,
    "web": None,
}
#: The stated exception: the command line may name these layers in its dispatch table.
DISPATCH = {"allfives_env.__main__": {"agents", "web"}}
PACKAGES = ("allfives_env", "agents", "allfives_train", "allfives_web")
FIRST_PARTY = {prefix.split(".")[0] for prefixes in LAYERS.values() for prefix in prefixes}


def layer_of(module: str) -> str | None:
    """The layer of a first-party module name, None for the standard library and third-party packages."""
    best, found = -1, None
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), layer
    return found


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(module: str, source: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source``: statements anywhere, and literal import_module calls."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]  # each name may be a module
        elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append((node.lineno, first.value))
    return found


def _is_import_module(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("import_module", "__import__")


def violations(module: str, source: str, is_package: bool = False) -> list[str]:
    """What in ``source`` breaks the layering, one line per import."""
    layer = layer_of(module)
    problems: dict[tuple[int, str], str] = {}  # one per statement and what it reaches
    for line, name in imported_modules(module, source, is_package):
        top = name.split(".")[0]
        target = layer_of(name)
        if target is None and top in FIRST_PARTY:
            target = "scripts"
        if target is not None:
            if target not in MAY_IMPORT[layer]:
                problems.setdefault((line, target), f"{module}:{line} ({layer}) imports {name} ({target})")
        elif top not in sys.stdlib_module_names and top != "__future__":
            allowed = THIRD_PARTY[layer]
            if allowed is not None and top not in allowed:
                message = f"{module}:{line} ({layer}) imports the third-party {top}; allowed: {sorted(allowed)}"
                problems.setdefault((line, top), message)
    return list(problems.values())


def sources() -> list[tuple[str, Path]]:
    files = [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]
    return [(module_name(path), path) for path in files]


def test_every_module_imports_only_the_layers_below_it():
    checked, problems = 0, []
    for module, path in sources():
        problems += violations(module, path.read_text(encoding="utf-8"), path.name == "__init__.py")
        checked += 1
    assert checked > 60
    assert problems == []


def test_the_command_line_reaches_higher_layers_only_through_its_dispatch_table():
    from allfives_env import __main__ as cli

    for module, layers in DISPATCH.items():
        assert module == cli.__name__ or module == "allfives_env.__main__"
        assert {layer_of(target) for target in cli.FORWARDED.values()} <= layers
    source = (ROOT / "allfives_env" / "__main__.py").read_text(encoding="utf-8")
    assert violations("allfives_env.__main__", source) == []  # no import statement reaches up


# -- no import cycles: within a layer, dependencies run one way ----------------------------------


def module_graph(extra: dict[str, str] | None = None) -> dict[str, set[str]]:
    """Each first-party module's imports (lazy ones too) as module names; ``extra`` adds or replaces sources."""
    found = {module: path.read_text(encoding="utf-8") for module, path in sources()}
    packages = {module for module, path in sources() if path.name == "__init__.py"}
    found.update(extra or {})
    graph = {}
    for module, source in found.items():
        targets = set()
        for _, name in imported_modules(module, source, module in packages):
            while name and name not in found:  # "from .evaluation import GameResult" depends on the package
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph``: its strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_one_that_imports_it_back():
    assert cycles(module_graph()) == []


def test_a_planted_import_cycle_is_caught():
    """greedy importing terminal play, which reaches greedy through the registry, closes a cycle."""
    source = (ROOT / "agents" / "greedy.py").read_text(encoding="utf-8")
    planted = f"{source}\n\ndef _planted():\n    from . import play\n"
    assert cycles(module_graph({"agents.greedy": source})) == cycles(module_graph())
    assert any({"agents.greedy", "agents.play", "agents.registry"} <= set(c) for c in cycles(
        module_graph({"agents.greedy": planted})))  # fmt: skip


# -- a planted upward import is caught, in every layer ------------------------------------------

PLANTED = {
    # layer: (a real module of it, imports that reach above it or outside what it may use)
    "core": (
        "allfives_env.core.state",
        ["import numpy", "from ..views import text", "from allfives_env import aec_env"],
    ),
    "views": ("allfives_env.views.observation", ["from .. import gym_env", "import gymnasium", "import agents"]),
    "environments": (
        "allfives_env.gym_env",
        ["from agents.registry import make_agent", "import allfives_train.trainer", "import torch"],
    ),
    "agents": ("agents.greedy", ["from allfives_train import trainer", "import allfives_web.app", "import tests"]),
    "training": ("allfives_train.trainer", ["from allfives_web import server", "import benchmarks.bench_core"]),
    "web": ("allfives_web.app", ["import allfives_train.trainer", "import examples.rllib_ppo"]),
}


@pytest.mark.parametrize("layer", sorted(PLANTED))
def test_a_planted_upward_import_is_caught(layer):
    module, plants = PLANTED[layer]
    path = ROOT / Path(*module.split(".")).with_suffix(".py")
    assert layer_of(module) == layer and path.exists()
    source = path.read_text(encoding="utf-8")
    assert violations(module, source) == []
    for plant in plants:
        at_top = f"{plant}\n{source}"
        lazy = f"{source}\n\ndef _planted():\n    {plant}\n"
        dynamic = f"import importlib\n{source}\nimportlib.import_module({plant.split()[1]!r})\n"
        for planted in (at_top, lazy):
            found = violations(module, planted)
            assert len(found) == 1 and f"({layer}) imports" in found[0], (plant, found)
        if not plant.startswith("from .") and layer_of(plant.split()[1]) is not None:
            assert len(violations(module, dynamic)) == 1, plant


# -- the core at run time ------------------------------------------------------------------------

PROBE = """
import sys
from allfives_env.core import State, make_rules
from allfives_env.core.record import replay, to_record
state = State(make_rules("pagat", 3), seed=1)
while not state.finished:
    state.apply(state.legal_actions()[0])
replay(to_record(state))
import allfives_env
print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pettingzoo', 'gymnasium', 'torch', 'agents'}))
"""


def test_the_core_and_the_package_import_no_third_party_module():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
