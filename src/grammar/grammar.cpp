#include "grammar/grammar.h"

#include <fmt/format.h>

#include "core/error.h"

namespace llmesh::grammar {

namespace {

std::string byte_set_to_string(const ByteSet& set) {
  auto show = [](int b) {
    if (b >= 0x21 && b < 0x7f && b != '\\' && b != ']' && b != '-' && b != '^') return std::string(1, char(b));
    return fmt::format("\\x{:02x}", b);
  };
  if (set.count() == 1) {
    for (int b = 0; b < 256; ++b)
      if (set.contains(uint8_t(b))) return "'" + show(b) + "'";
  }
  std::string out = "[";
  for (int b = 0; b < 256;) {
    if (!set.contains(uint8_t(b))) {
      ++b;
      continue;
    }
    int e = b;
    while (e + 1 < 256 && set.contains(uint8_t(e + 1))) ++e;
    out += show(b);
    if (e > b) out += "-" + show(e);
    b = e + 1;
  }
  return out + "]";
}

}  // namespace

std::string Grammar::to_string() const {
  std::string out;
  for (size_t r = 0; r < rules.size(); ++r) {
    out += fmt::format("{}{} ::=", r == size_t(root_rule) ? "*" : "", rules[r].name);
    for (size_t a = 0; a < rules[r].alternatives.size(); ++a) {
      if (a > 0) out += " |";
      if (rules[r].alternatives[a].empty()) out += " ()";
      for (const Symbol& s : rules[r].alternatives[a]) {
        out += " ";
        out += s.kind == Symbol::Kind::Bytes ? byte_set_to_string(byte_sets[size_t(s.index)])
                                             : rules[size_t(s.index)].name;
      }
    }
    out += "\n";
  }
  return out;
}

int32_t GrammarBuilder::new_rule(std::string name, std::vector<std::vector<Symbol>> alternatives, bool anonymous) {
  const auto id = int32_t(grammar_.rules.size());
  if (name.empty()) name = fmt::format("r{}", id);
  grammar_.rules.push_back(Rule{std::move(name), std::move(alternatives), anonymous});
  defined_.push_back(anonymous);
  return id;
}

// Splices anonymous single-alternative rules (sequences) into `out`, so that
// nested sequences do not cost a stack frame each in the matcher.
void GrammarBuilder::append_flattened(std::vector<Symbol>& out, Symbol part) const {
  if (part.kind == Symbol::Kind::Rule) {
    const Rule& rule = grammar_.rules[size_t(part.index)];
    if (rule.anonymous && rule.alternatives.size() == 1) {
      out.insert(out.end(), rule.alternatives[0].begin(), rule.alternatives[0].end());
      return;
    }
  }
  out.push_back(part);
}

Symbol GrammarBuilder::empty() { return rule(new_rule("", {{}}, true)); }

Symbol GrammarBuilder::bytes(const ByteSet& set) {
  check(!set.empty(), "grammar: an empty byte set matches nothing");
  for (size_t i = 0; i < grammar_.byte_sets.size(); ++i)
    if (grammar_.byte_sets[i] == set) return Symbol{Symbol::Kind::Bytes, int32_t(i)};
  grammar_.byte_sets.push_back(set);
  return Symbol{Symbol::Kind::Bytes, int32_t(grammar_.byte_sets.size() - 1)};
}

Symbol GrammarBuilder::literal(std::string_view text) {
  if (text.size() == 1) return bytes(ByteSet::single(uint8_t(text[0])));
  std::vector<Symbol> parts;
  for (char c : text) parts.push_back(bytes(ByteSet::single(uint8_t(c))));
  return rule(new_rule("", {std::move(parts)}, true));
}

Symbol GrammarBuilder::sequence(const std::vector<Symbol>& parts) {
  if (parts.size() == 1) return parts[0];
  std::vector<Symbol> flat;
  for (Symbol p : parts) append_flattened(flat, p);
  return rule(new_rule("", {std::move(flat)}, true));
}

Symbol GrammarBuilder::choice(const std::vector<Symbol>& options) {
  check(!options.empty(), "grammar: a choice needs at least one option");
  if (options.size() == 1) return options[0];
  std::vector<std::vector<Symbol>> alternatives;
  for (Symbol o : options) {
    if (o.kind == Symbol::Kind::Rule && grammar_.rules[size_t(o.index)].anonymous) {
      for (const auto& alt : grammar_.rules[size_t(o.index)].alternatives) alternatives.push_back(alt);
    } else {
      alternatives.push_back({o});
    }
  }
  return rule(new_rule("", std::move(alternatives), true));
}

Symbol GrammarBuilder::repeat(Symbol item, int64_t min_count, int64_t max_count) {
  check(min_count >= 0 && max_count >= min_count, "grammar: bad repetition bounds {}..{}", min_count, max_count);
  check(max_count <= 1 || !is_nullable(item), "grammar: a repeated item must not match the empty string");
  std::vector<Symbol> parts;
  for (int64_t i = 0; i < min_count; ++i) parts.push_back(item);
  if (max_count == kUnbounded) {
    // tail ::= item tail | ()   (right recursion: the matcher turns it into a loop)
    const int32_t tail = new_rule("", {}, false);
    grammar_.rules[size_t(tail)].alternatives = {{}, {}};
    append_flattened(grammar_.rules[size_t(tail)].alternatives[0], item);
    grammar_.rules[size_t(tail)].alternatives[0].push_back(rule(tail));
    defined_[size_t(tail)] = true;
    parts.push_back(rule(tail));
  } else if (max_count > min_count) {
    // opt_k ::= item opt_{k-1} | ()   nested k = max - min deep
    Symbol inner = empty();
    for (int64_t k = 0; k < max_count - min_count; ++k) {
      std::vector<Symbol> alt;
      append_flattened(alt, item);
      append_flattened(alt, inner);
      inner = rule(new_rule("", {std::move(alt), {}}, true));
    }
    parts.push_back(inner);
  }
  if (parts.empty()) return empty();
  return sequence(parts);
}

Symbol GrammarBuilder::text_until(std::string_view terminator) {
  check(!terminator.empty(), "grammar: text_until needs a terminator");
  const size_t n = terminator.size();
  // KMP automaton: state i = the longest suffix of the text read that is a
  // prefix of the terminator has length i. One rule per state; reaching n ends.
  std::vector<size_t> failure(n, 0);
  for (size_t i = 1, k = 0; i < n; ++i) {
    while (k > 0 && terminator[i] != terminator[k]) k = failure[k - 1];
    if (terminator[i] == terminator[k]) ++k;
    failure[i] = k;
  }
  auto next_state = [&](size_t state, uint8_t byte) {
    while (state > 0 && uint8_t(terminator[state]) != byte) state = failure[state - 1];
    return uint8_t(terminator[state]) == byte ? state + 1 : 0;
  };
  std::vector<int32_t> state_rules(n);
  for (size_t i = 0; i < n; ++i) state_rules[i] = new_rule(fmt::format("until{}", i), {}, false);
  for (size_t i = 0; i < n; ++i) {
    std::vector<ByteSet> to(n + 1);
    for (int b = 0; b < 256; ++b) to[next_state(i, uint8_t(b))].add(uint8_t(b));
    auto& alts = grammar_.rules[size_t(state_rules[i])].alternatives;
    for (size_t j = 0; j <= n; ++j) {
      if (to[j].empty()) continue;
      if (j == n)
        alts.push_back({bytes(to[j])});
      else
        alts.push_back({bytes(to[j]), rule(state_rules[j])});
    }
    defined_[size_t(state_rules[i])] = true;
  }
  return rule(state_rules[0]);
}

Symbol GrammarBuilder::text_until(std::string_view terminator, const std::vector<std::string>& forbidden) {
  if (forbidden.empty()) return text_until(terminator);
  check(!terminator.empty(), "grammar: text_until needs a terminator");
  for (const std::string& f : forbidden) check(!f.empty(), "grammar: text_until's forbidden strings must not be empty");
  // An automaton over the prefixes of all the strings: state = the longest
  // suffix of the text read that is a prefix of one of them (few states: the
  // strings are tags). A byte that completes the terminator ends; one that
  // completes a forbidden string (and not the terminator) has no transition.
  std::vector<std::string> patterns(forbidden.begin(), forbidden.end());
  patterns.emplace_back(terminator);
  std::vector<std::string> states = {""};
  auto state_of = [&](const std::string& text) -> int {
    for (size_t i = 0; i < states.size(); ++i)
      if (states[i] == text) return int(i);
    return -1;
  };
  for (const std::string& p : patterns) {
    for (size_t len = 1; len < p.size(); ++len) {
      const std::string prefix = p.substr(0, len);
      if (state_of(prefix) < 0) states.push_back(prefix);
    }
  }
  auto ends_with = [](const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const int kEnd = -1, kRefused = -2;
  auto next_state = [&](const std::string& state, uint8_t byte) -> int {
    const std::string text = state + char(byte);
    if (ends_with(text, std::string(terminator))) return kEnd;
    for (const std::string& f : forbidden)
      if (ends_with(text, f)) return kRefused;
    for (size_t start = 0; start <= text.size(); ++start) {  // the longest suffix that is a state
      const int s = state_of(text.substr(start));
      if (s >= 0) return s;
    }
    return 0;
  };
  std::vector<int32_t> state_rules(states.size());
  for (size_t i = 0; i < states.size(); ++i) state_rules[i] = new_rule(fmt::format("until{}", i), {}, false);
  for (size_t i = 0; i < states.size(); ++i) {
    std::vector<ByteSet> to(states.size());
    ByteSet to_end;
    for (int b = 0; b < 256; ++b) {
      const int next = next_state(states[i], uint8_t(b));
      if (next == kEnd)
        to_end.add(uint8_t(b));
      else if (next >= 0)
        to[size_t(next)].add(uint8_t(b));
    }
    auto& alts = grammar_.rules[size_t(state_rules[i])].alternatives;
    if (!to_end.empty()) alts.push_back({bytes(to_end)});
    for (size_t j = 0; j < states.size(); ++j)
      if (!to[j].empty()) alts.push_back({bytes(to[j]), rule(state_rules[j])});
    defined_[size_t(state_rules[i])] = true;
  }
  return rule(state_rules[0]);
}

int32_t GrammarBuilder::declare_rule(std::string name) { return new_rule(std::move(name), {}, false); }

void GrammarBuilder::define_rule(int32_t rule_id, Symbol body) {
  check(rule_id >= 0 && size_t(rule_id) < grammar_.rules.size() && !defined_[size_t(rule_id)],
        "grammar: rule {} is not a declared, undefined rule", rule_id);
  std::vector<std::vector<Symbol>> alternatives;
  if (body.kind == Symbol::Kind::Rule && grammar_.rules[size_t(body.index)].anonymous) {
    alternatives = grammar_.rules[size_t(body.index)].alternatives;
  } else {
    alternatives.push_back({body});
  }
  grammar_.rules[size_t(rule_id)].alternatives = std::move(alternatives);
  defined_[size_t(rule_id)] = true;
}

bool GrammarBuilder::is_nullable(Symbol symbol) const {
  if (symbol.kind == Symbol::Kind::Bytes) return false;
  std::vector<char> nullable(grammar_.rules.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < grammar_.rules.size(); ++r) {
      if (nullable[r]) continue;
      for (const auto& alt : grammar_.rules[r].alternatives) {
        bool all = true;
        for (const Symbol& s : alt) all = all && s.kind == Symbol::Kind::Rule && nullable[size_t(s.index)];
        if (all) {
          nullable[r] = 1;
          changed = true;
          break;
        }
      }
    }
  }
  return nullable[size_t(symbol.index)];
}

Grammar GrammarBuilder::build(Symbol root) {
  for (size_t r = 0; r < grammar_.rules.size(); ++r)
    check(defined_[r], "grammar: rule '{}' was declared but never defined", grammar_.rules[r].name);
  Grammar g = grammar_;
  if (root.kind == Symbol::Kind::Bytes) {
    g.rules.push_back(Rule{"root", {{root}}, false});
    g.root_rule = int32_t(g.rules.size() - 1);
  } else {
    g.root_rule = root.index;
  }
  return g;
}

}  // namespace llmesh::grammar
