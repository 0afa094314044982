#include "tuner/cli/parse_errors.hpp"

#include <cctype>
#include <vector>

#include "tuner/cli/flag_checks.hpp"

namespace autotune::cli {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

/// The sub-command on the command line, or nullptr.
const CLI::App* chosen(const CLI::App& app) {
  const auto subs = app.get_subcommands();
  return subs.empty() ? nullptr : subs.front();
}

std::string quoted(const CLI::App& sub) { return "`" + sub.get_name() + "`"; }

/// "`tune`" or "`tune`, `explore`": the sub-commands that have option `name`; "" when none has it.
std::string owners(const CLI::App& app, const std::string& name) {
  std::string out;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
    if (s->get_option_no_throw(name) != nullptr) out += (out.empty() ? "" : ", ") + quoted(*s);
  return out;
}

/// "--name" or "--name=value", not a negative number.
bool option_like(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1])) && arg[1] != '.';
}

/// An argument no parser took, in the order given: an option on the wrong side of the sub-command, an option
/// nobody knows, or a word too many.
std::string unexpected(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* sub = chosen(app);
  for (const std::string& arg : args) {
    if (!option_like(arg)) continue;
    const std::string name = arg.substr(0, arg.find('='));
    const std::string who = owners(app, name);
    if (who.empty()) {
      if (sub == nullptr) return "unknown option " + name + " (autotune --help lists the sub-commands)";
      return "unknown option " + name + " of " + quoted(*sub) + " (autotune " + sub->get_name() +
             " --help lists its options)";
    }
    if (sub == nullptr) return name + " is an option of " + who + ": put it after the sub-command";
    if (sub->get_option_no_throw(name) != nullptr)
      return name + " is an option of " + quoted(*sub) + ": put it after the sub-command";
    return name + " is not an option of " + quoted(*sub) + " (it is one of " + who + ")";
  }
  if (args.empty()) return "unexpected arguments";
  if (sub == nullptr) return "unknown sub-command '" + args.front() + "' (autotune --help lists them)";
  return "unexpected argument '" + args.front() + "' for " + quoted(*sub) + " (autotune " + sub->get_name() +
         " --help shows what it takes)";
}

/// "kernel is required", "--html is required", "A subcommand is required".
std::string missing(const CLI::App& app, const std::string& text) {
  const std::string name = text.substr(0, text.rfind(" is required"));
  const CLI::App* sub = chosen(app);
  if (sub == nullptr) {
    const std::vector<std::string> args = app.remaining(true);
    if (!args.empty()) return unexpected(app, args);
    return "no sub-command given: autotune SUB-COMMAND [options] (autotune --help lists them)";
  }
  const CLI::Option* opt = sub->get_option_no_throw(name);
  const std::string what = opt != nullptr && !opt->get_description().empty() ? ": " + opt->get_description() : "";
  if (opt != nullptr && !opt->nonpositional()) return quoted(*sub) + " needs its " + name + " argument" + what;
  return quoted(*sub) + " needs " + name + what;
}

/// The option's name at the start of "NAME: rest" (or the whole text when it has no ": ").
std::string leading_name(const std::string& text, std::string* rest = nullptr) {
  const std::size_t colon = text.find(": ");
  if (rest) *rest = colon == std::string::npos ? "" : text.substr(colon + 2);
  return text.substr(0, colon);
}

/// Too few or too many values for an option.
std::string mismatch(const std::string& text) {
  std::string rest;
  const std::string name = leading_name(text, &rest);
  if (rest.find(" missing") != std::string::npos) return name + " needs a value";
  if (starts_with(rest, "At Most 1 ")) return name + " is given more than once (it takes one value)";
  if (starts_with(rest, "At least ")) return name + " needs more values";
  if (text.find("flag override") != std::string::npos) return text.substr(0, text.find(' ')) + " takes no value";
  return "wrong number of values: " + text;
}

/// A value CLI11 could not store: numeric options are checked before, so this is a flag given a value other
/// than true/false ("Could not convert: --json = maybe").
std::string conversion(const CLI::App& app, const std::string& text) {
  const std::string prefix = "Could not convert: ";
  if (!starts_with(text, prefix)) return "a value cannot be read: " + text;
  const std::size_t eq = text.find(" = ", prefix.size());
  const std::string name = text.substr(prefix.size(), eq - prefix.size());
  const std::string value = eq == std::string::npos ? "" : text.substr(eq + 3);
  const CLI::App* sub = chosen(app);
  const CLI::Option* opt = sub != nullptr ? sub->get_option_no_throw(name) : app.get_option_no_throw(name);
  if (opt != nullptr && opt->get_expected_max() == 0)
    return name + " is a flag: give it alone or as " + name + "=true/false (got " + value + ")";
  return name + ": cannot read the value '" + value + "'";
}

}  // namespace

std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e) {
  const std::string text = e.what();
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    std::string rest;
    const std::string name = leading_name(text, &rest);
    if (starts_with(rest, kMustBe)) return name + " " + rest;
    return name + ": value not allowed (" + rest + ")";
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) return unexpected(app, app.remaining(true));
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    // CLI11 checks what is missing before what is left over: a misplaced option is the likelier mistake.
    const std::vector<std::string> args = app.remaining(true);
    for (const std::string& arg : args)
      if (option_like(arg)) return unexpected(app, args);
    return missing(app, text);
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) return mismatch(text);
  if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) return conversion(app, text);
  return "the command line cannot be read: " + text;
}

}  // namespace autotune::cli
