// autotune::Kernel (launch.hpp): a spec of the caller's launched through the family engine (family.cpp), its
// arguments checked and packed by KernelArguments (kernel_args.hpp).
#include <array>
#include <utility>

#include "tuner/runtime/kernel_args.hpp"
#include "tuner/runtime/launch.hpp"
#include "tuner/specs/specs.hpp"

namespace autotune {

using runtime_detail::KernelArguments;

struct Kernel::Layout {
  explicit Layout(const TuningSpec& spec) : args(spec) {}
  KernelArguments args;
};

Kernel::Kernel(const std::string& spec_path, const std::string& db_path, const RuntimeOptions& o)
    : Kernel(specs::resolve_kernel(spec_path), db_path, o, spec_path) {}

Kernel::Kernel(TuningSpec spec, const std::string& db_path, const RuntimeOptions& o)
    : Kernel(std::move(spec), db_path, o, std::string()) {}

Kernel::Kernel(TuningSpec spec, const std::string& db_path, const RuntimeOptions& o, std::string from)
    : layout_(std::make_unique<Layout>(spec)),
      h_(std::move(spec), db_path, o, layout_->args.buffer_names(), std::move(from)) {}

Kernel::~Kernel() = default;
Kernel::Kernel(Kernel&&) noexcept = default;
Kernel& Kernel::operator=(Kernel&&) noexcept = default;

void Kernel::launch(Stream stream, std::initializer_list<std::int64_t> problem, std::initializer_list<Arg> args) {
  launch(stream, problem.begin(), problem.size(), args.begin(), args.size());
}

void Kernel::launch(Stream stream, const std::int64_t* problem, std::size_t problem_dims, const Arg* args,
                    std::size_t arg_count) {
  std::array<std::uintptr_t, 2 * KernelArguments::kMaxArgs> buffers{};
  std::array<std::uint64_t, KernelArguments::kMaxArgs> scalars{};
  layout_->args.pack(args, arg_count, buffers.data(), scalars.data());
  h_.launch(0, problem, problem_dims, buffers.data(), scalars.data(), stream.handle());
}

Choice Kernel::choice(std::initializer_list<std::int64_t> problem) { return choice(problem.begin(), problem.size()); }

Choice Kernel::choice(const std::int64_t* problem, std::size_t problem_dims) {
  return h_.choice(0, problem, problem_dims);
}

const TuningSpec& Kernel::spec() const { return h_.spec(); }

}  // namespace autotune
