"""The GPU-exact emulator: kernel[grid](..., backend="sim") runs the kernel's real NVPTX or AMDGPU code on the host
(docs/Sim.md), with memory checks, race checks and memory-efficiency counters.

    add[(tessera.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, backend="sim")                # sm_90a, checks on
    add[(tessera.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, backend="sim", arch="gfx942")
    report = tessera.sim.last_report()
    report["global_load_efficiency"], report["shared_bank_conflicts"]
    print(report.table())

A launch whose checks find something raises tessera.Error with the findings; last_report() still has them.
TESSERA_SIM_ARCH, when set, is the arch of launches that name neither target nor arch.
"""

import contextlib
import os

from . import _C

ARCHS = tuple(_C.sim_archs())
"""The archs the emulator models, the default first."""

_last = None
_collectors = []  # the report lists of the open collect() blocks


class Report(dict):
    """The counters and findings of one emulated launch, as a dict: global_load_efficiency and
    global_store_efficiency (requested bytes / transferred 32-byte sector bytes, 0..1), shared_bank_conflicts
    (extra wavefronts), barriers, global_loads / global_stores / shared_loads / shared_stores (the detail),
    global_access_widths, warp_instructions, ops (the same counters per tile-IR op, with op and location),
    findings (kind, kernel, program, warp, lane, access, op, file, line, location, message, text), finding_counts,
    output (what the kernel printed), and kernel, target, arch, checks ({name: on} for CHECKS), grid.

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


@contextlib.contextmanager
def collect():
    """Collects the reports of the emulated launches made inside the block:

        with tessera.sim.collect() as reports:
            ...launches with backend="sim"...
        print(tessera.sim.summary(reports))
    """
    reports = []
    _collectors.append(reports)
    try:
        yield reports
    finally:
        _collectors.remove(reports)


def _efficiency(counters):
    """Requested / transferred bytes of a list of global_loads or global_stores dicts; 1 without a request."""
    sectors = sum(c["sectors"] for c in counters)
    return sum(c["requested_bytes"] for c in counters) / (32 * sectors) if sectors else 1.0


def summary(reports):
    """One line per kernel and arch of the reports (launches merged): the global load and store efficiency over
    all their requests, shared-memory bank conflicts and barriers."""
    kernels = {}
    for r in reports:
        kernels.setdefault((r["kernel"], r["arch"]), []).append(r)
    lines = [f"{'kernel':<28} {'arch':<7} {'launches':>8} {'ld.eff':>7} {'st.eff':>7} {'bank conflicts':>14} "
             f"{'barriers':>9}"]
    for (kernel, arch), rs in kernels.items():
        lines.append(f"{kernel:<28} {arch:<7} {len(rs):>8} {_efficiency([r['global_loads'] for r in rs]):>7.3f} "
                     f"{_efficiency([r['global_stores'] for r in rs]):>7.3f} "
                     f"{sum(r['shared_bank_conflicts'] for r in rs):>14} {sum(r['barriers'] for r in rs):>9}")
    return "\n".join(lines)


CHECKS = ("memcheck", "racecheck", "initcheck", "synccheck")
"""The emulator's checks, like compute-sanitizer's tools: memcheck (misaligned accesses), racecheck (shared-memory
races, cp.async data read before its wait), initcheck (shared bytes read before this program wrote them) and
synccheck (barrier divergence, shuffles reading lanes outside their mask). Out-of-bounds accesses and warp
collectives that never complete or whose lanes disagree are reported whatever the selection."""


def _checks_text(checks):
    """checks= as the runtime names it: True (all), False (none), a dict turning named checks on or off (the
    others stay on), or a collection of the names to run (the others off)."""
    if type(checks) is bool:
        return "all" if checks else "none"
    if isinstance(checks, dict):
        selected = dict.fromkeys(CHECKS, True)
        for name, on in checks.items():
            if name not in selected:
                raise ValueError(f"unknown check {name!r}: expected one of {', '.join(CHECKS)}")
            if type(on) is not bool:
                raise TypeError(f"checks[{name!r}] must be True or False, got {on!r}")
            selected[name] = on
    elif isinstance(checks, (list, tuple, set, frozenset)):
        unknown = [n for n in checks if n not in CHECKS]
        if unknown:
            raise ValueError(f"unknown check {unknown[0]!r}: expected one of {', '.join(CHECKS)}")
        selected = {name: name in checks for name in CHECKS}
    else:
        raise TypeError("checks must be True, False, a dict of check names to True/False, or a collection of check "
                        f"names ({', '.join(CHECKS)}); got {checks!r}")
    on = [name for name in CHECKS if selected[name]]
    return ",".join(on) if on else "none"


def runtime(target=None, arch=None, checks=True):
    """The emulator for arch (or target's default arch; TESSERA_SIM_ARCH or sm_90a when neither is given), running
    checks (see CHECKS and _checks_text: True, False, {"racecheck": False}, ("memcheck",)...). Raises tessera.Error
    for an arch or target it does not model, TypeError or ValueError for a checks value that names no checks."""
    text = _checks_text(checks)
    for name, value in (("target", target), ("arch", arch)):
        if value is not None and type(value) is not str:
            raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if target is None and arch is None:
        arch = os.environ.get("TESSERA_SIM_ARCH") or None
    return _C.sim_runtime(target or "", arch or "", text)


def launch(jit_kernel, grid, args, constants, num_warps, sim_runtime, fast_math=True, num_stages=3, persistent=False,
           warp_specialize=False, ping_pong=False, matrix_instr_nonkdim=0):
    """Runs one launch on sim_runtime (copying host arrays in and back) and keeps its report for last_report()."""
    global _last
    _last = None
    sim_runtime.take_report()  # a report left by an earlier launch on this runtime is not this launch's
    try:
        jit_kernel.launch_sim(grid, args, constants, num_warps, sim_runtime, fast_math, num_stages, persistent,
                              warp_specialize, ping_pong, matrix_instr_nonkdim)
    finally:
        taken = sim_runtime.take_report()
        _last = Report(*taken) if taken is not None else None
        if _last is not None:
            for reports in _collectors:
                reports.append(_last)
