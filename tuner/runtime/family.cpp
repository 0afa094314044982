// The launch API's engine: per (workload, problem) it looks up the configuration, gets the binary (memory,
// database, cache directory, or NVRTC), resolves the plan, and maps the caller's pointers and the scratch
// buffer onto the plan's buffers. Steady-state calls do a hash probe and enqueue the plan's launches.
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "tuner/core/error.hpp"
#include "tuner/core/text.hpp"
#include "tuner/cuda/launcher.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/runtime/binary_store.hpp"
#include "tuner/runtime/capture.hpp"
#include "tuner/runtime/kernel_args.hpp"
#include "tuner/runtime/launch.hpp"
#include "tuner/runtime/online.hpp"
#include "tuner/specs/specs.hpp"

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
// A user kernel: as many buffers and constants as KernelArguments takes.
constexpr std::size_t kMaxBuffers = 2 * runtime_detail::KernelArguments::kMaxArgs;
constexpr std::size_t kMaxDims = 4;
// Prepared (workload, problem) entries kept per object; past this the cache starts over (sizes that vary
// call by call would otherwise grow it without bound).
constexpr std::size_t kMaxPrepared = 256;

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

std::string basename_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// RuntimeOptions::deterministic, or AUTOTUNE_DETERMINISTIC set to 1, true, yes or on (any case).
bool wants_deterministic(const RuntimeOptions& o) {
  if (o.deterministic) return true;
  const char* v = std::getenv("AUTOTUNE_DETERMINISTIC");
  if (v == nullptr) return false;
  std::string t = trim(v);
  for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return t == "1" || t == "true" || t == "yes" || t == "on";
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
  /// from: the spec's file as the caller named it (for captures; "" for a spec made in code).
  Family(TuningSpec spec, bool builtin, const std::string& db_path, const RuntimeOptions& o,
         std::vector<std::string> buffers, std::string from = {})
      : launcher_(o.device),
        lookup_(Lookup::shared(db_path)),
        spec_(std::move(spec)),
        builtin_(builtin),
        data_tag_(builtin ? std::string() : data_tag(spec_)),
        adapter_(kernels::make_adapter(spec_)),
        store_(db_path, o.cache_dir, o.store_binaries),
        store_writes_(o.store_binaries),
        user_buffers_(std::move(buffers)),
        from_(std::move(from)) {
    if (!builtin_) {
      capture_ = capture_settings(spec_.name);
      online_ = online_of(o, spec_.name);
    }
    spec_.deterministic = wants_deterministic(o);
    if (spec_.problem_dims.size() > kMaxDims)
      throw UsageError("kernel " + spec_.name + " has too many problem dimensions");
    if (user_buffers_.size() > kMaxBuffers) throw UsageError("kernel " + spec_.name + " has too many buffers");
  }

  const TuningSpec& spec() const { return spec_; }

  ~Family() {
    finish_capture();
    if (scratch_ == 0) return;
    try {
      launcher_.synchronize_context();  // pending work may still use the scratch buffer
    } catch (...) {
    }
    launcher_.free(scratch_);
  }

  Choice choice(int w, const std::int64_t* dims, std::size_t ndims) {
    std::lock_guard<std::mutex> lock(mu_);
    Prepared& p = get(w, dims, ndims);
    if (p.online) p.choice.online = p.online->status();
    Choice c = p.choice;
    if (capture_) {
      finish_capture();
      std::lock_guard<std::mutex> outcome_lock(capture_mu_);
      auto it = captured_.find(capture_key(c));
      if (it != captured_.end()) c.capture = it->second;
    }
    return c;
  }

  /// user: one device address per name given to the constructor; scalars: see cuda::Launcher::run.
  void launch(int w, const std::int64_t* dims, std::size_t ndims, const std::uintptr_t* user_ptrs,
              const std::uint64_t* scalars, void* stream) {
    std::lock_guard<std::mutex> lock(mu_);
    Prepared& p = get(w, dims, ndims);
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
    if (p.capture) {
      p.capture = false;
      capture_launch(p, ptrs.data(), user_ptrs, scalars, stream);
      return;
    }
    if (p.online) {
      p.online->launch(user_ptrs, scalars, stream);
      if (p.online->settled()) adopt_online(p);
      return;
    }
    enqueue(p, ptrs.data(), scalars, stream);
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
    bool capture = false;                                    // the next launch is captured (AUTOTUNE_CAPTURE)
    std::unique_ptr<runtime_detail::OnlineTuner> online;     // the online search of this problem, until it settles
  };

  /// Online tuning's settings for a kernel of the caller's: RuntimeOptions::online (a malformed value throws), else
  /// AUTOTUNE_ONLINE (a malformed value is reported and ignored, as it never changes what the application computes).
  static std::optional<online::Settings> online_of(const RuntimeOptions& o, const std::string& kernel) {
    if (!trim(o.online).empty()) return runtime_detail::online_settings(o.online);
    try {
      return runtime_detail::online_settings("");
    } catch (const Error& e) {
      std::cerr << "autotune: online tuning of " << kernel << " is off: " << e.what() << "\n";
      return std::nullopt;
    }
  }

  /// Starts the online search of p's problem where it has no exact answer; where it cannot be tuned online, says
  /// why in the choice (and once on stderr) and launches as without it.
  void start_online(Prepared& p, const Workload& w, const ProblemKey& problem) {
    Choice& c = p.choice;
    if (!online_ || c.answer.match == lookup::Match::exact) return;
    try {
      runtime_detail::OnlineSetup s{
          spec_,         *adapter_,     launcher_,        w,
          problem,       user_buffers_, store_.db_path(), store_.cache_dir(),
          store_writes_, *online_,      c.answer.config,  p.plan,
      };
      p.online = std::make_unique<runtime_detail::OnlineTuner>(std::move(s));
      c.online = p.online->status();
    } catch (const Error& e) {
      c.online = std::string("off: ") + e.what();
      std::cerr << "autotune: online tuning of " << spec_.name << " (" << c.problem << ") is off: " << e.what() << "\n";
    }
  }

  /// The settled online search's choice becomes p's: its plan and configuration from now on.
  void adopt_online(Prepared& p) {
    Choice& c = p.choice;
    c.online = p.online->status();
    if (!(p.online->best_config() == c.answer.config)) {
      c.answer.config = p.online->best_config();
      c.config_text = c.answer.config.str(&spec_.params);
      c.note += std::string(c.note.empty() ? "" : "; ") + "configuration chosen by online tuning";
    }
    p.plan = p.online->best_plan();
    p.online.reset();  // its workers stop, its shadow buffers are freed
  }

  /// The plan's launches on stream, with ptrs one address per plan buffer.
  void enqueue(const Prepared& p, const std::uintptr_t* ptrs, const std::uint64_t* scalars, void* stream) {
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
    launcher_.run(*p.plan, ptrs, stream, scalars);
    if (p.scratch_bytes != 0) state_owner_ = p.state.empty() ? 0 : p.id;
  }

  /// AUTOTUNE_CAPTURE's settings when they name this kernel; a malformed variable is reported and ignored (a
  /// capture never changes what the application computes).
  static std::optional<runtime_detail::CaptureSettings> capture_settings(const std::string& kernel) {
    try {
      auto s = runtime_detail::CaptureSettings::from_env();
      if (s && s->matches(kernel)) return s;
    } catch (const Error& e) {
      std::cerr << "autotune: capture of " << kernel << " is off: " << e.what() << "\n";
    }
    return std::nullopt;
  }

  /// Launches p as enqueue() does, and captures it: the inputs are copied to the host before the launch, the
  /// outputs after it (each once), then written by write_capture. What cannot be captured (too much data, a
  /// capture already on disk, a file that cannot be written) is said on stderr and the launch runs as always.
  void capture_launch(Prepared& p, const std::uintptr_t* ptrs, const std::uintptr_t* user_ptrs,
                      const std::uint64_t* scalars, void* stream) {
    const auto start = std::chrono::steady_clock::now();
    Choice& c = p.choice;
    const std::string what = "autotune: capture of " + spec_.name + " (" + c.problem + ")";
    const std::string path = runtime_detail::capture_path(*capture_, spec_.name, problem_of(c));
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      set_outcome(c, "not captured: " + path + " exists");
      std::cerr << what << ": " << path << " exists, not captured again (remove it to capture anew)\n";
      return enqueue(p, ptrs, scalars, stream);
    }
    std::map<std::string, std::size_t> bytes_of;
    for (const BufferDecl& b : p.plan->plan().buffers) bytes_of[b.name] = b.bytes;
    runtime_detail::CaptureRecord r;
    r.from = from_;
    r.workload = spec_.workloads.front();
    r.problem = problem_of(c);
    r.config = c.answer.config;
    r.match = lookup::to_string(c.answer.match);
    r.device = c.device;
    std::uint64_t total = 0;
    for (const ArgSpec& a : spec_.arguments) {
      if (a.kind == ArgSpec::Kind::scalar) continue;
      total += (a.is_input() ? bytes_of[a.name] : 0) + (a.is_output() ? bytes_of[a.name] : 0);
    }
    if (total > capture_->max_bytes) {
      set_outcome(c, "not captured: " + gib_text(static_cast<double>(total)) + " GiB of data");
      std::cerr << what << " skipped: its arguments hold " << total << " bytes, over AUTOTUNE_CAPTURE_MAX_BYTES ("
                << capture_->max_bytes << ")\n";
      return enqueue(p, ptrs, scalars, stream);
    }
    // The arguments in spec order: the k-th buffer or constant is the caller's k-th pointer, scalars in order.
    std::vector<std::uintptr_t> ptr_of(spec_.arguments.size());
    r.args.resize(spec_.arguments.size());
    for (std::size_t i = 0, b = 0, k = 0; i < spec_.arguments.size(); ++i) {
      if (spec_.arguments[i].kind == ArgSpec::Kind::scalar)
        r.args[i].scalar_bits = scalars[k++];
      else
        ptr_of[i] = user_ptrs[b++];
    }
    // The inputs (after: the outputs) to the host, once the stream's work is done; false when a copy failed.
    auto copy = [&](bool after, const char* when) {
      try {
        launcher_.synchronize(stream);
        for (std::size_t i = 0; i < spec_.arguments.size(); ++i) {
          const ArgSpec& a = spec_.arguments[i];
          if (a.kind == ArgSpec::Kind::scalar || !(after ? a.is_output() : a.is_input())) continue;
          std::vector<unsigned char>& bytes = after ? r.args[i].after : r.args[i].before;
          bytes.resize(bytes_of[a.name]);
          launcher_.copy_to_host(bytes.data(), ptr_of[i], bytes.size());
        }
        return true;
      } catch (const Error& e) {
        set_outcome(c, std::string("not captured: ") + e.what());
        std::cerr << what << " failed " << when << ": " << e.what() << "\n";
        return false;
      }
    };
    if (!copy(false, "before the launch")) return enqueue(p, ptrs, scalars, stream);
    enqueue(p, ptrs, scalars, stream);
    launcher_.synchronize(stream);  // an error here is the launch's own: it goes to the caller
    if (!copy(true, "after the launch")) return;
    using ms = std::chrono::duration<double, std::milli>;
    const double at_launch = ms(std::chrono::steady_clock::now() - start).count();
    // The files are written in the background: the application goes on after the copies. choice() and the
    // destructor wait for the writer.
    finish_capture();
    set_outcome(c, "being written: " + path);
    const std::string key = capture_key(c), summary = c.problem + ", " + c.config_text;
    writer_ = std::thread([this, r = std::move(r), key, summary, what, total, at_launch] {
      const auto t0 = std::chrono::steady_clock::now();
      std::string outcome;
      try {
        outcome = runtime_detail::write_capture(*capture_, spec_, r);
        std::cerr << "autotune: captured " << spec_.name << " (" << summary << ", "
                  << fmt("%.1f", static_cast<double>(total) / (1 << 20)) << " MiB: " << fmt("%.1f ms", at_launch)
                  << " at the launch, " << fmt("%.1f ms", ms(std::chrono::steady_clock::now() - t0).count())
                  << " writing) into " << outcome << "; tune it with: autotune tune " << outcome << "\n";
      } catch (const std::exception& e) {
        outcome = std::string("not captured: ") + e.what();
        std::cerr << what << " failed: " << e.what() << "\n";
      }
      std::lock_guard<std::mutex> lock(capture_mu_);
      captured_[key] = outcome;
    });
  }

  static std::string capture_key(const Choice& c) { return c.workload + ' ' + c.problem; }

  /// Records what became of the capture of c's problem (it is not tried again).
  void set_outcome(const Choice& c, const std::string& outcome) {
    std::lock_guard<std::mutex> lock(capture_mu_);
    captured_[capture_key(c)] = outcome;
  }

  /// Waits for the capture being written, if any.
  void finish_capture() {
    if (writer_.joinable()) writer_.join();
  }

  static ProblemKey problem_of(const Choice& c) { return ProblemKey::parse(c.problem); }

  Prepared& get(int w, const std::int64_t* dims, std::size_t ndims) {
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

  /// With a deterministic requirement: throws UsageError where the configuration chosen (the spec default, the only
  /// one the lookup can serve without checking it) is marked "nondeterministic".
  void require_deterministic(const Choice& c, const Workload& w, const ProblemKey& problem,
                             const DeviceInfo& dev) const {
    if (!spec_.deterministic) return;
    const Expr* reason = spec_.nondeterministic_reason(c.answer.config, problem, dev, w);
    if (reason == nullptr) return;
    throw UsageError(spec_.name + " " + c.workload + " " + c.problem +
                     ": a deterministic configuration was asked for (RuntimeOptions::deterministic or "
                     "AUTOTUNE_DETERMINISTIC), but no recorded one is usable and the " +
                     lookup::to_string(c.answer.match) + " configuration " + c.config_text +
                     " is not bit-reproducible run to run (" + reason->text() + ")");
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
    // A deterministic requirement narrows the spec, which the by-name lookup (the registered spec) does not know.
    c.answer = builtin_ && !spec_.deterministic ? *lookup_->best_on(spec_.name, w, dev, problem)
                                                : *lookup_->best_on(spec_, w, dev, problem);
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
    require_deterministic(c, w, problem, dev);

    cuda::CompileRecipe recipe = cuda::compile_recipe(*adapter_, w, c.answer.config, launcher_.arch());
    c.binary_key = std::move(recipe.key);
    std::shared_ptr<const cuda::Module> module = module_for(c, recipe.options);

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
    if (p->scratch_bytes == 0) start_online(*p, w, problem);
    if (capture_) {
      std::lock_guard<std::mutex> lock(capture_mu_);
      p->capture = captured_.count(capture_key(c)) == 0;
    }
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
  bool store_writes_;
  std::vector<std::string> user_buffers_;
  std::string from_;                                        // the spec's file, for captures
  std::optional<runtime_detail::CaptureSettings> capture_;  // AUTOTUNE_CAPTURE names this kernel
  std::optional<online::Settings> online_;                  // online tuning is on for this kernel
  std::mutex capture_mu_;
  std::map<std::string, std::string> captured_;  // under capture_mu_: "workload problem" -> Choice::capture
  std::thread writer_;                           // writes the latest capture's files; joined before the next
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
                           std::vector<std::string> buffers, std::string from)
    : f_(std::make_unique<Family>(std::move(spec), false, db_path, o, std::move(buffers), std::move(from))) {}
FamilyHandle::~FamilyHandle() = default;
FamilyHandle::FamilyHandle(FamilyHandle&&) noexcept = default;
FamilyHandle& FamilyHandle::operator=(FamilyHandle&&) noexcept = default;

int FamilyHandle::workload(const std::string& dtype, const std::string& op) const {
  const TuningSpec& spec = f_->spec();
  for (std::size_t i = 0; i < spec.workloads.size(); ++i)
    if (spec.workloads[i].dtype == dtype && spec.workloads[i].op == op) return static_cast<int>(i);
  return -1;
}

void FamilyHandle::require(int w, const std::string& dtype, const std::string& op) const {
  if (w >= 0) return;
  const TuningSpec& spec = f_->spec();
  spec.check_workload(Workload{dtype, op});  // throws UsageError listing the supported workloads
  throw UsageError("kernel " + spec.name + " does not support " + dtype + "/" + op);
}
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
