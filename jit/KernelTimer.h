// Timing one kernel launch the way Triton's do_bench does: estimate the launch's time, warm up for a time budget,
// then time repetitions, each after flushing the L2 cache so that every run starts cold, and report the median.
// The device side (flushing, events) sits behind TimingClock, so the procedure itself is tested with a fake
// clock; the CUDA and HIP clocks time with the API's events (DeviceRuntime::makeTimingClock gives a runtime's).
// The emulator and the interpreter have no meaningful clock: the autotuner takes an injected KernelTimer for them
// (tests pass fakes).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "jit/CudaDriver.h"
#include "jit/HipRuntime.h"

namespace tessera::jit {

// How long to warm up and to measure (Triton's defaults: 25 ms and 100 ms).
struct BenchSettings {
  double warmupMs = 25;
  double measureMs = 100;
  int minRepetitions = 5;
  int maxRepetitions = 1000;
  int estimateRuns = 5;  // launches timed together first, to size the warmup and the repetitions
};

// Measures one launch's time in milliseconds.
class KernelTimer {
 public:
  virtual ~KernelTimer() = default;
  virtual double milliseconds(const std::function<void()>& launch) = 0;
};

// The device operations do_bench needs.
class TimingClock {
 public:
  virtual ~TimingClock() = default;
  virtual void flushCache() = 0;                 // enqueue an L2 flush (a write over a buffer larger than L2)
  virtual void markStart(size_t slot) = 0;       // enqueue a start event in `slot`
  virtual void markEnd(size_t slot) = 0;         // enqueue an end event in `slot`
  virtual double elapsedMs(size_t slot) = 0;     // waits for the slot's end event
  virtual void reserveSlots(size_t count) = 0;   // before the marks of slots 0 .. count - 1
};

struct BenchPlan {
  int warmups = 0;
  int repetitions = 0;
};
// How many warmup launches and timed repetitions fit the settings' budgets for a launch of `estimateMs`.
BenchPlan planBench(double estimateMs, const BenchSettings& settings);

double medianOf(std::vector<double> values);  // throws on an empty vector

// do_bench on `clock`.
double benchLaunch(const std::function<void()>& launch, TimingClock& clock, const BenchSettings& settings = {});

// A KernelTimer over a TimingClock.
class ClockTimer : public KernelTimer {
 public:
  ClockTimer(std::unique_ptr<TimingClock> clock, BenchSettings settings = {});
  double milliseconds(const std::function<void()>& launch) override;

 private:
  std::unique_ptr<TimingClock> clock_;
  BenchSettings settings_;
};

// CUDA events on the default stream (where JitKernel launches unless told otherwise) and a 256 MB flush buffer.
std::unique_ptr<TimingClock> makeCudaEventClock(CudaDriver& driver);
// HIP events on the default stream and a 256 MB flush buffer.
std::unique_ptr<TimingClock> makeHipEventClock(HipRuntime& hip);

}  // namespace tessera::jit
