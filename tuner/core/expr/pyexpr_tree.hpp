// Internal to the Python expressions of tuner/core/expr/pyexpr.hpp (not installed: cmake/Install.cmake leaves it out):
// the syntax tree that the parser (pyexpr_parse.cpp) builds and the evaluator (pyexpr.cpp) walks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/expr/pyexpr.hpp"
#include "tuner/core/expr/pyexpr_ops.hpp"

namespace autotune {
namespace pyexpr_detail {

/// The built-in functions a call may name (their names and argument counts: pyexpr_parse.cpp).
enum class Builtin : std::uint8_t {
  abs,
  all,
  any,
  bool_,
  float_,
  int_,
  len,
  list,
  max,
  min,
  range,
  round,
  str,
  sum,
  tuple
};

}  // namespace pyexpr_detail

struct PyExpr::Node {
  enum class Kind : std::uint8_t {
    constant,       // value
    free_var,       // name, slot = position in variables()
    local_var,      // name, slot = comprehension variable
    list,           // kids: elements
    unary,          // op: UnOp; kids[0]
    binary,         // op: BinOp; kids[0], kids[1]
    logic_and,      // kids: operands
    logic_or,       // kids: operands
    logic_not,      // kids[0]
    compare,        // kids: operands; cmp: operators between them
    conditional,    // kids: body, test, else
    index,          // kids: object, index
    slice,          // kids: object, lower, upper, step (null when absent)
    call,           // op: Builtin; kids: arguments
    comprehension,  // kids[0]: element; clauses
  };
  struct Clause {
    std::vector<std::string> names;  // targets
    bool unpack = false;             // targets were a tuple ("for a, b in ...")
    std::vector<std::size_t> slots;
    std::unique_ptr<Node> iter;
    std::vector<std::unique_ptr<Node>> filters;
  };

  Kind kind = Kind::constant;
  std::uint8_t op = 0;
  int depth = 1;
  std::size_t slot = 0;
  PyValue value;
  std::string name;
  std::vector<std::unique_ptr<Node>> kids;
  std::vector<pyexpr_detail::CmpOp> cmp;
  std::vector<Clause> clauses;
};

namespace pyexpr_detail {

using Node = PyExpr::Node;
using NodePtr = std::unique_ptr<Node>;
using Kind = Node::Kind;

/// Whether the tree uses only what PyExpr::eval_int covers (pyexpr.cpp).
bool int_capable(const Node& n);

}  // namespace pyexpr_detail
}  // namespace autotune
