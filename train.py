"""Train an All Fives policy by self-play: ``python train.py`` (two-player pagat, 9-13 minutes on 2 cores).

    python train.py                                   # the default config, configs/default.yaml
    python train.py --config configs/pagat3.yaml      # another config
    python train.py --set train.total_steps=200000    # override any key (value read as YAML) ...
    python train.py --train.total_steps 200000        # ... or as a dotted option
    python train.py --resume runs/default             # continue a stopped run exactly where it stopped

A run writes into ``run.dir/run.name`` (``runs/default``): ``checkpoint.pt``
(the whole training state), ``policy.pt`` (the trained actor, what
``checkpoint:PATH`` plays), ``metrics.csv``, TensorBoard events in ``tb/``,
``learning_curves.png``, ``config.yaml`` and the final evaluation against the
baselines (``eval.md``, and the harness's tables in ``eval/``).

Exit status 2 with one line on stderr: a refused config, override or
checkpoint (nothing in the run directory is touched). Exit status 1 with one
line: a loss or a weight became NaN or infinite (nothing of that state is
saved; the last checkpoint stays).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agents.policy_net import CheckpointError
from allfives_train.checkpoint import read_training_checkpoint
from allfives_train.config import ConfigError, check_whole, load_config, parse_override, set_key
from allfives_train.trainer import CHECKPOINT, Trainer

DEFAULT_CONFIG = Path(__file__).resolve().parent / "configs" / "default.yaml"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Train an All Fives policy by self-play (PPO).",
        epilog="Any config key can also be given as a dotted option: --train.total_steps 200000.",
    )
    p.add_argument("--config", type=Path, default=None, help="YAML config (default: configs/default.yaml)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, e.g. --set train.lr=0.001 (repeatable)")  # fmt: skip
    p.add_argument("--resume", type=Path, default=None, metavar="RUN_DIR",
                   help="continue the run in RUN_DIR (or from this checkpoint file) with its saved config")  # fmt: skip
    p.add_argument("--overwrite", action="store_true", help="start afresh even if the run directory has a checkpoint")
    p.add_argument("--stop-after-updates", type=int, default=None, metavar="N",
                   help="stop (as if killed) after N updates, leaving the checkpoint to --resume from")  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--ray-address", default=None, metavar="ADDRESS",
                   help="with run.backend=ray: the Ray cluster to join (sets run.ray_address)")  # fmt: skip
    return p


def split_dotted(extra: list[str]) -> list[str]:
    """``--section.key value`` / ``--section.key=value`` options as ``section.key=value`` overrides."""
    out, i = [], 0
    while i < len(extra):
        token = extra[i]
        if not token.startswith("--") or "." not in token.split("=", 1)[0]:
            raise ConfigError(f"unrecognized argument {token!r}; config keys are given as --section.key VALUE")
        if "=" in token:
            out.append(token[2:])
            i += 1
        elif i + 1 < len(extra):
            out.append(f"{token[2:]}={extra[i + 1]}")
            i += 2
        else:
            raise ConfigError(f"option {token!r} needs a value")
    return out


def _fail(error: BaseException, status: int = 2) -> int:
    """Report a refusal on one stderr line (the message names what was wrong and what is allowed)."""
    text = " ".join(str(error).splitlines())
    print(f"train.py: error: {text}", file=sys.stderr)
    return status


def main(argv: list[str] | None = None) -> int:
    args, extra = parser().parse_known_args(argv)
    try:
        if args.stop_after_updates is not None and args.stop_after_updates < 0:
            raise ConfigError(f"--stop-after-updates {args.stop_after_updates}: allowed: a whole number >= 0")
        overrides = args.overrides + split_dotted(extra)
        if args.ray_address is not None:
            overrides.append(f"run.ray_address={json.dumps(args.ray_address)}")
        if args.resume is not None:
            if args.config is not None:
                raise ConfigError("--resume uses the run's saved config; give changes with --set, not --config")
            path = args.resume / CHECKPOINT if args.resume.is_dir() else args.resume
            data = read_training_checkpoint(path)
            cfg = data["training"]["config"]
            for text in overrides:
                set_key(cfg, *parse_override(text))
            check_whole(cfg)
            run_dir = path.parent
        else:
            cfg = load_config(args.config or DEFAULT_CONFIG, overrides)
            run_dir = Path(cfg["run"]["dir"]) / cfg["run"]["name"]
            if (run_dir / CHECKPOINT).exists() and not args.overwrite:
                raise ConfigError(
                    f"run directory {str(run_dir)!r} already holds a checkpoint; continue it with --resume {run_dir}, "
                    "start it again with --overwrite, or choose another run.name"
                )
            path = None
    except (ConfigError, CheckpointError) as error:
        return _fail(error)
    try:
        trainer = Trainer(cfg, run_dir, resume_from=path, progress=not args.no_progress)
    except (CheckpointError, ValueError) as error:  # a checkpoint that changed since it was read; no CUDA
        return _fail(error)
    print(f"training in {run_dir} on {trainer.device} ({cfg['game']['rules']}, {cfg['game']['num_players']} players); "
          f"{cfg['train']['total_steps']:,} learning decisions", flush=True)  # fmt: skip
    try:
        if not trainer.run(stop_after=args.stop_after_updates):
            print(f"stopped after update {trainer.iteration}; continue with: python train.py --resume {run_dir}")
            return 0
        out = trainer.finish()
    except FloatingPointError as error:  # a loss or a weight became NaN or infinite: nothing was saved
        return _fail(error, status=1)
    finally:
        trainer.close()
    for key in ("checkpoint", "policy", "plot", "eval"):
        if key in out:
            print(f"{key}: {out[key]}")
    if "table" in out:
        print(out["table"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
