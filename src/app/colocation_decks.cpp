#include "app/colocation_decks.hpp"

#include <filesystem>
#include <map>

#include "app/text_format.hpp"
#include "deck/deck_parser.hpp"
#include "deck/schema.hpp"

namespace fs = std::filesystem;

namespace wt {

namespace {

// The keys that describe the co-location itself, not its jobs.
bool colocation_own_key(const KeyDef& def) {
  const std::string section = def.section, dotted = def.dotted();
  return section == "colocate" || section == "device" || dotted == "run.name" ||
         dotted == "run.output_dir";
}

// Every other key the co-location deck set, as an override of each job's deck from where it was
// set.
std::vector<PlacedOverride> keys_for_every_job(const RunConfig& colocation) {
  std::vector<PlacedOverride> placed;
  for (const KeyDef& def : deck_schema()) {
    auto origin = colocation.key_origins.find(def.dotted());
    if (origin == colocation.key_origins.end() || colocation_own_key(def)) continue;
    placed.push_back({def.dotted() + "=" + format_value(def, colocation), origin->second.file,
                      origin->second.line});
  }
  return placed;
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

// A job deck that cannot be one of the co-located jobs (see the header).
void check_job_deck(const RunConfig& job, const RunConfig& colocation, const std::string& listed,
                    int ranks) {
  const std::string name = "job '" + job.run.name + "' ('" + listed + "')";
  if (!job.colocate.decks.empty())
    throw deck_error(
        colocation, "colocate.decks",
        "'" + listed + "' " +
            (same_file(job.deck_path, colocation.deck_path)
                 ? "is this co-location deck itself"
                 : "is a co-location deck too (it lists decks of its own, " + job.deck_path + ")") +
            ": list the decks of jobs that train a model, not co-location decks");
  if (!job.background.deck.empty())
    throw deck_error(job, "background.deck",
                     name + " is co-located: a co-located job cannot host a background job");
  if (job.schedule.kind == "auto")  // auto plans a job alone on its ranks
    throw deck_error(job, "schedule.kind",
                     name +
                         ": \"auto\" chooses a schedule for a job that has its ranks to itself, "
                         "not for one co-located with others: name the schedule (--show-auto "
                         "prints auto's choice)");
  if (ranks > 1 && job.schedule.kind != "gang")
    throw deck_error(job, "schedule.kind",
                     name + " has schedule \"" + job.schedule.kind + "\" co-located on " +
                         std::to_string(ranks) +
                         " ranks: co-location on several ranks needs data-parallel jobs "
                         "(schedule.kind = \"gang\"), whose ranks all run the same program (each "
                         "rank pairs its jobs by its own memory profile, so a schedule that gives "
                         "the ranks different programs would interleave their transfers and "
                         "collectives differently on each rank and deadlock); co-locate it on one "
                         "rank, or train it alone");
  if (job.train.precision != colocation.train.precision)
    throw deck_error(job, "train.precision",
                     name + " has \"" + job.train.precision + "\", the co-location deck \"" +
                         colocation.train.precision +
                         "\": co-located jobs share one device, whose GEMM and convolution "
                         "precision is the co-location deck's; set it alike in every deck");
}

// One watchdog per rank: the jobs' stall limits must be one.
void check_stall_seconds(const std::vector<RunConfig>& decks,
                         const std::vector<std::string>& listed) {
  for (size_t k = 1; k < decks.size(); ++k)
    if (decks[k].failure.stall_seconds != decks[0].failure.stall_seconds)
      throw deck_error(decks[k], "failure.stall_seconds",
                       "'" + listed[k] + "' has " +
                           format_number("%g", decks[k].failure.stall_seconds) + " s, '" +
                           listed[0] + "' " + format_number("%g", decks[0].failure.stall_seconds) +
                           " s: co-located jobs share their rank's one stall watchdog; set "
                           "failure.stall_seconds in the co-location deck (it then applies to "
                           "every job) or alike in every job deck");
}

}  // namespace

ColocatedJobDecks colocated_job_decks(const RunConfig& colocation, const std::string& run_dir,
                                      int ranks) {
  const fs::path base = fs::path(colocation.deck_path).parent_path();
  const std::vector<PlacedOverride> shared = keys_for_every_job(colocation);
  ColocatedJobDecks jobs;
  std::map<std::string, std::string> deck_of_dir;
  for (const std::string& listed : colocation.colocate.decks) {
    jobs.decks.push_back(parse_deck((base / listed).string(), {}, shared));
    check_job_deck(jobs.decks.back(), colocation, listed, ranks);
    const std::string dir = (fs::path(run_dir) / jobs.decks.back().run.name).string();
    auto [it, fresh] = deck_of_dir.emplace(dir, listed);
    if (!fresh)
      throw deck_error(colocation, "colocate.decks",
                       "'" + it->second + "' and '" + listed + "' both name run.name = \"" +
                           jobs.decks.back().run.name + "\": each job needs its own run directory");
    jobs.run_dirs.push_back(dir);
  }
  check_stall_seconds(jobs.decks, colocation.colocate.decks);
  if (colocation.device.memory_limit > 0 &&
      colocation.colocate.split_bytes > colocation.device.memory_limit)
    throw deck_error(colocation, "colocate.split_bytes",
                     std::to_string(colocation.colocate.split_bytes) +
                         " bytes is more than the device's budget, device.memory_limit = " +
                         std::to_string(colocation.device.memory_limit));
  return jobs;
}

double watchdog_stall_seconds(const RunConfig& deck, int ranks) {
  if (deck.colocate.decks.empty()) return deck.failure.stall_seconds;
  return colocated_job_decks(deck, "", ranks).decks.front().failure.stall_seconds;
}

void require_job_deck(const RunConfig& deck, const std::string& use) {
  if (deck.colocate.decks.empty()) return;
  std::string listed;
  for (const std::string& d : deck.colocate.decks) listed += (listed.empty() ? "" : ", ") + d;
  throw deck_error(deck, "colocate.decks",
                   use +
                       " needs the deck of a job that trains a model; this is a co-location "
                       "deck, whose jobs are " +
                       listed + ": give one of those");
}

}  // namespace wt
