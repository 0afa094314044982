// The launch API's engine: per (workload, problem) it looks up the configuration, gets the binary (memory,
// database, cache directory, or NVRTC), resolves the plan, and maps the caller's pointers and the scratch
// buffer onto the plan's buffers. Steady-state calls do a hash probe and enqueue the plan's launches.
#include <array>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <unordered_map>

#include "tuner/core/error.hpp"
#include "tuner/cuda/launcher.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/runtime/binary_store.hpp"
#include "tuner/runtime/launch.hpp"

namespace autotune {

const char* to_string(BinarySource s) {
  switch (s) {
    case BinarySource::none: return "none";
    case BinarySource::memory: return "memory";
    case BinarySource::database: return "database";
    case BinarySource::cache_dir: return "cache_dir";
    case BinarySource::compiled: return "compiled";
  }
  return "unknown";
}

namespace detail {

namespace {

constexpr std::size_t kScratchAlign = 256;
constexpr std::size_t kMaxBuffers = 64;  // a user kernel: up to 32 buffers and 32 constants
constexpr std::size_t kMaxDims = 4;
// Prepared (workload, problem) entries kept per object; past this the cache starts over (sizes that vary
// call by call would otherwise grow it without bound).
constexpr std::size_t kMaxPrepared = 256;

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

std::string basename_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct RequestKey {
  int workload = 0;
  std::array<std::int64_t, kMaxDims> dims{};
  bool operator==(const RequestKey& o) const { return workload == o.workload && dims == o.dims; }
};

struct RequestHash {
  std::size_t operator()(const RequestKey& k) const {
    std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(k.workload);
    for (auto d : k.dims) h = (h ^ static_cast<std::uint64_t>(d)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

}  // namespace

class Family {
 public:
  /// builtin: spec is a built-in family's (looked up by name); else a spec of the caller's (looked up by its
  /// identity, with the data tag of the files it names).
  Family(TuningSpec spec, bool builtin, const std::string& db_path, const RuntimeOptions& o,
         std::vector<std::string> buffers)
      : launcher_(o.device),
        lookup_(Lookup::shared(db_path)),
        spec_(std::move(spec)),
        builtin_(builtin),
        data_tag_(builtin ? std::string() : data_tag(spec_)),
        adapter_(kernels::make_adapter(spec_)),
        store_(db_path, o.cache_dir, o.store_binaries),
        user_buffers_(std::move(buffers)) {
    if (spec_.problem_dims.size() > kMaxDims)
      throw UsageError("kernel " + spec_.name + " has too many problem dimensions");
    if (user_buffers_.size() > kMaxBuffers) throw UsageError("kernel " + spec_.name + " has too many buffers");
  }

  const TuningSpec& spec() const { return spec_; }

  ~Family() {
    if (scratch_ == 0) return;
    try {
      launcher_.synchronize_context();  // pending work may still use the scratch buffer
    } catch (...) {
    }
    launcher_.free(scratch_);
  }

  int workload(const std::string& dtype, const std::string& op) const {
    for (std::size_t i = 0; i < spec_.workloads.size(); ++i)
      if (spec_.workloads[i].dtype == dtype && spec_.workloads[i].op == op) return static_cast<int>(i);
    return -1;
  }

  void require(int w, const std::string& dtype, const std::string& op) const {
    if (w >= 0) return;
    spec_.check_workload(Workload{dtype, op});  // throws UsageError listing the supported workloads
    throw UsageError("kernel " + spec_.name + " does not support " + dtype + "/" + op);
  }

  Choice choice(int w, const std::int64_t* dims, std::size_t ndims) {
    std::lock_guard<std::mutex> lock(mu_);
    return get(w, dims, ndims).choice;
  }

  /// user: one device address per name given to the constructor; scalars: see cuda::Launcher::run.
  void launch(int w, const std::int64_t* dims, std::size_t ndims, const std::uintptr_t* user_ptrs,
              const std::uint64_t* scalars, void* stream) {
    std::lock_guard<std::mutex> lock(mu_);
    const Prepared& p = get(w, dims, ndims);
    if (p.scratch_bytes > scratch_capacity_) grow_scratch(p.scratch_bytes);
    std::array<std::uintptr_t, kMaxBuffers> ptrs{};
    for (std::size_t i = 0; i < p.slots.size(); ++i) {
      const Slot& s = p.slots[i];
      if (s.user >= 0) {
        ptrs[i] = user_ptrs[s.user];
        if (ptrs[i] == 0)
          throw UsageError(spec_.name + ": the device pointer for '" + user_buffers_[static_cast<std::size_t>(s.user)] +
                           "' is null");
      } else {
        ptrs[i] = scratch_ + s.scratch_offset;
      }
    }
    if (p.scratch_bytes != 0) {
      if (scratch_used_ && stream != last_stream_) launcher_.order_after(stream, last_stream_);
      scratch_used_ = true;
      last_stream_ = stream;
      // Kernel state (BufferRole::state) must be zero before a plan's first launch on it; the plan's own
      // launches keep it consistent after that. Any other plan may have written the scratch in between.
      const bool zero = state_owner_ != p.id;
      state_owner_ = 0;  // until this launch is enqueued (a failed memset or launch leaves no valid owner)
      if (zero)
        for (const auto& [offset, bytes] : p.state) launcher_.fill32_async(scratch_ + offset, 0, bytes / 4, stream);
    }
    launcher_.run(*p.plan, ptrs.data(), stream, scalars);
    if (p.scratch_bytes != 0) state_owner_ = p.state.empty() ? 0 : p.id;
  }

 private:
  struct Slot {
    int user = -1;                   // index into the caller's pointers, or -1 for scratch
    std::size_t scratch_offset = 0;  // scratch only
  };
  struct Prepared {
    std::uint64_t id = 0;  // unique within this object (never 0)
    Choice choice;
    std::shared_ptr<const cuda::PreparedPlan> plan;
    std::vector<Slot> slots;  // one per plan buffer
    std::size_t scratch_bytes = 0;
    std::vector<std::pair<std::size_t, std::size_t>> state;  // (scratch offset, bytes) of BufferRole::state buffers
  };

  const Prepared& get(int w, const std::int64_t* dims, std::size_t ndims) {
    if (w < 0 || static_cast<std::size_t>(w) >= spec_.workloads.size()) throw UsageError(spec_.name + ": bad workload");
    if (ndims != spec_.problem_dims.size()) {
      std::string names;
      for (const std::string& d : spec_.problem_dims) names += (names.empty() ? "" : ", ") + d;
      throw UsageError(spec_.name + ": expected " + std::to_string(spec_.problem_dims.size()) +
                       " problem dimensions (" + names + "), got " + std::to_string(ndims));
    }
    RequestKey key;
    key.workload = w;
    for (std::size_t i = 0; i < ndims; ++i) key.dims[i] = dims[i];
    auto it = prepared_.find(key);
    if (it != prepared_.end()) return *it->second;
    if (prepared_.size() >= kMaxPrepared) prepared_.clear();
    auto p = prepare(w, dims, ndims);
    return *prepared_.emplace(key, std::move(p)).first->second;
  }

  std::unique_ptr<Prepared> prepare(int wi, const std::int64_t* dims, std::size_t ndims) {
    const auto start = std::chrono::steady_clock::now();
    const Workload& w = spec_.workloads[static_cast<std::size_t>(wi)];
    ProblemKey problem;
    problem.data = data_tag_;
    for (std::size_t i = 0; i < ndims; ++i) {
      const std::int64_t d = dims[i];
      const std::string& name = spec_.problem_dims[i];
      if (d < 1 && name != "select_pct")
        throw UsageError(spec_.name + ": problem dimension " + name + " must be at least 1 (got " + std::to_string(d) +
                         ")");
      problem.dims[name] = d;
    }
    const DeviceInfo& dev = launcher_.device();

    auto p = std::make_unique<Prepared>();
    p->id = ++last_prepared_id_;
    Choice& c = p->choice;
    c.kernel = spec_.name;
    c.workload = w.key();
    c.problem = problem.key();
    c.device = dev.name;
    c.answer = builtin_ ? *lookup_->best_on(spec_.name, w, dev, problem) : *lookup_->best_on(spec_, w, dev, problem);
    // Trials of an older kernel code are not served: say so once per kernel, since the program is then slower
    // than it was tuned to be without anything failing.
    if (c.answer.match != lookup::Match::exact && c.answer.note.find("another kernel source") != std::string::npos &&
        !warned_older_code_) {
      warned_older_code_ = true;
      std::cerr << "autotune: " << spec_.name << ": the database's trials were recorded with an older kernel code and "
                << "are not used (" << c.answer.note << ")\n";
    }

    // The adapter builds the plan; a looked-up configuration that cannot run at this size (a launch
    // dimension out of range) falls back to the spec default.
    LaunchPlan plan;
    try {
      plan = adapter_->plan(c.answer.config, w, problem, dev);
    } catch (const UsageError& e) {
      if (c.answer.config == spec_.default_config()) throw;
      c.note =
          "the looked-up configuration cannot run at " + c.problem + " (" + e.what() + "): the spec default is used";
      c.answer.config = spec_.default_config();
      c.answer.match = lookup::Match::spec_default;
      plan = adapter_->plan(c.answer.config, w, problem, dev);
    }
    c.config_text = c.answer.config.str(&spec_.params);

    const std::vector<std::string> options =
        cuda::build_options(adapter_->compile_options(w), c.answer.config, spec_.defines, spec_.params);
    c.binary_key = cuda::binary_key(spec_.source_text, spec_.headers, options, launcher_.arch());
    std::shared_ptr<const cuda::Module> module = module_for(c, options);

    p->plan = launcher_.prepare(module, plan);
    // Map the plan's buffers: inputs/outputs to the caller's pointers by name, scratch into one allocation.
    if (plan.buffers.size() > kMaxBuffers) throw UsageError(spec_.name + ": the launch plan has too many buffers");
    for (const auto& b : plan.buffers) {
      Slot s;
      if (b.role == BufferRole::scratch || b.role == BufferRole::state) {
        s.scratch_offset = p->scratch_bytes;
        if (b.role == BufferRole::state) p->state.emplace_back(s.scratch_offset, align_up(b.bytes, 4));
        p->scratch_bytes = align_up(p->scratch_bytes + b.bytes, kScratchAlign);
      } else {
        for (std::size_t u = 0; u < user_buffers_.size(); ++u)
          if (user_buffers_[u] == b.name) s.user = static_cast<int>(u);
        if (s.user < 0)
          throw UsageError(spec_.name + ": the launch plan needs buffer '" + b.name +
                           "', which this call does not supply");
      }
      p->slots.push_back(s);
    }
    c.scratch_bytes = p->scratch_bytes;
    c.prepare_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return p;
  }

  /// The loaded module for c.binary_key: from memory, the store (damaged entries are recompiled), or NVRTC.
  std::shared_ptr<const cuda::Module> module_for(Choice& c, const std::vector<std::string>& options) {
    auto it = modules_.find(c.binary_key);
    if (it != modules_.end()) {
      c.binary = BinarySource::memory;
      return it->second;
    }
    std::shared_ptr<const cuda::Module> module;
    std::string note;
    if (auto hit = store_.get(c.binary_key, &note)) {
      try {
        module = launcher_.load(hit->image);
        c.binary = hit->source;
      } catch (const cuda::ModuleLoadError& e) {
        note += std::string(note.empty() ? "" : "; ") + "the cached binary " + c.binary_key + " (" +
                to_string(hit->source) + ") does not load (" + e.what() + "): recompiled";
        store_.forget(c.binary_key);
      }
    }
    if (!module) {
      const cuda::CompileResult r =
          cuda::compile(spec_.source_text, spec_.headers, basename_of(spec_.source_path), options, launcher_.arch());
      if (!r.ok)
        throw EnvironmentError("NVRTC could not compile " + spec_.name + " (" + c.workload + ", " + c.config_text +
                               ") for " + launcher_.arch() + ":\n" + r.log);
      c.compile_ms = r.ms;
      module = launcher_.load(r.cubin);  // a fresh image that does not load is an environment error
      c.binary = BinarySource::compiled;
      store_.put(c.binary_key, r.cubin, r.log, &note);
    }
    if (!note.empty()) c.note += (c.note.empty() ? "" : "; ") + note;
    modules_.emplace(c.binary_key, module);
    return module;
  }

  void grow_scratch(std::size_t bytes) {
    if (scratch_ != 0) {
      launcher_.synchronize_context();  // work in flight may still use the old buffer
      launcher_.free(scratch_);
      scratch_ = 0;
      scratch_capacity_ = 0;
    }
    scratch_ = launcher_.allocate(bytes);
    scratch_capacity_ = bytes;
    scratch_used_ = false;
    state_owner_ = 0;
  }

  std::mutex mu_;
  bool warned_older_code_ = false;  // under mu_
  cuda::Launcher launcher_;
  std::shared_ptr<Lookup> lookup_;
  TuningSpec spec_;
  bool builtin_;
  std::string data_tag_;  // the problem's data: the tag of the files a caller's spec names ("" for built-ins)
  std::shared_ptr<const KernelAdapter> adapter_;
  runtime_detail::BinaryStore store_;
  std::vector<std::string> user_buffers_;
  std::map<std::string, std::shared_ptr<const cuda::Module>> modules_;
  std::unordered_map<RequestKey, std::unique_ptr<Prepared>, RequestHash> prepared_;
  std::uintptr_t scratch_ = 0;
  std::size_t scratch_capacity_ = 0;
  bool scratch_used_ = false;
  void* last_stream_ = nullptr;
  std::uint64_t last_prepared_id_ = 0;
  std::uint64_t state_owner_ = 0;  // id of the plan whose kernel state the scratch holds, valid; 0: none
};

// ---- FamilyHandle -----------------------------------------------------------------------------------------

namespace {
std::vector<std::string> names_of(std::initializer_list<const char*> buffers) {
  std::vector<std::string> out;
  for (const char* b : buffers) out.emplace_back(b);
  return out;
}
}  // namespace

FamilyHandle::FamilyHandle(const std::string& kernel, const std::string& db_path, const RuntimeOptions& o,
                           std::initializer_list<const char*> buffers)
    : f_(std::make_unique<Family>(specs::builtin_spec(kernel), true, db_path, o, names_of(buffers))) {}
FamilyHandle::FamilyHandle(TuningSpec spec, const std::string& db_path, const RuntimeOptions& o,
                           std::vector<std::string> buffers)
    : f_(std::make_unique<Family>(std::move(spec), false, db_path, o, std::move(buffers))) {}
FamilyHandle::~FamilyHandle() = default;
FamilyHandle::FamilyHandle(FamilyHandle&&) noexcept = default;
FamilyHandle& FamilyHandle::operator=(FamilyHandle&&) noexcept = default;

int FamilyHandle::workload(const std::string& dtype, const std::string& op) const { return f_->workload(dtype, op); }
void FamilyHandle::require(int w, const std::string& dtype, const std::string& op) const { f_->require(w, dtype, op); }
void FamilyHandle::launch(int w, std::initializer_list<std::int64_t> dims,
                          std::initializer_list<std::uintptr_t> buffers, void* stream) {
  f_->launch(w, dims.begin(), dims.size(), buffers.begin(), nullptr, stream);
}
void FamilyHandle::launch(int w, const std::int64_t* dims, std::size_t ndims, const std::uintptr_t* buffers,
                          const std::uint64_t* scalars, void* stream) {
  f_->launch(w, dims, ndims, buffers, scalars, stream);
}
Choice FamilyHandle::choice(int w, std::initializer_list<std::int64_t> dims) {
  return f_->choice(w, dims.begin(), dims.size());
}
Choice FamilyHandle::choice(int w, const std::int64_t* dims, std::size_t ndims) { return f_->choice(w, dims, ndims); }
const TuningSpec& FamilyHandle::spec() const { return f_->spec(); }

}  // namespace detail

// ---- plain memory helpers -----------------------------------------------------------------------------------

struct DeviceBuffer::Impl {
  explicit Impl(int device) : launcher(device) {}
  cuda::Launcher launcher;
};

DeviceBuffer::DeviceBuffer(std::size_t bytes, int device) : impl_(std::make_unique<Impl>(device)), bytes_(bytes) {
  ptr_ = impl_->launcher.allocate(bytes);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != 0) impl_->launcher.free(ptr_);
}

void DeviceBuffer::upload(const void* src, std::size_t bytes) {
  if (bytes > bytes_)
    throw UsageError("DeviceBuffer::upload: " + std::to_string(bytes) + " bytes into " + std::to_string(bytes_));
  impl_->launcher.copy_to_device(ptr_, src, bytes);
}

void DeviceBuffer::download(void* dst, std::size_t bytes) const {
  if (bytes > bytes_)
    throw UsageError("DeviceBuffer::download: " + std::to_string(bytes) + " bytes from " + std::to_string(bytes_));
  impl_->launcher.copy_to_host(dst, ptr_, bytes);
}

void synchronize(Stream s, int device) { cuda::Launcher(device).synchronize(s.handle()); }

}  // namespace autotune
