// Region samples as bytes, for Runtime::job_samples's allgather: every field of each sample in
// order, integers and lengths little-endian as the machines of a job share them, doubles as their
// 64 bits. Plain structs both ways: the runtime needs no JSON.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compas/perf/region.hpp"

namespace compas::detail {

std::string encode_samples(const std::vector<perf::RegionSample>& samples);

// The samples of one encoding; std::invalid_argument naming what is wrong when `bytes` is not
// one (cut short, a length beyond its end, bytes left over).
std::vector<perf::RegionSample> decode_samples(std::string_view bytes);

}  // namespace compas::detail
