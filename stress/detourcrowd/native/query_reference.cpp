// Detour's path queries, built natively (-O2), over a shared query set: the levels README's
// "Detour queries" measurement, so that `waymark path` and Detour can be timed on the same
// machine in the same minutes (this kind of machine drifts by a third between minutes; a
// ratio of runs taken back to back holds where a figure from another day does not).
//
//   stress/detourcrowd/native/build.sh          (compiles this file with Recast's sources)
//   target/detourcrowd/query_reference LEVEL.obj QUERIES.csv
//
// The navmesh is RecastDemo's default solo bake (recast_level.h). Per query, as in the
// README and as `waymark path` does: findNearestPoly with half extents (2, 4, 2) for both
// ends, findPath with a 2,048-node pool (at most 256 polygons, RecastDemo's limit) and
// findStraightPath (at most 256 points); each query timed alone with a steady clock, one
// pass over the file. A query is complete when both ends snap and the path is not partial.
//
// Prints one JSON line with `waymark path --json`'s fields: queries, complete_fraction,
// mean_us, median_us, p99_us, mean_length_complete; the bake's polygon count; and, from a
// second pass that runs each phase over every query before the next (as the README splits
// them and as waymark's `cargo bench --bench query` does), nearest_us (both ends), path_us
// and straight_us per query; bake_ms, the median of five solo bakes of the level; and
// bake_stage_ms, each stage's median over the same five (recast_level.h names the stages
// as waymark's `stage_ms` does).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "DetourNavMesh.h"
#include "DetourNavMeshQuery.h"
#include "recast_level.h"

namespace {

struct Query {
    float start[3];
    float end[3];
};

// The first six columns of every row after the header.
bool load_queries(const char* path, std::vector<Query>& queries) {
    std::ifstream file(path);
    if (!file) return false;
    std::string line;
    std::getline(file, line);
    while (std::getline(file, line)) {
        std::istringstream fields(line);
        std::string field;
        float values[6];
        int count = 0;
        while (count < 6 && std::getline(fields, field, ',')) {
            values[count++] = std::strtof(field.c_str(), nullptr);
        }
        if (count < 6) continue;
        queries.push_back({{values[0], values[1], values[2]}, {values[3], values[4], values[5]}});
    }
    return !queries.empty();
}

constexpr int kPathPolygons = 256;
constexpr int kStraightPoints = 256;

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s LEVEL.obj QUERIES.csv\n", argv[0]);
        return 2;
    }
    reference::Level level;
    if (!reference::load_obj(argv[1], level)) {
        std::fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    std::vector<Query> queries;
    if (!load_queries(argv[2], queries)) {
        std::fprintf(stderr, "cannot read queries from %s\n", argv[2]);
        return 1;
    }
    // The bake, timed too (Recast's solo bake, one thread, as in the README's bake table):
    // the median of five, the navmesh of the last kept.
    int polygon_count = 0;
    dtNavMesh* navmesh = nullptr;
    std::vector<double> bake_ms;
    std::vector<reference::BakeStageMs> stage_runs(5);
    for (int run = 0; run < 5; ++run) {
        if (navmesh) dtFreeNavMesh(navmesh);
        const auto bake_clock = std::chrono::steady_clock::now();
        navmesh = reference::bake(level, polygon_count, &stage_runs[run]);
        const auto elapsed = std::chrono::steady_clock::now() - bake_clock;
        bake_ms.push_back(std::chrono::duration<double, std::milli>(elapsed).count());
        if (!navmesh) {
            std::fprintf(stderr, "the bake failed\n");
            return 1;
        }
    }
    std::sort(bake_ms.begin(), bake_ms.end());
    // Each stage's median over the runs.
    const auto stage = [&](double reference::BakeStageMs::*field) {
        std::vector<double> values;
        for (const auto& run : stage_runs) values.push_back(run.*field);
        std::sort(values.begin(), values.end());
        return values[values.size() / 2];
    };
    using Stages = reference::BakeStageMs;
    char stages_json[512];
    std::snprintf(stages_json, sizeof(stages_json),
                  "{\"rasterize\":%.4f,\"filter\":%.4f,\"compact\":%.4f,\"erode\":%.4f,"
                  "\"distance_field\":%.4f,\"regions\":%.4f,\"contours\":%.4f,"
                  "\"polygon_mesh\":%.4f,\"detail\":%.4f,\"navmesh\":%.4f}",
                  stage(&Stages::rasterize), stage(&Stages::filter), stage(&Stages::compact),
                  stage(&Stages::erode), stage(&Stages::distance_field), stage(&Stages::regions),
                  stage(&Stages::contours), stage(&Stages::polygon_mesh), stage(&Stages::detail),
                  stage(&Stages::navmesh));
    dtNavMeshQuery* query = dtAllocNavMeshQuery();
    query->init(navmesh, 2048);
    dtQueryFilter filter;
    const float half_extents[3] = {2.0f, 4.0f, 2.0f};

    std::vector<double> times_us;
    times_us.reserve(queries.size());
    int complete = 0;
    double length_complete = 0.0;
    dtPolyRef path[kPathPolygons];
    float straight[kStraightPoints * 3];
    for (const Query& pair : queries) {
        const auto clock = std::chrono::steady_clock::now();
        dtPolyRef start_ref = 0, end_ref = 0;
        float start[3], end[3];
        query->findNearestPoly(pair.start, half_extents, &filter, &start_ref, start);
        query->findNearestPoly(pair.end, half_extents, &filter, &end_ref, end);
        bool reached = false;
        int points = 0;
        if (start_ref && end_ref) {
            int path_count = 0;
            const dtStatus status = query->findPath(start_ref, end_ref, start, end, &filter,
                                                    path, &path_count, kPathPolygons);
            reached = dtStatusSucceed(status) && !(status & DT_PARTIAL_RESULT) && path_count > 0;
            if (path_count > 0) {
                query->findStraightPath(start, end, path, path_count, straight, nullptr,
                                        nullptr, &points, kStraightPoints);
            }
        }
        const auto elapsed = std::chrono::steady_clock::now() - clock;
        times_us.push_back(std::chrono::duration<double, std::micro>(elapsed).count());
        if (reached) {
            ++complete;
            for (int i = 1; i < points; ++i) {
                const float* a = &straight[(i - 1) * 3];
                const float* b = &straight[i * 3];
                length_complete += std::sqrt((b[0] - a[0]) * (b[0] - a[0]) +
                                             (b[1] - a[1]) * (b[1] - a[1]) +
                                             (b[2] - a[2]) * (b[2] - a[2]));
            }
        }
    }

    // The phases alone, as the README splits them and waymark's `query` bench runs them:
    // every snap, then every search, then every straight path, each phase timed as a
    // whole and divided by the queries.
    std::vector<dtPolyRef> start_refs(queries.size()), end_refs(queries.size());
    std::vector<float> snapped(queries.size() * 6);
    auto phase_clock = std::chrono::steady_clock::now();
    for (size_t i = 0; i < queries.size(); ++i) {
        query->findNearestPoly(queries[i].start, half_extents, &filter, &start_refs[i],
                               &snapped[i * 6]);
        query->findNearestPoly(queries[i].end, half_extents, &filter, &end_refs[i],
                               &snapped[i * 6 + 3]);
    }
    const auto since = [](std::chrono::steady_clock::time_point from, size_t count) {
        const auto elapsed = std::chrono::steady_clock::now() - from;
        return std::chrono::duration<double, std::micro>(elapsed).count() / count;
    };
    const double nearest_us = since(phase_clock, queries.size());
    std::vector<std::vector<dtPolyRef>> paths(queries.size());
    phase_clock = std::chrono::steady_clock::now();
    for (size_t i = 0; i < queries.size(); ++i) {
        if (!start_refs[i] || !end_refs[i]) continue;
        int path_count = 0;
        query->findPath(start_refs[i], end_refs[i], &snapped[i * 6], &snapped[i * 6 + 3],
                        &filter, path, &path_count, kPathPolygons);
        paths[i].assign(path, path + path_count);
    }
    const double path_us = since(phase_clock, queries.size());
    phase_clock = std::chrono::steady_clock::now();
    for (size_t i = 0; i < queries.size(); ++i) {
        if (paths[i].empty()) continue;
        int points = 0;
        query->findStraightPath(&snapped[i * 6], &snapped[i * 6 + 3], paths[i].data(),
                                static_cast<int>(paths[i].size()), straight, nullptr, nullptr,
                                &points, kStraightPoints);
    }
    const double straight_us = since(phase_clock, queries.size());

    double total = 0.0;
    for (double time : times_us) total += time;
    std::vector<double> sorted = times_us;
    std::sort(sorted.begin(), sorted.end());
    const auto at = [&](double fraction) {
        return sorted[static_cast<size_t>(std::lround((sorted.size() - 1) * fraction))];
    };
    std::printf(
        "{\"queries\":%zu,\"complete_fraction\":%.4f,\"mean_us\":%.4f,\"median_us\":%.4f,"
        "\"p99_us\":%.4f,\"mean_length_complete\":%.4f,\"polygons\":%d,"
        "\"nearest_us\":%.4f,\"path_us\":%.4f,\"straight_us\":%.4f,\"bake_ms\":%.3f,"
        "\"bake_stage_ms\":%s}\n",
        queries.size(), static_cast<double>(complete) / queries.size(), total / queries.size(),
        at(0.5), at(0.99), complete ? length_complete / complete : 0.0, polygon_count,
        nearest_us, path_us, straight_us, bake_ms[2], stages_json);
    dtFreeNavMeshQuery(query);
    dtFreeNavMesh(navmesh);
    return 0;
}
