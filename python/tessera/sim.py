"""The GPU-exact emulator: kernel[grid](..., backend="sim") runs the kernel's real NVPTX or AMDGPU code on the host
(docs/Sim.md), with memory checks, race checks and memory-efficiency counters.

    add[(tessera.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, backend="sim")                # sm_90a, checks on
    add[(tessera.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, backend="sim", arch="gfx942")
    report = tessera.sim.last_report()
    report["global_load_efficiency"], report["shared_bank_conflicts"]
    print(report.table())

A launch whose checks find something raises tessera.Error with the findings; last_report() still has them.
"""

from . import _C

ARCHS = tuple(_C.sim_archs())
"""The archs the emulator models, the default first."""

_last = None


class Report(dict):
    """The counters and findings of one emulated launch, as a dict: global_load_efficiency and
    global_store_efficiency (requested bytes / transferred 32-byte sector bytes, 0..1), shared_bank_conflicts
    (extra wavefronts), barriers, global_loads / global_stores / shared_loads / shared_stores (the detail),
    global_access_widths, warp_instructions, ops (the same counters per tile-IR op, with op and location),
    findings (kind, kernel, program, warp, lane, access, op, file, line, location, message, text), finding_counts,
    output (what the kernel printed), and kernel, target, arch, checks, grid.

    table() is the counters as a text table; str() adds the findings.
    """

    def __init__(self, data, table, text):
        super().__init__(data)
        self._table = table
        self._text = text

    def table(self):
        return self._table

    def __str__(self):
        return self._text


def last_report():
    """The report of the last launch with backend="sim" (also one that failed its checks), or None when there was
    none or the last one stopped before its kernel ran (a bad argument, a compile error)."""
    return _last


def runtime(target=None, arch=None, checks=True):
    """The emulator for arch (or target's default arch; sm_90a when neither is given), with checks on or off.
    Raises tessera.Error for an arch or target it does not model, TypeError for a checks value other than a bool."""
    if type(checks) is not bool:
        raise TypeError("checks must be True or False: the emulator turns its checks (alignment, shared-memory races "
                        "and bounds, uninitialized shared reads, barrier divergence) on or off together, and always "
                        f"checks global bounds; got {checks!r}")
    for name, value in (("target", target), ("arch", arch)):
        if value is not None and type(value) is not str:
            raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    return _C.sim_runtime(target or "", arch or "", checks)


def launch(jit_kernel, grid, args, constants, num_warps, sim_runtime, fast_math=True):
    """Runs one launch on sim_runtime (copying host arrays in and back) and keeps its report for last_report()."""
    global _last
    _last = None
    sim_runtime.take_report()  # a report left by an earlier launch on this runtime is not this launch's
    try:
        jit_kernel.launch_sim(grid, args, constants, num_warps, sim_runtime, fast_math)
    finally:
        taken = sim_runtime.take_report()
        _last = Report(*taken) if taken is not None else None
