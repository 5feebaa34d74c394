#include "jit/sim/RuntimeSymbols.h"

#include "jit/sim/SimABI.h"

namespace tessera::sim {

const RuntimeSymbols& runtimeSymbols() {
#define TSIM_SYMBOL(fn) {#fn, reinterpret_cast<const void*>(&fn)}
  static const RuntimeSymbols symbols = {
      TSIM_SYMBOL(__tsim_thread_id),        TSIM_SYMBOL(__tsim_threads_per_program), TSIM_SYMBOL(__tsim_program_id),
      TSIM_SYMBOL(__tsim_num_programs),     TSIM_SYMBOL(__tsim_lane_id),             TSIM_SYMBOL(__tsim_warp_id),
      TSIM_SYMBOL(__tsim_shared_base),      TSIM_SYMBOL(__tsim_load),                TSIM_SYMBOL(__tsim_store),
      TSIM_SYMBOL(__tsim_atomic_rmw),       TSIM_SYMBOL(__tsim_atomic_cas),          TSIM_SYMBOL(__tsim_memset),
      TSIM_SYMBOL(__tsim_memcpy),           TSIM_SYMBOL(__tsim_barrier),             TSIM_SYMBOL(__tsim_warp_sync),
      TSIM_SYMBOL(__tsim_shuffle),          TSIM_SYMBOL(__tsim_vote),                TSIM_SYMBOL(__tsim_bpermute),
      TSIM_SYMBOL(__tsim_ldmatrix),         TSIM_SYMBOL(__tsim_mma),                 TSIM_SYMBOL(__tsim_cp_async),
      TSIM_SYMBOL(__tsim_cp_async_commit),  TSIM_SYMBOL(__tsim_cp_async_wait),       TSIM_SYMBOL(__tsim_vprintf),
      TSIM_SYMBOL(__tsim_assert_fail),      TSIM_SYMBOL(__tsim_trap),                TSIM_SYMBOL(__tsim_dispatch_ptr),
      TSIM_SYMBOL(__tsim_implicitarg_ptr),  TSIM_SYMBOL(__tsim_wgmma_fence),          TSIM_SYMBOL(__tsim_wgmma_commit),
      TSIM_SYMBOL(__tsim_wgmma_wait),       TSIM_SYMBOL(__tsim_wgmma_mma),            TSIM_SYMBOL(__tsim_wgmma_register_read),
      TSIM_SYMBOL(__tsim_implicitarg_ptr),  TSIM_SYMBOL(__tsim_mbarrier_init),       TSIM_SYMBOL(__tsim_mbarrier_arrive),
      TSIM_SYMBOL(__tsim_mbarrier_try_wait_parity),                                   TSIM_SYMBOL(__tsim_bulk_tensor_copy),
      TSIM_SYMBOL(__tsim_bulk_tensor_store),
      TSIM_SYMBOL(__tsim_stmatrix),         TSIM_SYMBOL(__tsim_named_barrier),       TSIM_SYMBOL(__tsim_setmaxnreg),
      TSIM_SYMBOL(__tsim_named_barrier_arrive),
      TSIM_SYMBOL(__tsim_cluster_query),    TSIM_SYMBOL(__tsim_cluster_arrive),      TSIM_SYMBOL(__tsim_cluster_wait),
      TSIM_SYMBOL(__tsim_mbarrier_arrive_cluster), TSIM_SYMBOL(__tsim_bulk_tensor_copy_multicast),
  };
#undef TSIM_SYMBOL
  return symbols;
}

}  // namespace tessera::sim
