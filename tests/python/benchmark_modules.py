"""The benchmark scripts (benchmarks/*.py) loaded as modules, and torch with device="cuda" meaning the CPU, for
tests that run the scripts' GPU code without a GPU."""

import importlib.util
import pathlib
import types

BENCH_DIR = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


def load(name, module_name=None):
    """benchmarks/<name>.py, executed afresh (it imports whatever `triton` sys.modules holds at the time)."""
    spec = importlib.util.spec_from_file_location(module_name or name, BENCH_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Event:
    """torch.cuda.Event's record and query, for work that is always done (or, with done=False, never)."""

    def __init__(self, done=True):
        self.done = done

    def record(self):
        pass

    def query(self):
        return self.done


class CpuTorch:
    """torch with device="cuda" dropped and a no-op cuda.synchronize, for running a benchmark's GPU code on CPU
    tensors (launched on the emulator)."""

    def __init__(self, torch):
        self._torch = torch
        self.cuda = types.SimpleNamespace(synchronize=lambda: None, Event=Event)

    def __getattr__(self, name):
        attr = getattr(self._torch, name)
        if name in ("randn", "empty", "ones", "full", "zeros"):
            return lambda *args, device=None, **kwargs: attr(*args, **kwargs)
        return attr
