// gRPC C-core's own client in the bench: grpc.testing.TestService/UnaryCall on gRPC C++ 1.51
// (Debian libgrpc++-dev), measured the way BenchClient measures the Swift clients, so its rows sit
// next to theirs in one run. bench.py builds it with protoc, grpc_cpp_plugin, g++ and pkg-config
// into Benchmarks/.build/cxx-client (never committed).
//
// Usage (BenchClient's `load`, `inflight` and `sequential` command lines):
//   bench_client load --impl ccore-callback|ccore-cq --transport h2c|tls --port P --ca CA.pem
//                --calls N --concurrency C [--warmup W] [--request-bytes B] [--response-bytes B]
//                [--ports P1,P2,... --lb pick_first|round_robin]
//   bench_client inflight --impl ccore-cq --transport h2c|tls --port P --ca CA.pem --calls N [--warmup W]
//   bench_client sequential --impl ccore-cq --transport h2c|tls --port P --ca CA.pem --calls N
//                [--sample-every K] [--warmup W]
//
//   ccore-callback  the callback API (stub->async()->UnaryCall): C calls started, each completion
//                   (on gRPC's own threads) records its latency and starts the next call;
//   ccore-cq        the completion-queue API: one CompletionQueue polled by the calling thread,
//                   which starts C calls and starts the next one as each completes.
//
// One channel, one connection (127.0.0.1:P for h2c, localhost:P with the CA for TLS), every call
// with a fresh ClientContext carrying the same bearer token as the other clients. W warm-up calls
// one at a time, then the timed calls. Prints one JSON line: calls/s, p50/p99, CPU per call from
// getrusage(RUSAGE_SELF, every thread) around the timed calls only, context switches, and, when
// libMallocCounter.so is preloaded, mallocs/frees/bytes per call read (dlsym
// malloc_counter_snapshot) just before and after the timed calls.
//
// `inflight` is the memory phase's shape (BenchClient's InFlightRun): N calls carrying
// `x-bench-hold`, which the C++ bench server parks, started on one completion queue; once the
// server counts all of them (`x-bench-control: held`), RSS (/proc/self/statm) and live heap are
// read, then the calls are released (`x-bench-control: release`) and drained. Per-call growth is
// everything C-core holds for a call in flight, its ClientContext included (no task to subtract).
//
// `--ports` (h2c) makes the channel's target `ipv4:127.0.0.1:P1,127.0.0.1:P2,...` with C-core's
// `--lb` policy, as BenchClient does for swift-authrpc's round-robin. `sequential` is the long-run
// leak check (BenchClient's SequentialRun): N calls one after another on one completion queue,
// RSS, live heap (with the counter) and open descriptors sampled every K calls.

#include <dirent.h>
#include <dlfcn.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "MallocCounter.h"
#include "grpc/testing/interop.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
using grpc::testing::SimpleRequest;
using grpc::testing::SimpleResponse;
using grpc::testing::TestService;

constexpr const char* kToken = "bench-token-0123456789abcdef0123456789abcdef";
constexpr int kMaxMessageBytes = 64 << 20;

[[noreturn]] void Fail(const std::string& message) {
  std::cerr << "bench_client: " << message << "\n"
            << "usage: bench_client load --impl ccore-callback|ccore-cq --transport h2c|tls --port P --ca CA.pem "
               "--calls N --concurrency C [--warmup W] [--request-bytes B] [--response-bytes B] "
               "[--ports P1,P2,... --lb pick_first|round_robin]\n"
               "       bench_client inflight|sequential --impl ccore-cq --transport h2c|tls --port P --ca CA.pem "
               "--calls N [--warmup W] [--sample-every K]\n";
  std::exit(2);
}

// A run that went wrong (the server's answer, a timeout): exit 1, no usage.
[[noreturn]] void Die(const std::string& message) {
  std::cerr << "bench_client: " << message << "\n";
  std::exit(1);
}

// `--name value` pairs.
class Options {
 public:
  Options(int argc, char** argv) {
    for (int i = 2; i < argc; i += 2) {
      std::string name = argv[i];
      if (name.rfind("--", 0) != 0 || i + 1 >= argc) Fail("expected --name value, got " + name);
      values_[name.substr(2)] = argv[i + 1];
    }
  }

  std::string String(const std::string& name, const char* fallback = nullptr) const {
    auto found = values_.find(name);
    if (found != values_.end()) return found->second;
    if (fallback == nullptr) Fail("--" + name + " is required");
    return fallback;
  }

  long Int(const std::string& name, long fallback = -1) const {
    auto found = values_.find(name);
    if (found == values_.end()) {
      if (fallback < 0) Fail("--" + name + " is required");
      return fallback;
    }
    char* end = nullptr;
    long value = std::strtol(found->second.c_str(), &end, 10);
    if (end == found->second.c_str() || *end != '\0' || value < 0) {
      Fail("--" + name + " must be a non-negative integer, got " + found->second);
    }
    return value;
  }

 private:
  std::map<std::string, std::string> values_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) Fail("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// The preloaded counter's snapshot function, or null without the preload.
using Snapshot = void (*)(malloc_counts*);
Snapshot FindSnapshot() { return reinterpret_cast<Snapshot>(dlsym(RTLD_DEFAULT, "malloc_counter_snapshot")); }

struct Usage {
  double cpu_seconds;
  long context_switches;
};

Usage UsageNow() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& time) { return double(time.tv_sec) + double(time.tv_usec) / 1e6; };
  return {seconds(usage.ru_utime) + seconds(usage.ru_stime), usage.ru_nvcsw + usage.ru_nivcsw};
}

double Microseconds(Clock::duration duration) {
  return std::chrono::duration<double, std::micro>(duration).count();
}

void Configure(grpc::ClientContext& context) {
  context.AddMetadata("authorization", std::string("Bearer ") + kToken);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
}

void CheckStatus(const grpc::Status& status, const SimpleResponse& response, long response_bytes) {
  if (!status.ok()) Die("call failed: " + std::to_string(status.error_code()) + " " + status.error_message());
  if (long(response.payload().body().size()) != response_bytes) {
    Die("response of " + std::to_string(response.payload().body().size()) + " bytes, asked for " +
         std::to_string(response_bytes));
  }
}

// The work both APIs share: tickets handed out once each, a latency slot per ticket (allocated
// before the counters are read, so the harness adds no allocation to the figure).
struct Plan {
  TestService::Stub* stub;
  const SimpleRequest* request;
  long calls;
  long response_bytes;
  std::vector<double> latencies;
};

// The callback API: `concurrency` slots, each a chain of calls; a completion records its
// latency and starts the slot's next call from gRPC's callback thread.
class CallbackRun {
 public:
  CallbackRun(Plan& plan, long concurrency) : plan_(plan), slots_(concurrency) {}

  void Run() {
    long started = 0;
    for (auto& slot : slots_) {
      if (!Start(slot)) break;
      ++started;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return idle_slots_ == started; });
  }

 private:
  struct Slot {
    std::unique_ptr<grpc::ClientContext> context;
    SimpleResponse response;
    long ticket = 0;
    Clock::time_point began;
  };

  bool Start(Slot& slot) {
    long ticket = next_.fetch_add(1, std::memory_order_relaxed);
    if (ticket >= plan_.calls) return false;
    slot.ticket = ticket;
    slot.context = std::make_unique<grpc::ClientContext>();
    Configure(*slot.context);
    slot.began = Clock::now();
    plan_.stub->async()->UnaryCall(slot.context.get(), plan_.request, &slot.response,
                                   [this, &slot](grpc::Status status) { Completed(slot, status); });
    return true;
  }

  void Completed(Slot& slot, const grpc::Status& status) {
    plan_.latencies[slot.ticket] = Microseconds(Clock::now() - slot.began);
    CheckStatus(status, slot.response, plan_.response_bytes);
    if (Start(slot)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    ++idle_slots_;
    done_.notify_one();
  }

  Plan& plan_;
  std::vector<Slot> slots_;
  std::atomic<long> next_{0};
  std::mutex mutex_;
  std::condition_variable done_;
  long idle_slots_ = 0;
};

// The completion-queue API: one queue, polled by this thread alone.
class CompletionQueueRun {
 public:
  CompletionQueueRun(Plan& plan, long concurrency) : plan_(plan), slots_(concurrency) {}

  void Run() {
    long outstanding = 0;
    for (auto& slot : slots_) {
      if (!Start(slot)) break;
      ++outstanding;
    }
    void* tag = nullptr;
    bool ok = false;
    while (outstanding > 0) {
      if (!queue_.Next(&tag, &ok)) Die("completion queue shut down");
      if (!ok) Die("a call's Finish did not complete");
      auto& slot = *static_cast<Slot*>(tag);
      plan_.latencies[slot.ticket] = Microseconds(Clock::now() - slot.began);
      CheckStatus(slot.status, slot.response, plan_.response_bytes);
      if (!Start(slot)) --outstanding;
    }
    queue_.Shutdown();
    while (queue_.Next(&tag, &ok)) {
    }
  }

 private:
  struct Slot {
    std::unique_ptr<grpc::ClientContext> context;
    SimpleResponse response;
    grpc::Status status;
    long ticket = 0;
    Clock::time_point began;
  };

  bool Start(Slot& slot) {
    if (next_ >= plan_.calls) return false;
    slot.ticket = next_++;
    slot.context = std::make_unique<grpc::ClientContext>();
    Configure(*slot.context);
    slot.began = Clock::now();
    // The reader lives in the call's arena (gRPC frees it with the call).
    auto reader = plan_.stub->AsyncUnaryCall(slot.context.get(), *plan_.request, &queue_);
    reader->Finish(&slot.response, &slot.status, &slot);
    return true;
  }

  Plan& plan_;
  std::vector<Slot> slots_;
  long next_ = 0;
  grpc::CompletionQueue queue_;
};

long ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

long OpenDescriptors() {
  long count = 0;
  if (DIR* directory = opendir("/proc/self/fd")) {
    while (dirent* entry = readdir(directory)) {
      if (entry->d_name[0] != '.') ++count;
    }
    closedir(directory);
  }
  return count - 1;  // the directory being read
}

// The server's answer to a control command (`held`, `release`): the count in `username`.
long Control(TestService::Stub& stub, const char* command) {
  grpc::ClientContext context;
  Configure(context);
  context.AddMetadata("x-bench-control", command);
  SimpleRequest request;
  SimpleResponse response;
  grpc::Status status = stub.UnaryCall(&context, request, &response);
  if (!status.ok()) Die(std::string("control ") + command + " failed: " + status.error_message());
  return std::stol(response.username().empty() ? "0" : response.username());
}

// N calls parked by the server at once, on one completion queue (see the file's comment).
void InFlight(TestService::Stub& stub, long calls) {
  struct Slot {
    std::unique_ptr<grpc::ClientContext> context;
    SimpleResponse response;
    grpc::Status status;
  };
  std::vector<Slot> slots(static_cast<size_t>(calls));
  SimpleRequest request;
  grpc::CompletionQueue queue;
  const Snapshot snapshot = FindSnapshot();
  malloc_counts before{}, held{};
  if (snapshot) snapshot(&before);
  const long resident_before = ResidentBytes();
  for (auto& slot : slots) {
    slot.context = std::make_unique<grpc::ClientContext>();
    Configure(*slot.context);
    slot.context->AddMetadata("x-bench-hold", "1");
    stub.AsyncUnaryCall(slot.context.get(), request, &queue)->Finish(&slot.response, &slot.status, &slot);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Control(stub, "held") < calls) {
    if (Clock::now() > deadline) Die(std::to_string(calls) + " calls were not all in flight after 120 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the last replies settle
  if (snapshot) snapshot(&held);
  const long resident_held = ResidentBytes();
  const long descriptors = OpenDescriptors();
  const long released = Control(stub, "release");
  if (released != calls) Die("released " + std::to_string(released) + " calls, expected " + std::to_string(calls));
  void* tag = nullptr;
  bool ok = false;
  for (long done = 0; done < calls; ++done) {
    if (!queue.Next(&tag, &ok) || !ok) Die("a parked call did not complete");
    auto& slot = *static_cast<Slot*>(tag);
    if (!slot.status.ok()) Die("a parked call failed: " + slot.status.error_message());
  }
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  const double n = double(calls);
  std::printf(
      "{\"calls\": %ld, \"rss_before_bytes\": %ld, \"rss_held_bytes\": %ld, \"rss_growth_per_call_bytes\": %.4f, "
      "\"fds_held\": %ld, \"malloc_counter\": %s",
      calls, resident_before, resident_held, double(resident_held - resident_before) / n, descriptors,
      snapshot ? "true" : "false");
  if (snapshot) {
    std::printf(", \"heap_growth_per_call_bytes\": %.4f, \"mallocs_per_call_held\": %.4f",
                double(held.live_bytes - before.live_bytes) / n, double(held.allocations - before.allocations) / n);
  }
}

// N calls one after another on one completion queue, sampled every `sample_every` calls into
// storage reserved up front (so sampling never grows the heap it measures); prints the figures
// and samples as BenchClient's SequentialRun does, without the closing brace.
void Sequential(TestService::Stub& stub, const SimpleRequest& request, long calls, long sample_every,
                long response_bytes) {
  struct Sample {
    long calls;
    double seconds;
    long resident;
    long descriptors;
    long long live_heap;
  };
  std::vector<Sample> samples;
  samples.reserve(size_t(calls / sample_every + 1));
  const Snapshot snapshot = FindSnapshot();
  grpc::CompletionQueue queue;
  SimpleResponse response;
  grpc::Status status;
  const auto start = Clock::now();
  const Usage usage_before = UsageNow();
  auto sample = [&](long done) {
    malloc_counts counts{};
    if (snapshot) snapshot(&counts);
    samples.push_back({done, std::chrono::duration<double>(Clock::now() - start).count(), ResidentBytes(),
                       OpenDescriptors(), snapshot ? counts.live_bytes : 0});
  };
  sample(0);
  void* tag = nullptr;
  bool ok = false;
  for (long done = 1; done <= calls; ++done) {
    grpc::ClientContext context;
    Configure(context);
    stub.AsyncUnaryCall(&context, request, &queue)->Finish(&response, &status, &response);
    if (!queue.Next(&tag, &ok) || !ok || tag != &response) Die("a sequential call did not complete");
    CheckStatus(status, response, response_bytes);
    if (done % sample_every == 0) sample(done);
  }
  const Usage usage = UsageNow();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  const double n = double(calls);
  std::printf(
      "{\"calls\": %ld, \"seconds\": %.6f, \"calls_per_second\": %.1f, \"cpu_us_per_call\": %.4f, "
      "\"context_switches_per_call\": %.4f, \"malloc_counter\": %s, \"samples\": [",
      calls, seconds, n / seconds, (usage.cpu_seconds - usage_before.cpu_seconds) * 1e6 / n,
      double(usage.context_switches - usage_before.context_switches) / n, snapshot ? "true" : "false");
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& row = samples[i];
    std::printf("%s{\"calls\": %ld, \"seconds\": %.6f, \"rss_bytes\": %ld, \"fds\": %ld", i ? ", " : "", row.calls,
                row.seconds, row.resident, row.descriptors);
    if (snapshot) std::printf(", \"heap_live_bytes\": %lld", row.live_heap);
    std::printf("}");
  }
  std::printf("]");
}

// `--ports P1,P2,...`: the channel's `ipv4:` target over 127.0.0.1, as BenchClient builds it.
std::string PortsTarget(const std::string& ports) {
  std::string target = "ipv4:";
  size_t begin = 0;
  while (begin <= ports.size()) {
    const size_t end = std::min(ports.find(',', begin), ports.size());
    const std::string port = ports.substr(begin, end - begin);
    if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5) {
      Fail("--ports must be comma-separated port numbers, got " + ports);
    }
    target += (begin ? ",127.0.0.1:" : "127.0.0.1:") + port;
    begin = end + 1;
  }
  return target;
}

void Warmup(TestService::Stub& stub, const SimpleRequest& request, long calls, long response_bytes) {
  for (long i = 0; i < calls; ++i) {
    grpc::ClientContext context;
    Configure(context);
    SimpleResponse response;
    CheckStatus(stub.UnaryCall(&context, request, &response), response, response_bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc < 2 ? "" : argv[1];
  if (mode != "load" && mode != "inflight" && mode != "sequential") Fail("the modes are load, inflight and sequential");
  Options options(argc, argv);
  const std::string impl = options.String("impl");
  const std::string transport = options.String("transport");
  if (impl != "ccore-callback" && impl != "ccore-cq") Fail("--impl must be ccore-callback or ccore-cq");
  if (transport != "h2c" && transport != "tls") Fail("--transport must be h2c or tls");
  const long port = options.Int("port");
  const long calls = options.Int("calls");
  const long concurrency = std::max(1L, options.Int("concurrency", 1));
  if (mode != "load" && impl != "ccore-cq") Fail(mode + " runs ccore-cq");
  const long sample_every = options.Int("sample-every", 10000);
  if (sample_every == 0) Fail("--sample-every must be at least 1");
  const std::string ports = options.String("ports", "");
  const std::string policy = options.String("lb", "pick_first");
  if (policy != "pick_first" && policy != "round_robin") Fail("--lb must be pick_first or round_robin");
  if (!ports.empty() && transport != "h2c") Fail("--ports is for h2c");
  const long warmup = options.Int("warmup", 200);
  const long request_bytes = options.Int("request-bytes", 100);
  const long response_bytes = options.Int("response-bytes", 100);
  if (calls == 0) Fail("--calls must be at least 1");

  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxMessageBytes);
  arguments.SetMaxSendMessageSize(kMaxMessageBytes);
  std::shared_ptr<grpc::Channel> channel;
  if (transport == "tls") {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = ReadFile(options.String("ca"));
    channel = grpc::CreateCustomChannel("localhost:" + std::to_string(port), grpc::SslCredentials(tls), arguments);
  } else {
    arguments.SetLoadBalancingPolicyName(policy);
    const std::string target = ports.empty() ? "127.0.0.1:" + std::to_string(port) : PortsTarget(ports);
    channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), arguments);
  }
  auto stub = TestService::NewStub(channel);
  SimpleRequest request;
  request.set_response_size(int(response_bytes));
  request.mutable_payload()->mutable_body()->assign(size_t(request_bytes), '\0');

  Warmup(*stub, request, warmup, response_bytes);
  if (mode == "sequential") {
    Sequential(*stub, request, calls, sample_every, response_bytes);
    std::printf(", \"impl\": \"%s\", \"transport\": \"%s\"}\n", impl.c_str(), transport.c_str());
    std::fflush(stdout);
    std::_Exit(0);
  }
  if (mode == "inflight") {
    InFlight(*stub, calls);
    std::printf(", \"impl\": \"%s\", \"transport\": \"%s\"}\n", impl.c_str(), transport.c_str());
    std::fflush(stdout);
    std::_Exit(0);
  }

  Plan plan{stub.get(), &request, calls, response_bytes, std::vector<double>(size_t(calls), 0.0)};
  CallbackRun callback_run(plan, concurrency);
  CompletionQueueRun queue_run(plan, concurrency);
  const Snapshot snapshot = FindSnapshot();
  malloc_counts before{}, after{};
  if (snapshot) snapshot(&before);
  const Usage usage_before = UsageNow();
  const auto start = Clock::now();
  if (impl == "ccore-callback") {
    callback_run.Run();
  } else {
    queue_run.Run();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const Usage usage_after = UsageNow();
  if (snapshot) snapshot(&after);

  std::sort(plan.latencies.begin(), plan.latencies.end());
  auto percentile = [&](double p) {
    return plan.latencies[std::min(plan.latencies.size() - 1, size_t(double(plan.latencies.size()) * p))];
  };
  const double n = double(calls);
  std::printf(
      "{\"impl\": \"%s\", \"transport\": \"%s\", \"concurrency\": %ld, \"calls\": %ld, \"seconds\": %.6f, "
      "\"calls_per_second\": %.1f, \"p50_us\": %.1f, \"p99_us\": %.1f, \"cpu_us_per_call\": %.4f, "
      "\"context_switches_per_call\": %.4f, \"malloc_counter\": %s",
      impl.c_str(), transport.c_str(), concurrency, calls, seconds, n / seconds, percentile(0.5), percentile(0.99),
      (usage_after.cpu_seconds - usage_before.cpu_seconds) * 1e6 / n,
      double(usage_after.context_switches - usage_before.context_switches) / n, snapshot ? "true" : "false");
  if (snapshot) {
    std::printf(
        ", \"mallocs_per_call\": %.4f, \"reallocs_per_call\": %.4f, \"frees_per_call\": %.4f, "
        "\"malloc_bytes_per_call\": %.2f",
        double(after.allocations - before.allocations) / n, double(after.reallocations - before.reallocations) / n,
        double(after.frees - before.frees) / n, double(after.bytes - before.bytes) / n);
  }
  std::printf("}\n");
  std::fflush(stdout);
  // Skip static destructors racing gRPC's own threads: the figures are out.
  std::_Exit(0);
}
