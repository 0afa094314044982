#include "tuner/mpi/comm.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "tuner/core/error.hpp"

namespace autotune::mpi {

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
    const char* s = std::getenv(v);
    if (s && *s) return true;
  }
  return false;
}

struct Comm::Pending {
  std::string payload;
  MPI_Request request = MPI_REQUEST_NULL;
};

namespace {

std::string mpi_error(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  if (MPI_Error_string(rc, text, &n) != MPI_SUCCESS) return "MPI error " + std::to_string(rc);
  return std::string(text, static_cast<std::size_t>(n));
}

}  // namespace

Comm::Comm(int* argc, char*** argv) {
  int provided = 0;
  int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (rc != MPI_SUCCESS) throw EnvironmentError("MPI_Init_thread failed: " + mpi_error(rc));
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    throw EnvironmentError("this MPI library lacks MPI_THREAD_MULTIPLE, which autotune's scale-out needs");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    MPI_Comm_free(&node);
  }
  char name[MPI_MAX_PROCESSOR_NAME];
  int n = 0;
  if (MPI_Get_processor_name(name, &n) == MPI_SUCCESS) host_.assign(name, static_cast<std::size_t>(n));
}

Comm::~Comm() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto* list : {&stuck_, &posted_})
      for (auto& p : *list) {
        int done = 0;
        MPI_Test(&p->request, &done, MPI_STATUS_IGNORE);
      }
  }
  if (finalize_) MPI_Finalize();
}

std::unique_ptr<Comm::Pending> Comm::start_send(int dest, int tag, const std::string& payload) {
  auto p = std::make_unique<Pending>();
  p->payload = payload;  // MPI reads this copy until the send completes
  if (MPI_Isend(p->payload.data(), static_cast<int>(p->payload.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                &p->request) != MPI_SUCCESS)
    return nullptr;
  return p;
}

bool Comm::send(int dest, int tag, const std::string& payload, double timeout_s) {
  auto p = start_send(dest, tag, payload);
  if (!p) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int done = 0;
    if (MPI_Test(&p->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
    if (done) return true;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  std::lock_guard<std::mutex> lock(mu_);
  stuck_.push_back(std::move(p));  // MPI may still read the buffer
  return false;
}

bool Comm::post(int dest, int tag, const std::string& payload) {
  reap_posted();
  auto p = start_send(dest, tag, payload);
  if (!p) return false;
  std::lock_guard<std::mutex> lock(mu_);
  posted_.push_back(std::move(p));  // MPI reads the buffer until the send completes
  return true;
}

void Comm::reap_posted() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = posted_.begin(); it != posted_.end();) {
    int done = 0;
    if (MPI_Test(&(*it)->request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done)
      it = posted_.erase(it);
    else
      ++it;
  }
}

std::optional<Message> Comm::poll(int source) {
  reap_posted();
  // Matched probe: the message found is the one received, even if another thread polls too.
  int flag = 0;
  MPI_Message handle;
  MPI_Status st;
  if (MPI_Improbe(source < 0 ? MPI_ANY_SOURCE : source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &handle, &st) !=
          MPI_SUCCESS ||
      !flag)
    return std::nullopt;
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  Message m;
  m.source = st.MPI_SOURCE;
  m.tag = st.MPI_TAG;
  m.payload.resize(static_cast<std::size_t>(count));
  if (MPI_Mrecv(m.payload.data(), count, MPI_BYTE, &handle, MPI_STATUS_IGNORE) != MPI_SUCCESS) return std::nullopt;
  return m;
}

void Comm::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace autotune::mpi
