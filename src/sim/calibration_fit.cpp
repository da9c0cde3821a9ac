#include "sim/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"

namespace llmesh::sim {
namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    cell.erase(0, cell.find_first_not_of(" \t\r"));
    cell.erase(cell.find_last_not_of(" \t\r") + 1);
    cells.push_back(cell);
  }
  return cells;
}

}  // namespace

std::vector<double> least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& targets) {
  check(!rows.empty() && rows.size() == targets.size(), "fit: no data");
  const size_t cols = rows[0].size();
  check(rows.size() >= cols, "fit: need at least {} points, got {}", cols, rows.size());
  // Scale columns to unit max so the normal equations stay well conditioned.
  std::vector<double> scale(cols, 0);
  for (const auto& row : rows)
    for (size_t j = 0; j < cols; ++j) scale[j] = std::max(scale[j], std::abs(row[j]));
  for (size_t j = 0; j < cols; ++j) check(scale[j] > 0, "fit: feature {} is zero in every point", j);
  // Normal equations A^T A x = A^T y, augmented: [cols][cols + 1].
  std::vector<std::vector<double>> m(cols, std::vector<double>(cols + 1, 0));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t i = 0; i < cols; ++i) {
      double ai = rows[r][i] / scale[i];
      for (size_t j = 0; j < cols; ++j) m[i][j] += ai * rows[r][j] / scale[j];
      m[i][cols] += ai * targets[r];
    }
  }
  // Gaussian elimination with partial pivoting.
  for (size_t c = 0; c < cols; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < cols; ++r)
      if (std::abs(m[r][c]) > std::abs(m[pivot][c])) pivot = r;
    check(std::abs(m[pivot][c]) > 1e-12 * std::max(1.0, std::abs(m[0][0])),
          "fit: the points do not determine the coefficients (vary batch size, lengths and context)");
    std::swap(m[c], m[pivot]);
    for (size_t r = 0; r < cols; ++r) {
      if (r == c) continue;
      double f = m[r][c] / m[c][c];
      for (size_t k = c; k <= cols; ++k) m[r][k] -= f * m[c][k];
    }
  }
  std::vector<double> x(cols);
  for (size_t c = 0; c < cols; ++c) x[c] = m[c][cols] / m[c][c] / scale[c];
  return x;
}

std::vector<MeasuredStep> parse_measured_steps_csv(const std::string& text, const std::string& source_name) {
  std::istringstream in(text);
  std::string line;
  check(static_cast<bool>(std::getline(in, line)), "{}: empty file", source_name);
  std::vector<std::string> header = split_csv_line(line);
  const std::vector<std::string> want = {"phase", "batch_size", "new_tokens_per_seq", "context_tokens_per_seq",
                                         "seconds"};
  std::vector<int> column(want.size(), -1);
  for (size_t i = 0; i < header.size(); ++i) {
    for (size_t k = 0; k < want.size(); ++k)
      if (header[i] == want[k]) column[k] = static_cast<int>(i);
  }
  for (size_t k = 0; k < want.size(); ++k) {
    check(column[k] >= 0, "{}: header needs column \"{}\" (phase,batch_size,new_tokens_per_seq,"
          "context_tokens_per_seq,seconds)", source_name, want[k]);
  }
  std::vector<MeasuredStep> steps;
  int line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> cells = split_csv_line(line);
    check(cells.size() >= header.size(), "{}:{}: expected {} cells, got {}", source_name, line_number, header.size(),
          cells.size());
    MeasuredStep s;
    const std::string& phase = cells[column[0]];
    check(phase == "prefill" || phase == "decode", "{}:{}: phase must be prefill or decode, got \"{}\"", source_name,
          line_number, phase);
    s.is_prefill = phase == "prefill";
    try {
      s.batch_size = std::stoll(cells[column[1]]);
      s.new_tokens_per_seq = std::stoll(cells[column[2]]);
      s.context_tokens_per_seq = std::stoll(cells[column[3]]);
      s.seconds = std::stod(cells[column[4]]);
    } catch (const std::exception&) {
      fail("{}:{}: not a number in \"{}\"", source_name, line_number, line);
    }
    check(s.batch_size >= 1 && s.seconds > 0 && s.context_tokens_per_seq >= 0 &&
              (!s.is_prefill || s.new_tokens_per_seq >= 1),
          "{}:{}: need batch_size >= 1, seconds > 0, context >= 0 and prefill new tokens >= 1", source_name,
          line_number);
    steps.push_back(s);
  }
  return steps;
}

CalibrationFit fit_calibration(const std::vector<MeasuredStep>& steps) {
  std::vector<std::vector<double>> prefill_rows, decode_rows;
  std::vector<double> prefill_y, decode_y;
  for (const MeasuredStep& s : steps) {
    double b = static_cast<double>(s.batch_size);
    double n = static_cast<double>(s.new_tokens_per_seq);
    double c = static_cast<double>(s.context_tokens_per_seq);
    if (s.is_prefill) {
      prefill_rows.push_back({1.0, b * n, b * n * (c + n)});
      prefill_y.push_back(s.seconds);
    } else {
      decode_rows.push_back({1.0, b * c, b});
      decode_y.push_back(s.seconds);
    }
  }
  check(prefill_rows.size() >= 3, "fit: need at least 3 prefill points, got {}", prefill_rows.size());
  check(decode_rows.size() >= 3, "fit: need at least 3 decode points, got {}", decode_rows.size());
  CalibrationFit fit;
  std::vector<double> p = least_squares(prefill_rows, prefill_y);
  std::vector<double> d = least_squares(decode_rows, decode_y);
  fit.coefficients = {p[0], p[1], p[2], d[0], d[1], d[2]};
  fit.num_prefill_points = static_cast<int>(prefill_rows.size());
  fit.num_decode_points = static_cast<int>(decode_rows.size());
  auto max_error = [](const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                      const std::vector<double>& x) {
    double worst = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      double predicted = x[0] * rows[r][0] + x[1] * rows[r][1] + x[2] * rows[r][2];
      worst = std::max(worst, std::abs(predicted - y[r]) / y[r]);
    }
    return worst;
  };
  fit.prefill_max_relative_error = max_error(prefill_rows, prefill_y, p);
  fit.decode_max_relative_error = max_error(decode_rows, decode_y, d);
  return fit;
}

nlohmann::json calibration_json(const CalibrationFit& fit) {
  const CalibrationCoefficients& c = fit.coefficients;
  return {
      {"prefill",
       {{"fixed_s", c.prefill_fixed_s},
        {"per_token_s", c.prefill_per_token_s},
        {"per_token_context_s", c.prefill_per_token_context_s}}},
      {"decode",
       {{"fixed_s", c.decode_fixed_s},
        {"per_context_token_s", c.decode_per_context_token_s},
        {"per_sequence_s", c.decode_per_sequence_s}}},
      {"fit",
       {{"prefill_points", fit.num_prefill_points},
        {"decode_points", fit.num_decode_points},
        {"prefill_max_relative_error", fit.prefill_max_relative_error},
        {"decode_max_relative_error", fit.decode_max_relative_error}}},
  };
}

}  // namespace llmesh::sim
