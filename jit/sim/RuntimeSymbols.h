// The emulator runtime's functions (jit/sim/runtime/), by their SimABI.h names: what HostJit resolves a
// rewritten kernel's __tsim_* calls to.
#pragma once

#include "jit/sim/HostJit.h"

namespace tessera::sim {

// Every function SimABI.h declares, with its address in this process.
const RuntimeSymbols& runtimeSymbols();

}  // namespace tessera::sim
