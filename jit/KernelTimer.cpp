#include "jit/KernelTimer.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "ir/Error.h"

namespace tessera::jit {

BenchPlan planBench(double estimateMs, const BenchSettings& settings) {
  const double perRun = std::max(estimateMs, 1e-6);  // a launch takes at least a nanosecond
  auto fit = [&](double budget) {
    return static_cast<int>(std::clamp(std::ceil(budget / perRun), double(settings.minRepetitions),
                                       double(settings.maxRepetitions)));
  };
  return {fit(settings.warmupMs), fit(settings.measureMs)};
}

double medianOf(std::vector<double> values) {
  if (values.empty()) throw Error("median of no measurements");
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double benchLaunch(const std::function<void()>& launch, TimingClock& clock, const BenchSettings& settings) {
  // The estimate: a few launches between two events (with the flushes they will have later).
  clock.reserveSlots(std::max<size_t>(1, settings.minRepetitions));
  clock.markStart(0);
  for (int i = 0; i < settings.estimateRuns; ++i) {
    clock.flushCache();
    launch();
  }
  clock.markEnd(0);
  const BenchPlan plan = planBench(clock.elapsedMs(0) / std::max(1, settings.estimateRuns), settings);
  for (int i = 0; i < plan.warmups; ++i) launch();
  clock.reserveSlots(plan.repetitions);
  for (int i = 0; i < plan.repetitions; ++i) {
    clock.flushCache();  // outside the events: the flush is not the kernel's time
    clock.markStart(i);
    launch();
    clock.markEnd(i);
  }
  std::vector<double> times;
  for (int i = 0; i < plan.repetitions; ++i) times.push_back(clock.elapsedMs(i));
  return medianOf(times);
}

ClockTimer::ClockTimer(std::unique_ptr<TimingClock> clock, BenchSettings settings)
    : clock_(std::move(clock)), settings_(settings) {}

double ClockTimer::milliseconds(const std::function<void()>& launch) {
  return benchLaunch(launch, *clock_, settings_);
}

namespace {

// Events and a flush buffer of a GPU API: `Api` is CudaDriver or HipRuntime, which spell these alike.
template <typename Api>
class EventClock : public TimingClock {
 public:
  explicit EventClock(Api& api) : api_(api) {}
  ~EventClock() override {
    for (auto& [start, end] : events_) {
      api_.destroyEvent(start);
      api_.destroyEvent(end);
    }
    api_.release(flush_);
  }

  void flushCache() override {
    if (!flush_) flush_ = api_.allocate(kFlushBytes);  // on first use: making a clock costs nothing
    api_.fillBytes(flush_, 0, kFlushBytes);
  }
  // The default stream, where JitKernel launches unless told otherwise.
  void markStart(size_t slot) override { api_.recordEvent(events_.at(slot).first, nullptr); }
  void markEnd(size_t slot) override { api_.recordEvent(events_.at(slot).second, nullptr); }
  double elapsedMs(size_t slot) override {
    return api_.elapsedMilliseconds(events_.at(slot).first, events_.at(slot).second);
  }
  void reserveSlots(size_t count) override {
    while (events_.size() < count) events_.emplace_back(api_.createEvent(), api_.createEvent());
  }

 private:
  // Larger than any GPU's L2 (50 MB on an H100, 256 MB of Infinity Cache on an MI300X).
  static constexpr size_t kFlushBytes = size_t(256) << 20;
  using Event = decltype(std::declval<Api&>().createEvent());
  Api& api_;
  decltype(std::declval<Api&>().allocate(0)) flush_{};
  std::vector<std::pair<Event, Event>> events_;
};

}  // namespace

std::unique_ptr<TimingClock> makeCudaEventClock(CudaDriver& driver) {
  return std::make_unique<EventClock<CudaDriver>>(driver);
}
std::unique_ptr<TimingClock> makeHipEventClock(HipRuntime& hip) { return std::make_unique<EventClock<HipRuntime>>(hip); }

}  // namespace tessera::jit
