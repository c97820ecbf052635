#include "plan/burst_planner.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace wt {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void check_costs(const BurstCosts& c) {
  const size_t n = c.counts.size(), units = c.comp.size();
  if (n == 0 || units == 0) throw std::invalid_argument("burst planner: no units or no counts");
  for (size_t k = 0; k < n; ++k)
    if (c.counts[k] < 1 || (k > 0 && c.counts[k] <= c.counts[k - 1]))
      throw std::invalid_argument("burst planner: counts must be positive and ascending");
  if (c.sync.size() != units || c.comm.size() != units)
    throw std::invalid_argument("burst planner: comp, sync and comm disagree on the unit count");
  for (size_t u = 0; u < units; ++u) {
    if (c.comp[u].size() != n || c.sync[u].size() != n || c.comm[u].size() != n)
      throw std::invalid_argument("burst planner: unit " + std::to_string(u) +
                                  " does not have one cost per count");
    for (const auto& row : c.comm[u])
      if (row.size() != n)
        throw std::invalid_argument("burst planner: unit " + std::to_string(u) +
                                    "'s comm is not counts x counts");
  }
}

// The dynamic program's tables, [unit][count index].
struct Tables {
  std::vector<std::vector<double>> S, T, amp;
  std::vector<std::vector<int>> pred;  // count index of the predecessor unit
};

// Amp(u, g): GPU-seconds at g over the single-rank time; 1 for exempt (tiny) units.
double amplification(const BurstCosts& c, const BurstOptions& o, int u, size_t k, double t) {
  const double single = c.comp[u][0] + c.sync[u][0];
  if (c.counts[0] != 1 || single <= o.amp_exempt_s || single <= 0) return 1.0;
  return t * c.counts[k] / single;
}

Tables search_linear(const BurstCosts& c, const BurstOptions& o) {
  const int units = c.units();
  const size_t n = c.counts.size();
  Tables t;
  t.S.assign(size_t(units), std::vector<double>(n, kInf));
  t.T = t.S;
  t.amp = t.S;
  t.pred.assign(size_t(units), std::vector<int>(n, -1));
  for (int u = 0; u < units; ++u)
    for (size_t g = 0; g < n; ++g) {
      double best_s = kInf, best_t = kInf, best_amp = kInf;
      for (size_t h = 0; h < n; ++h) {  // ascending: the rule depends on this order
        const double prev_s = u == 0 ? 0.0 : t.S[size_t(u - 1)][h];
        const double prev_amp = u == 0 ? 1.0 : t.amp[size_t(u - 1)][h];
        const double comm = u == 0 ? 0.0 : c.comm[size_t(u)][h][g];
        const double cand = prev_s + comm;
        if (prev_amp <= std::max(best_amp, o.amp_limit) && cand <= best_s) {
          best_s = cand;
          best_t = comm;
          best_amp = std::min(best_amp, prev_amp);
          t.pred[size_t(u)][g] = static_cast<int>(h);
        }
      }
      const double own = c.comp[size_t(u)][g] + c.sync[size_t(u)][g];
      t.S[size_t(u)][g] = best_s + own;
      t.T[size_t(u)][g] = best_t + own;
      t.amp[size_t(u)][g] = amplification(c, o, u, g, t.T[size_t(u)][g]);
    }
  return t;
}

}  // namespace

namespace {

// The plan that runs unit u on counts[chosen[u]] ranks, priced along its own path.
BurstPlan price_plan(const BurstCosts& costs, const BurstOptions& options,
                     const std::vector<size_t>& chosen) {
  BurstPlan plan;
  int widest = 1;
  for (int u = 0; u < costs.units(); ++u) {
    const size_t k = chosen[size_t(u)];
    BurstUnitPlan p;
    p.count = costs.counts[k];
    p.comp_s = costs.comp[size_t(u)][k];
    p.sync_s = costs.sync[size_t(u)][k];
    p.comm_s = u == 0 ? 0.0 : costs.comm[size_t(u)][chosen[size_t(u - 1)]][k];
    const double unit_s = p.comm_s + p.comp_s + p.sync_s;
    p.cumulative_s = (u == 0 ? 0.0 : plan.units.back().cumulative_s) + unit_s;
    p.amplification = amplification(costs, options, u, k, unit_s);
    plan.gpu_seconds += p.count * unit_s;
    widest = std::max(widest, p.count);
    plan.units.push_back(p);
  }
  plan.step_s = plan.units.back().cumulative_s;
  plan.idle_s.assign(size_t(widest), plan.step_s);
  for (const BurstUnitPlan& p : plan.units)
    for (int r = 0; r < p.count; ++r) plan.idle_s[size_t(r)] -= p.comm_s + p.comp_s + p.sync_s;
  for (double& idle : plan.idle_s) idle = std::max(0.0, idle);  // rounding on the busiest rank
  return plan;
}

}  // namespace

BurstPlan plan_burst(const BurstCosts& costs, const BurstOptions& options) {
  check_costs(costs);
  const Tables t = search_linear(costs, options);
  const int units = costs.units();
  const auto& last = t.S.back();
  size_t g = size_t(std::min_element(last.begin(), last.end()) - last.begin());  // first minimum
  std::vector<size_t> chosen(static_cast<size_t>(units));
  for (int u = units - 1; u >= 0; --u) {
    chosen[size_t(u)] = g;
    if (u > 0) g = size_t(t.pred[size_t(u)][g]);
  }
  return price_plan(costs, options, chosen);
}

BurstPlan price_burst_plan(const BurstCosts& costs, const BurstOptions& options,
                           const std::vector<int>& unit_counts) {
  check_costs(costs);
  if (static_cast<int>(unit_counts.size()) != costs.units())
    throw std::invalid_argument("a forced plan needs one rank count per unit (" +
                                std::to_string(costs.units()) + "), got " +
                                std::to_string(unit_counts.size()));
  std::vector<size_t> chosen;
  for (int count : unit_counts) {
    auto it = std::find(costs.counts.begin(), costs.counts.end(), count);
    if (it == costs.counts.end())
      throw std::invalid_argument(std::to_string(count) + " is not a candidate rank count");
    chosen.push_back(size_t(it - costs.counts.begin()));
  }
  return price_plan(costs, options, chosen);
}

std::vector<BurstPlan::Segment> BurstPlan::segments() const {
  std::vector<Segment> out;
  for (int u = 0; u < static_cast<int>(units.size()); ++u) {
    if (!out.empty() && out.back().count == units[size_t(u)].count)
      out.back().unit_end = u + 1;
    else
      out.push_back({u, u + 1, units[size_t(u)].count});
  }
  return out;
}

std::string burst_plan_table(const BurstPlan& plan, const std::vector<std::string>& unit_names) {
  std::string out =
      "unit                     ranks    comp ms    comm ms    sync ms  cumul ms    amp\n";
  char line[160];
  for (size_t u = 0; u < plan.units.size(); ++u) {
    const BurstUnitPlan& p = plan.units[u];
    const std::string name = u < unit_names.size() ? unit_names[u] : std::to_string(u);
    std::snprintf(line, sizeof line, "%-24s %6d %10.3f %10.3f %10.3f %9.3f %6.2f\n",
                  name.substr(0, 24).c_str(), p.count, p.comp_s * 1e3, p.comm_s * 1e3,
                  p.sync_s * 1e3, p.cumulative_s * 1e3, p.amplification);
    out += line;
  }
  std::snprintf(line, sizeof line,
                "predicted step %.3f ms, %.3f GPU-ms, idle per rank (ms):", plan.step_s * 1e3,
                plan.gpu_seconds * 1e3);
  out += line;
  for (double idle : plan.idle_s) {
    std::snprintf(line, sizeof line, " %.3f", idle * 1e3);
    out += line;
  }
  return out + "\n";
}

}  // namespace wt
