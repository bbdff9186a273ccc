"""Training configuration: a typed, checked tree of settings read from YAML and the command line.

Every key has a type, a default and a rule for its values. Anything else (an
unknown key, a wrong type, a value out of range) is refused at once with a
:class:`ConfigError` that names the dotted key and says what is allowed, so a
typo never trains for ten minutes on the wrong settings.
"""

from __future__ import annotations

import copy
import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from allfives_env.core import make_rules

OPPONENT_KINDS = ("self", "pool", "random", "greedy", "heuristic")
ITERATION_BOTS = ("heuristic", "greedy", "search")  # the bots that may play a side of policy iteration's matches
BASELINES = ("random", "greedy", "heuristic", "search")


class ConfigError(ValueError):
    """A bad config file or override; the message names the key and what is allowed."""


@dataclass(frozen=True)
class Key:
    """One setting: its type, default, the rule its values follow, and what it means."""

    kind: str  # "int", "float", "str", "bool", "list"
    default: Any
    allowed: str  # what the error message says is allowed
    check: Any = None  # callable(value) -> bool, beyond the type
    optional: bool = False  # None allowed
    help: str = ""


def number(
    kind: str, default, low, high, *, open_low: bool = False, optional: bool = False, note: str = "", help: str = ""
) -> Key:
    """A numeric setting held to ``[low, high]`` (``(low, high]`` with ``open_low``); floats must also be finite.

    Every number has both bounds, so nothing absurd (an infinite step size, a
    seed torch cannot take, a billion matches per update) starts a run.
    """
    bracket = "(" if open_low else "["
    if kind == "int":
        base = "a positive integer" if low == 1 else "an integer"
    else:
        base = "a finite positive number" if open_low and low == 0 else "a finite number"
    allowed = f"{base} in {bracket}{low}, {high}]{note}" + (", or null" if optional else "")

    def check(x) -> bool:
        return (low < x if open_low else low <= x) and x <= high

    return Key(kind, default, allowed, check, optional=optional, help=help)


def _choice(*options):
    return lambda x: x in options


def _run_name(s: str) -> bool:
    return 0 < len(s) <= 200 and s not in (".", "..") and not any(c in "/\\" or not c.isprintable() for c in s)


TEACHER_BOTS = ("random", "greedy", "heuristic")


def _teacher(spec: str) -> bool:
    """A bot or a search; a search spec's details (rollouts, checkpoint) are checked in :func:`check_whole`."""
    return spec in TEACHER_BOTS or spec.partition(":")[0] == "search"


def _baselines(xs: list) -> bool:
    return 0 < len(xs) == len({str(x) for x in xs}) and all(isinstance(x, str) and x in BASELINES for x in xs)


#: Seeds go to torch, which takes at most 64 bits (and the trainer seeds its generator with seed + 1).
MAX_SEED = 2**62
SHARE = dict(low=0, high=1_000_000)

SCHEMA: dict[str, dict[str, Key]] = {
    "run": {
        "name": Key(
            "str",
            "default",
            "a name of 1 to 200 printable characters without '/' or '\\' (not '.' or '..')",
            _run_name,
            help="run directory name",
        ),
        "dir": Key(
            "str", "runs", "a directory path", lambda s: bool(s) and "\0" not in s, help="parent of the run directory"
        ),
        "seed": number("int", 0, 0, MAX_SEED, help="seeds deals, sampling and initial weights"),
        "device": Key("str", "auto", "'auto', 'cpu' or 'cuda'", _choice("auto", "cpu", "cuda")),
        "threads": number("int", 2, 0, 256, note=" (0: one per core, up to 2; one with a single local rollout worker)"),
        "max_minutes": number(
            "float",
            14.0,
            0,
            1_000_000,
            open_low=True,
            optional=True,
            note=" minutes",
            help="stop self-play early (after a whole update), and start no new round, when the run has run this long",
        ),
        "backend": Key(
            "str",
            "multiprocessing",
            "'multiprocessing' or 'ray'",
            _choice("multiprocessing", "ray"),
            help="where rollout workers run: processes on this machine, or Ray actors on a cluster (the ray extra)",
        ),
        "ray_address": Key(
            "str",
            None,
            "a Ray cluster address ('auto', HOST:PORT or ray://HOST:PORT), or null (a local Ray instance)",
            bool,
            optional=True,
            help="with backend: ray, the cluster to join",
        ),
    },
    "game": {
        "rules": Key("str", "pagat", "'pagat' or 'fives'", _choice("pagat", "fives")),
        "num_players": Key("int", 2, "2, 3 or 4", _choice(2, 3, 4)),
        "partnerships": Key("bool", None, "true, false or null (the rule set's default)", optional=True),
        "target": number("int", None, 1, 10_000, optional=True, note=" points (null: the rule set's default)"),
        "opening": Key("str", None, "'winners_choice', 'descending' (fives only) or null", optional=True),
    },
    "model": {
        "hidden": number("int", 128, 8, 4096, help="width of the state trunk and the critic"),
        "action_hidden": number("int", 64, 8, 4096, help="width of the shared action head"),
    },
    "train": {
        "total_steps": number("int", 2_500_000, 1, 10**12, help="learning decisions to collect"),
        "envs": number("int", 1024, 1, 100_000, help="matches played side by side per update (one table each)"),
        "rollout_workers": number(
            "int", 2, 1, 256, help="processes that play the matches (this one included); one per core"
        ),
        "epochs": number("int", 1, 1, 1000),
        "minibatch": number("int", 1024, 1, 10_000_000),
        "lr": number("float", 5e-4, 0, 1, open_low=True, help="Adam step size at the start"),
        "lr_end": number("float", 0.0, 0, 1, help="step size reached at total_steps (linear)"),
        "gamma": number("float", 0.99, 0, 1),
        "gae_lambda": number("float", 0.9, 0, 1),
        "clip": number("float", 0.2, 0, 10, open_low=True),
        "value_coef": number("float", 0.5, 0, 1000),
        "entropy_coef": number("float", 0.003, 0, 1000),
        "max_grad_norm": number("float", 0.5, 0, 1_000_000, open_low=True),
        "checkpoint_every": number("int", 1, 1, 10**9, note=" updates"),
    },
    "reward": {
        "points": number(
            "float",
            1.0,
            0,
            1000,
            help="weight of each step's zero-sum points (own side minus opponents), per target",
        ),
        "win": number("float", 1.0, 0, 1000, help="reward for winning the match (minus for losing)"),
    },
    "opponents": {
        "self": number("float", 0.4, **SHARE, help="share of matches against the current network"),
        "pool": number("float", 0.2, **SHARE, help="share against a past snapshot"),
        "random": number("float", 0.0, **SHARE),
        "greedy": number("float", 0.15, **SHARE),
        "heuristic": number("float", 0.25, **SHARE),
        "pool_size": number("int", 8, 1, 10_000),
        "snapshot_every": number("int", 2, 1, 10**9, note=" updates"),
    },
    "imitation": {
        "teacher": Key(
            "str",
            "heuristic",
            "'random', 'greedy', 'heuristic', 'search', 'search:N', 'search:trained[:N]', "
            "'search:checkpoint:PATH[:N]' or null (no warm start)",
            _teacher,
            optional=True,
            help="a bot to imitate before self-play starts (a search labels hundreds of times slower than heuristic)",
        ),
        "target": Key(
            "str",
            "playouts",
            "'choice' or 'playouts'",
            _choice("choice", "playouts"),
            help="what the actor learns: the teacher's choice, or every legal action's play-out value on the true deal",
        ),
        "value_scale": number(
            "float", 10.0, 0, 1000, open_low=True, help="with target playouts: points of value per unit of score"
        ),
        "huber": number(
            "float",
            10.0,
            0,
            1000,
            help="with target playouts: points of error beyond which the fit counts errors linearly, not squared "
            "(a Huber loss; 0: squared errors throughout)",
        ),
        "matches": number("int", 5000, 1, 10_000_000, help="teacher matches to learn from"),
        "epochs": number("int", 5, 1, 1000),
        "minibatch": number("int", 512, 1, 10_000_000, help="decisions per step of the warm start"),
    },
    "iteration": {
        "rounds": number(
            "int", 4, 0, 1000, help="rounds of policy iteration on the policy's own play-outs after self-play (0: none)"
        ),
        "matches": number("int", 3000, 1, 10_000_000, help="self-play matches labelled a round"),
        "epochs": number("int", 6, 1, 1000, help="passes of each round's fresh network over every label so far"),
        "lr": number("float", 5e-4, 0, 1, open_low=True, help="Adam step size of each fit, decayed linearly to 0"),
        "minibatch": number("int", 512, 1, 10_000_000),
        "huber": number(
            "float", 10.0, 0, 1000, help="points of error beyond which the fit counts errors linearly (0: squared)"
        ),
        "equity": Key(
            "bool",
            False,
            "true or false",
            help="value a round's end by the chance of winning the match from its scores",
        ),
        "temperature": number(
            "float",
            1.0,
            0,
            100,
            open_low=True,
            help="the self-play samples the softmax of the scores divided by this (below 1: nearer the favourite)",
        ),
        "heuristic": number(
            "float",
            0.0,
            0,
            1,
            help="share of a round's matches where the heuristic bot plays one side (only the policy's seats are "
            "labelled, its play-outs played by that bot too)",
        ),
        "greedy": number("float", 0.0, 0, 1, help="share of a round's matches where the greedy bot plays one side"),
        "search": number(
            "float",
            0.0,
            0,
            1,
            help="share of a round's matches where the search plays one side (the policy plays its seats in the "
            "play-outs: the search is too slow for them)",
        ),
    },
    "expert": {
        "rounds": number(
            "int",
            0,
            0,
            1000,
            help="rounds of expert iteration on the guided search's values after the policy-iteration rounds (0: none)",
        ),
        "matches": number("int", 1200, 1, 10_000_000, help="self-play matches labelled a round"),
        "light": number("int", 30, 1, 1_000_000, help="deals every legal action is played on"),
        "deep": number("int", 400, 0, 1_000_000, help="more deals for each of the network's candidates"),
        "belief": Key("bool", True, "true or false", help="draw the search's deals from the shipped belief model"),
        "network_deals": number(
            "int", 0, 0, 1_000_000, help="more deals the policy plays out for each action, averaged in (0: none)"
        ),
        "epochs": number("int", 4, 1, 1000, help="passes over every label so far, from the network as it stands"),
        "lr": number("float", 2e-4, 0, 1, open_low=True, help="Adam step size of each fit, decayed linearly to 0"),
        "minibatch": number("int", 512, 1, 10_000_000),
        "huber": number(
            "float", 10.0, 0, 1000, help="points of error beyond which the fit counts errors linearly (0: squared)"
        ),
    },
    "eval": {
        "every": number("int", 20, 0, 10**9, note=" updates (0: only at the end)"),
        "matches": number("int", 50, 1, 10_000_000, note=" (duplicate deals, each played in every seat rotation)"),
        "baselines": Key(
            "list",
            ["random", "greedy", "heuristic"],
            f"a list of names from {', '.join(BASELINES)}, each at most once",
            _baselines,
        ),
        "final_matches": number("int", 400, 0, 10_000_000, note=" (0: no final evaluation)"),
        "workers": number("int", 2, 1, 256),
        "seed": number("int", 20_000, 0, MAX_SEED),
    },
}


def defaults() -> dict:
    return {section: {k: copy.deepcopy(key.default) for k, key in keys.items()} for section, keys in SCHEMA.items()}


def _show(value) -> str:
    """A value as an error message quotes it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}...({len(text)} characters)"


def _coerce(dotted: str, key: Key, value):
    """The checked value of one key (ints widened to float for float keys); ConfigError naming the key."""
    if value is None:
        if key.optional:
            return None
        raise ConfigError(f"{dotted}: null is not allowed; allowed: {key.allowed}")
    kind = key.kind
    ok = False
    if kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind == "str":
        ok = isinstance(value, str)
    elif kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "list":
        ok = isinstance(value, list)
    if not ok:
        raise ConfigError(
            f"{dotted}: {_show(value)} has the wrong type ({type(value).__name__}); allowed: {key.allowed}"
        )
    if kind == "float":
        try:
            value = float(value)
        except OverflowError:
            raise ConfigError(f"{dotted}: {_show(value)} is out of range; allowed: {key.allowed}") from None
        if not math.isfinite(value):
            raise ConfigError(f"{dotted}: {value!r} is not finite; allowed: {key.allowed}")
    if key.check is not None and not key.check(value):
        raise ConfigError(f"{dotted}: {_show(value)} is not allowed; allowed: {key.allowed}")
    return value


def set_key(cfg: dict, dotted: str, value) -> None:
    """Set one dotted key after checking it; raise ConfigError naming the key."""
    parts = dotted.split(".")
    if len(parts) != 2 or parts[0] not in SCHEMA:
        sections = ", ".join(SCHEMA)
        raise ConfigError(f"unknown key {_show(dotted)}: keys are 'section.name' with a section from {sections}")
    section, name = parts
    if name not in SCHEMA[section]:
        names = ", ".join(SCHEMA[section])
        raise ConfigError(f"unknown key {_show(dotted)}; allowed keys in '{section}': {names}")
    cfg[section][name] = _coerce(dotted, SCHEMA[section][name], value)


def merge(cfg: dict, tree, where: str = "") -> None:
    """Merge a nested mapping (a YAML file's contents) into ``cfg``, checking every key."""
    if tree is None:
        return
    if not isinstance(tree, dict):
        raise ConfigError(f"{where or 'the config'} must be a mapping of sections, got {type(tree).__name__}")
    for section, values in tree.items():
        if section not in SCHEMA:
            raise ConfigError(
                f"unknown section {_show(section)}{where and ' in ' + where}; allowed: {', '.join(SCHEMA)}"
            )
        if not isinstance(values, dict):
            raise ConfigError(f"section {_show(section)} must be a mapping of keys, got {type(values).__name__}")
        for name, value in values.items():
            set_key(cfg, f"{section}.{name}", value)


def _yaml_problem(error: yaml.YAMLError) -> str:
    """A YAML error on one line: where, and what."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + " ".join(str(problem).split())


#: No setting needs more; PyYAML takes seconds on a few thousand nested brackets before it gives up.
MAX_YAML_CHARS = 100_000
MAX_YAML_NESTING = 32


def _nesting(text: str) -> int:
    """The deepest run of open ``[``/``{`` outside quotes and comments (a cheap bound before parsing)."""
    depth = deepest = 0
    quote = ""
    comment = False
    for c in text:
        if comment:
            comment = c != "\n"
        elif quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#":
            comment = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(0, depth - 1)
    return deepest


def _read_yaml(text: str, what: str):
    if len(text) > MAX_YAML_CHARS:
        raise ConfigError(f"{what} is too long ({len(text):,} characters; at most {MAX_YAML_CHARS:,})")
    if _nesting(text) > MAX_YAML_NESTING:
        raise ConfigError(f"{what} is nested too deeply (more than {MAX_YAML_NESTING} levels of [ or {{)")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{what} is not valid YAML: {_yaml_problem(error)}") from None
    except RecursionError:
        raise ConfigError(f"{what} is nested too deeply") from None
    except Exception as error:  # PyYAML's constructors fail in their own ways on a tag that does not fit (!!int x)
        raise ConfigError(f"{what} cannot be read as YAML: {type(error).__name__}: {_show(str(error))}") from None


def parse_override(text: str) -> tuple[str, Any]:
    """Read ``key=value``; the value is read as YAML (so 3, 0.5, true, null and [a, b] work)."""
    if "=" not in text:
        raise ConfigError(f"override {_show(text)} must look like section.key=value")
    key, raw = text.split("=", 1)
    key = key.strip()
    shown = key if key.isprintable() and len(key) <= 60 else _show(key)
    value = _read_yaml(raw, f"{shown}: value {_show(raw)}") if raw.strip() else None
    return key, value


def load_config(path: str | Path | None = None, overrides: list[str] = ()) -> dict:
    """Defaults, then the YAML file, then ``key=value`` overrides; all checked, then checked as a whole."""
    cfg = defaults()
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {str(path)!r} does not exist or is not a file")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ConfigError(f"config file {str(path)!r} is not UTF-8 text (byte {error.start})") from None
        except OSError as error:
            raise ConfigError(f"config file {str(path)!r} cannot be read: {error.strerror or error}") from None
        merge(cfg, _read_yaml(text, f"config file {str(path)!r}"), where=str(path))
    for text in overrides:
        set_key(cfg, *parse_override(text))
    check_whole(cfg)
    return cfg


def check_config(tree) -> dict:
    """A whole config tree (a saved run's) checked key by key and as a whole; keys it lacks get their defaults."""
    cfg = defaults()
    merge(cfg, tree, where="the saved config")
    check_whole(cfg)
    return cfg


def check_whole(cfg: dict) -> None:
    """Checks that involve several keys: the rules, the opponent mix."""
    g = cfg["game"]
    try:
        make_rules(g["rules"], g["num_players"], g["partnerships"], g["target"], g["opening"])
    except ValueError as error:
        raise ConfigError(f"game: {error}") from None
    if sum(cfg["opponents"][k] for k in OPPONENT_KINDS) <= 0:
        raise ConfigError(f"opponents: the shares of {', '.join(OPPONENT_KINDS)} must not all be 0")
    if sum(cfg["iteration"][bot] for bot in ITERATION_BOTS) > 1 + 1e-9:  # shares meant to fill 1 may round past it
        raise ConfigError(f"iteration: the shares of {', '.join(ITERATION_BOTS)} are of one round's matches, "
                          "so together they must not pass 1")  # fmt: skip
    teacher = cfg["imitation"]["teacher"]
    if teacher is not None and teacher not in TEACHER_BOTS:  # a search: build it once to check its spec
        from agents.registry import make_agent

        try:
            make_agent(teacher, 0)
        except ValueError as error:
            raise ConfigError(f"imitation.teacher: {error}") from None
    if cfg["run"].get("backend") == "ray" and importlib.util.find_spec("ray") is None:
        raise ConfigError("run.backend: 'ray' needs Ray, which is not installed (pip install -e '.[ray]'); "
                          "allowed here: 'multiprocessing'")  # fmt: skip


def rules_of(cfg: dict):
    g = cfg["game"]
    return make_rules(g["rules"], g["num_players"], g["partnerships"], g["target"], g["opening"])


def to_yaml(cfg: dict) -> str:
    return yaml.safe_dump(cfg, sort_keys=False)
