"""What one ``plboost train`` resolves and where its parameters go: objects built, and the modules a value reaches.

    python scripts/run_walk.py [--objective plrank] [--engine lightgbm]

Trains ``plboost train --objective OBJECTIVE --param top_k=7 --learning-rate 0.0517 --rounds 2`` on a small
synthetic file and prints (1) how many times the objective's class and :class:`plboost.TrainingSettings` were
constructed, those inside ``__deepcopy__`` (the engine's copies of its parameters) counted apart, and (2) the
plboost modules, in the order first reached, whose functions receive the learning rate or ``top_k`` in an argument
(the value itself, a ``KEY=VALUE`` text, or a container, dataclass or plboost object holding it, three levels
deep). The values are chosen to be unlikely elsewhere; a module reached by coincidence would count too.
"""

from __future__ import annotations

import argparse
import collections
import functools
import sys
import tempfile
import traceback
from dataclasses import fields, is_dataclass
from pathlib import Path

LEARNING_RATE, TOP_K = 0.0517, 7


def holds(value, target, depth: int = 0) -> bool:
    """Whether ``value`` is ``target``, its text, or holds it (containers, dataclasses, plboost objects)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)) and type(value) is type(target) and value == target:
        return True
    if isinstance(value, str):
        return value.endswith(f"={target}") or value == str(target)
    if depth > 2:
        return False
    if isinstance(value, dict) or type(value).__name__ == "mappingproxy":
        return any(holds(v, target, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds(v, target, depth + 1) for v in value[:50])
    if is_dataclass(value) and not isinstance(value, type):
        return any(holds(getattr(value, f.name, None), target, depth + 1) for f in fields(value))
    state = getattr(value, "__dict__", None) if type(value).__module__.startswith("plboost") else None
    return isinstance(state, dict) and any(holds(v, target, depth + 1) for k, v in state.items()
                                           if not k.startswith("_"))


def count_builds(classes) -> collections.Counter:
    """Wrap each class's ``__init__`` to count constructions, by (class name, inside ``__deepcopy__``)."""
    counts = collections.Counter()
    for cls in classes:
        original = cls.__init__

        @functools.wraps(original)
        def counted(self, *args, _original=original, _name=cls.__name__, **kwargs):
            copying = any(frame.name == "__deepcopy__" for frame in traceback.extract_stack())
            counts[_name, copying] += 1
            _original(self, *args, **kwargs)

        cls.__init__ = counted
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objective", default="plrank", help="a plboost objective with a top_k parameter")
    parser.add_argument("--engine", default="lightgbm")
    args = parser.parse_args(argv)

    from plboost.cli import main as plboost_main
    from plboost.data import make_synthetic
    from plboost.engines.settings import TrainingSettings
    from plboost.objectives import OBJECTIVES

    if args.objective not in OBJECTIVES or "top_k" not in OBJECTIVES[args.objective]().get_params():
        parser.error(f"--objective: {args.objective!r} is not a plboost objective with a top_k parameter")
    counts = count_builds([OBJECTIVES[args.objective], TrainingSettings])
    reached = {"learning_rate": [], "top_k": []}
    busy = [False]

    def tracer(frame, event, _):
        module = frame.f_globals.get("__name__", "")
        if event != "call" or busy[0] or not module.startswith("plboost"):
            return None
        busy[0] = True
        try:
            code = frame.f_code
            values = [frame.f_locals.get(n) for n in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]]
            for name, target in (("learning_rate", LEARNING_RATE), ("top_k", TOP_K)):
                if module not in reached[name] and any(holds(v, target) for v in values):
                    reached[name].append(module)
        finally:
            busy[0] = False
        return None

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "train.txt"
        make_synthetic(n_queries=30, n_features=4, seed=1).save_svmlight(path)
        command = ["train", "--train", str(path), "--objective", args.objective, "--param", f"top_k={TOP_K}",
                   "--engine", args.engine, "--learning-rate", str(LEARNING_RATE), "--rounds", "2", "--quiet"]
        sys.settrace(tracer)
        try:
            status = plboost_main(command)
        finally:
            sys.settrace(None)
    if status != 0:
        raise SystemExit(f"plboost {' '.join(command)} exited with {status}")
    print(f"plboost train --objective {args.objective} --param top_k={TOP_K} --engine {args.engine}")
    for (name, copying), number in sorted(counts.items()):
        print(f"  {name} built {number} time(s){' in the engine copying its parameters' if copying else ''}")
    for name, modules in reached.items():
        print(f"  {name} reaches {len(modules)} modules: {', '.join(m.removeprefix('plboost.') for m in modules)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
