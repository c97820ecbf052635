#pragma once
// Writes trace.h5 (format "wavetrain-trace", version 1): root attributes from TraceInfo, and per
// rank a group /rank_<r> with column datasets events/{name,stage,batch,wave,stream,step,begin,
// end,bytes}, steps/{step,begin,end} and memory/{time,in_use,reserved}. The file appears under
// its final name only once complete (written to a temporary name, then renamed), so a crash
// while writing never leaves a truncated trace. Takes wt::hdf5_mutex() for every HDF5 call.
#include <string>
#include <vector>

#include "io/trace_data.hpp"

namespace wt {

constexpr const char* kTraceFormat = "wavetrain-trace";
constexpr int kTraceVersion = 1;

// Throws std::runtime_error when the file cannot be written.
void write_trace_file(const std::string& path, const TraceInfo& info,
                      const std::vector<RankTrace>& ranks);

}  // namespace wt
