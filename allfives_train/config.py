"""Training configuration: a typed, checked tree of settings read from YAML and the command line.

Every key has a type, a default and a rule for its values. Anything else (an
unknown key, a wrong type, a value out of range) is refused at once with a
:class:`ConfigError` that names the dotted key and says what is allowed, so a
typo never trains for ten minutes on the wrong settings.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from allfives_env.core import make_rules

OPPONENT_KINDS = ("self", "pool", "random", "greedy", "heuristic")
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


def _positive(x) -> bool:
    return x > 0


def _non_negative(x) -> bool:
    return x >= 0


def _unit(x) -> bool:
    return 0.0 <= x <= 1.0


def _choice(*options):
    return lambda x: x in options


SCHEMA: dict[str, dict[str, Key]] = {
    "run": {
        "name": Key(
            "str",
            "default",
            "a non-empty name without '/'",
            lambda s: bool(s) and "/" not in s,
            help="run directory name",
        ),
        "dir": Key("str", "runs", "a directory path", bool, help="parent of the run directory"),
        "seed": Key("int", 0, "an integer >= 0", _non_negative, help="seeds deals, sampling and initial weights"),
        "device": Key("str", "auto", "'auto', 'cpu' or 'cuda'", _choice("auto", "cpu", "cuda")),
        "threads": Key("int", 1, "an integer >= 0 (0: one per core, up to 2)", _non_negative),
        "max_minutes": Key(
            "float",
            11.0,
            "a positive number of minutes, or null",
            _positive,
            optional=True,
            help="stop early (after a whole update) when training has run this long",
        ),
    },
    "game": {
        "rules": Key("str", "pagat", "'pagat' or 'fives'", _choice("pagat", "fives")),
        "num_players": Key("int", 2, "2, 3 or 4", _choice(2, 3, 4)),
        "partnerships": Key("bool", None, "true, false or null (the rule set's default)", optional=True),
        "target": Key(
            "int", None, "a positive number of points, or null (the rule set's default)", _positive, optional=True
        ),
        "opening": Key("str", None, "'winners_choice', 'descending' (fives only) or null", optional=True),
    },
    "model": {
        "hidden": Key("int", 128, "an integer >= 8", lambda x: x >= 8, help="width of the state trunk and the critic"),
        "action_hidden": Key("int", 64, "an integer >= 8", lambda x: x >= 8, help="width of the shared action head"),
    },
    "train": {
        "total_steps": Key("int", 2_000_000, "a positive integer", _positive, help="learning decisions to collect"),
        "envs": Key("int", 128, "a positive integer", _positive, help="matches played side by side per update"),
        "rollout_workers": Key(
            "int",
            2,
            "a positive integer",
            _positive,
            help="processes that play the matches (this one included); one per core",
        ),
        "epochs": Key("int", 4, "a positive integer", _positive),
        "minibatch": Key("int", 512, "a positive integer", _positive),
        "lr": Key("float", 5e-4, "a positive number", _positive, help="Adam step size at the start"),
        "lr_end": Key("float", 0.0, "a number >= 0", _non_negative, help="step size reached at total_steps (linear)"),
        "gamma": Key("float", 0.99, "a number in [0, 1]", _unit),
        "gae_lambda": Key("float", 0.9, "a number in [0, 1]", _unit),
        "clip": Key("float", 0.2, "a positive number", _positive),
        "value_coef": Key("float", 0.5, "a number >= 0", _non_negative),
        "entropy_coef": Key("float", 0.003, "a number >= 0", _non_negative),
        "max_grad_norm": Key("float", 0.5, "a positive number", _positive),
        "checkpoint_every": Key("int", 1, "a positive integer (updates)", _positive),
    },
    "reward": {
        "points": Key(
            "float",
            1.0,
            "a number >= 0",
            _non_negative,
            help="weight of each step's zero-sum points (own side minus opponents), per target",
        ),
        "win": Key(
            "float", 1.0, "a number >= 0", _non_negative, help="reward for winning the match (minus for losing)"
        ),
    },
    "opponents": {
        "self": Key("float", 0.4, "a number >= 0", _non_negative, help="share of matches against the current network"),
        "pool": Key("float", 0.2, "a number >= 0", _non_negative, help="share against a past snapshot"),
        "random": Key("float", 0.0, "a number >= 0", _non_negative),
        "greedy": Key("float", 0.15, "a number >= 0", _non_negative),
        "heuristic": Key("float", 0.25, "a number >= 0", _non_negative),
        "pool_size": Key("int", 8, "a positive integer", _positive),
        "snapshot_every": Key("int", 4, "a positive integer (updates)", _positive),
    },
    "imitation": {
        "teacher": Key(
            "str",
            "heuristic",
            "'random', 'greedy', 'heuristic' or null (no warm start)",
            _choice("random", "greedy", "heuristic"),
            optional=True,
            help="a bot to imitate before self-play starts",
        ),
        "matches": Key("int", 600, "a positive integer", _positive, help="teacher matches to learn from"),
        "epochs": Key("int", 4, "a positive integer", _positive),
    },
    "eval": {
        "every": Key("int", 40, "an integer >= 0 (updates; 0: only at the end)", _non_negative),
        "matches": Key(
            "int", 50, "a positive integer (duplicate deals, each played in every seat rotation)", _positive
        ),
        "baselines": Key(
            "list",
            ["random", "greedy", "heuristic"],
            f"a list of names from {', '.join(BASELINES)}",
            lambda xs: len(xs) > 0 and all(x in BASELINES for x in xs),
        ),
        "final_matches": Key("int", 400, "an integer >= 0 (0: no final evaluation)", _non_negative),
        "workers": Key("int", 2, "a positive integer", _positive),
        "seed": Key("int", 20_000, "an integer >= 0", _non_negative),
    },
}


def defaults() -> dict:
    return {section: {k: copy.deepcopy(key.default) for k, key in keys.items()} for section, keys in SCHEMA.items()}


def _coerce(dotted: str, key: Key, value):
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
        value = float(value) if ok else value
    elif kind == "str":
        ok = isinstance(value, str)
    elif kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "list":
        ok = isinstance(value, list)
    if not ok:
        raise ConfigError(f"{dotted}: {value!r} has the wrong type ({type(value).__name__}); allowed: {key.allowed}")
    if key.check is not None and not key.check(value):
        raise ConfigError(f"{dotted}: {value!r} is not allowed; allowed: {key.allowed}")
    return value


def set_key(cfg: dict, dotted: str, value) -> None:
    """Set one dotted key after checking it; raise ConfigError naming the key."""
    parts = dotted.split(".")
    if len(parts) != 2 or parts[0] not in SCHEMA:
        sections = ", ".join(SCHEMA)
        raise ConfigError(f"unknown key {dotted!r}: keys are 'section.name' with a section from {sections}")
    section, name = parts
    if name not in SCHEMA[section]:
        names = ", ".join(SCHEMA[section])
        raise ConfigError(f"unknown key {dotted!r}; allowed keys in '{section}': {names}")
    cfg[section][name] = _coerce(dotted, SCHEMA[section][name], value)


def merge(cfg: dict, tree, where: str = "") -> None:
    """Merge a nested mapping (a YAML file's contents) into ``cfg``, checking every key."""
    if tree is None:
        return
    if not isinstance(tree, dict):
        raise ConfigError(f"{where or 'the config'} must be a mapping of sections, got {type(tree).__name__}")
    for section, values in tree.items():
        if section not in SCHEMA:
            raise ConfigError(f"unknown section {section!r}{where and ' in ' + where}; allowed: {', '.join(SCHEMA)}")
        if not isinstance(values, dict):
            raise ConfigError(f"section {section!r} must be a mapping of keys, got {type(values).__name__}")
        for name, value in values.items():
            set_key(cfg, f"{section}.{name}", value)


def parse_override(text: str) -> tuple[str, Any]:
    """Read ``key=value``; the value is read as YAML (so 3, 0.5, true, null and [a, b] work)."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like section.key=value")
    key, raw = text.split("=", 1)
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError as error:
        raise ConfigError(f"{key.strip()}: cannot read value {raw!r}: {error}") from None
    return key.strip(), value


def load_config(path: str | Path | None = None, overrides: list[str] = ()) -> dict:
    """Defaults, then the YAML file, then ``key=value`` overrides; all checked, then checked as a whole."""
    cfg = defaults()
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {str(path)!r} does not exist")
        try:
            tree = yaml.safe_load(path.read_text())
        except yaml.YAMLError as error:
            raise ConfigError(f"config file {str(path)!r} is not valid YAML: {error}") from None
        merge(cfg, tree, where=str(path))
    for text in overrides:
        set_key(cfg, *parse_override(text))
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


def rules_of(cfg: dict):
    g = cfg["game"]
    return make_rules(g["rules"], g["num_players"], g["partnerships"], g["target"], g["opening"])


def to_yaml(cfg: dict) -> str:
    return yaml.safe_dump(cfg, sort_keys=False)
