// The second bench server: grpc.testing.TestService/UnaryCall on gRPC C++ (callback API), over
// h2c and over TLS on 127.0.0.1, so calls/s at 100 in flight measures the clients rather than the
// server. bench.py builds it with g++ and pkg-config into Benchmarks/.build/cxx-server.
//
// Usage: bench_server CERT.pem KEY.pem
// Prints `BENCH SERVER READY <h2c port> <tls port>` and serves until stdin closes.
//
// UnaryCall answers `response_size` zero bytes. Three request metadata keys drive the
// in-flight memory measurement:
//   x-bench-hold: <anything>     the call is parked and answered only on release;
//   x-bench-control: held        answered at once, SimpleResponse.username = number parked;
//   x-bench-control: release     answers every parked call, then this one (username = number
//                                released).

#include <grpcpp/grpcpp.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "grpc/testing/interop.grpc.pb.h"

namespace {

std::string ReadFile(const char* path) {
  std::ifstream file(path);
  if (!file) {
    std::cerr << "bench_server: cannot read " << path << "\n";
    std::exit(2);
  }
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::string Metadata(grpc::CallbackServerContext* context, const char* key) {
  const auto& metadata = context->client_metadata();
  auto found = metadata.find(key);
  return found == metadata.end() ? std::string() : std::string(found->second.data(), found->second.size());
}

class TestService final : public grpc::testing::TestService::CallbackService {
 public:
  grpc::ServerUnaryReactor* UnaryCall(grpc::CallbackServerContext* context,
                                      const grpc::testing::SimpleRequest* request,
                                      grpc::testing::SimpleResponse* response) override {
    auto* reactor = context->DefaultReactor();
    if (request->response_size() > 0) {
      response->mutable_payload()->mutable_body()->assign(static_cast<size_t>(request->response_size()), '\0');
    }
    if (!context->client_metadata().empty()) {
      if (!Metadata(context, "x-bench-hold").empty()) {
        std::lock_guard<std::mutex> lock(mutex_);
        parked_.push_back(reactor);
        return reactor;
      }
      std::string control = Metadata(context, "x-bench-control");
      if (control == "held") {
        std::lock_guard<std::mutex> lock(mutex_);
        response->set_username(std::to_string(parked_.size()));
      } else if (control == "release") {
        std::vector<grpc::ServerUnaryReactor*> released;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          released.swap(parked_);
        }
        for (auto* parked : released) parked->Finish(grpc::Status::OK);
        response->set_username(std::to_string(released.size()));
      }
    }
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  std::mutex mutex_;
  std::vector<grpc::ServerUnaryReactor*> parked_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: bench_server CERT.pem KEY.pem\n";
    return 2;
  }
  grpc::SslServerCredentialsOptions tls;
  tls.pem_key_cert_pairs.push_back({ReadFile(argv[2]), ReadFile(argv[1])});

  TestService service;
  grpc::ServerBuilder builder;
  int h2c_port = 0, tls_port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &h2c_port);
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(tls), &tls_port);
  builder.RegisterService(&service);
  // Room for the memory run's 10,000 parked calls, and for 4 MiB messages both ways.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 16384);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  // Room for a 4 MiB request in the receive window. gRPC's BDP probing (on by default, as in a
  // real deployment) overrides the figure: it announces 4 MiB - 1 and grows the window with the
  // measured bandwidth-delay product. RESULTS.md shows what the server announced.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 16 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || h2c_port == 0 || tls_port == 0) {
    std::cerr << "bench_server: could not listen\n";
    return 1;
  }
  std::cout << "BENCH SERVER READY " << h2c_port << " " << tls_port << std::endl;

  // The parent holds our stdin: when it closes, stop.
  std::string ignored;
  while (std::getline(std::cin, ignored)) {
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}
