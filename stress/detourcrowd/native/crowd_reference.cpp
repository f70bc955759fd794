// DetourCrowd, built natively (-O2), on a shared crowd: the same measurement as the levels
// README's DetourCrowd table, so waymark and DetourCrowd can be timed on the same machine in
// the same minutes (this VM's speed drifts 1.3-1.5x between minutes; a ratio of two runs
// taken back to back holds where an absolute figure from another day does not).
//
//   stress/detourcrowd/native/build.sh          (compiles this file with Recast's sources)
//   target/detourcrowd/crowd_reference LEVEL.obj AGENTS.csv [N=1000] [AVOIDANCE=3] [FRAMES=300]
//                                      [ARRIVE_M=0.25]
//
// The setup is the README's: RecastDemo's default solo bake (cell 0.3, cell height 0.2,
// agent height 2, radius 0.6, climb 0.9, slope 45, region min size 8, merge size 20, edge
// length 12, edge error 1.3, 6 verts per polygon, detail sample distance 6, detail error 1,
// watershed regions), agents with radius 0.6, height 2, max acceleration 8, max speed 3.5,
// collision query range 12 r, path optimisation range 30 r, separation weight 2, all update
// flags, RecastDemo's four avoidance settings, dt 1/30, each agent taking its next target
// on arriving within ARRIVE_M (horizontally; 0.25 m, waymark's arrival tolerance, unless
// given). Starts and targets are snapped to the navmesh
// with half extents (2, 4, 2).
//
// Prints one JSON line: the median and mean ms per dtCrowd::update, agents/ms from the
// median, arrivals, agents waiting for a path at the last frame (requesting, queued or
// searching), overlapping pairs per frame (feet closer than the sum of the radii by more
// than 1 mm, heights within 2 m: waymark's measure) and the bake's polygon count (118 on
// dungeon.obj in the README).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "DetourCrowd.h"
#include "DetourNavMesh.h"
#include "DetourNavMeshBuilder.h"
#include "DetourNavMeshQuery.h"
#include "Recast.h"
#include "recast_level.h"

namespace {

using reference::Level;
using reference::bake;
using reference::load_obj;

struct Agent {
    int index;
    std::vector<dtPolyRef> target_polygons;
    std::vector<float> targets;  // x, y, z per target
    size_t next = 0;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: crowd_reference LEVEL.obj AGENTS.csv [N=1000] [AVOIDANCE=3] "
                     "[FRAMES=300] [ARRIVE_M=0.25]\n");
        return 2;
    }
    const int count = argc > 3 ? std::atoi(argv[3]) : 1000;
    const int avoidance = argc > 4 ? std::atoi(argv[4]) : 3;
    const int frames = argc > 5 ? std::atoi(argv[5]) : 300;
    const float arrive_m = argc > 6 ? std::strtof(argv[6], nullptr) : 0.25f;
    const float radius = 0.6f, dt = 1.0f / 30.0f;
    if (count <= 0 || avoidance < 0 || avoidance > 3 || frames <= 0 || !(arrive_m > 0.0f)) {
        std::fprintf(stderr, "bad N %d, AVOIDANCE %d, FRAMES %d or ARRIVE_M %g\n", count,
                     avoidance, frames, arrive_m);
        return 2;
    }

    Level level;
    if (!load_obj(argv[1], level)) {
        std::fprintf(stderr, "%s: no triangles read\n", argv[1]);
        return 1;
    }
    int polygon_count = 0;
    dtNavMesh* navmesh = bake(level, polygon_count);
    if (!navmesh) {
        std::fprintf(stderr, "%s: the bake failed\n", argv[1]);
        return 1;
    }
    dtNavMeshQuery* query = dtAllocNavMeshQuery();
    query->init(navmesh, 2048);
    dtCrowd* crowd = dtAllocCrowd();
    crowd->init(count, radius, navmesh);
    const int settings[4][3] = {{5, 2, 1}, {5, 2, 2}, {7, 2, 3}, {7, 3, 3}};
    for (int i = 0; i < 4; ++i) {
        dtObstacleAvoidanceParams params = *crowd->getObstacleAvoidanceParams(i);
        params.velBias = 0.5f;
        params.adaptiveDivs = static_cast<unsigned char>(settings[i][0]);
        params.adaptiveRings = static_cast<unsigned char>(settings[i][1]);
        params.adaptiveDepth = static_cast<unsigned char>(settings[i][2]);
        crowd->setObstacleAvoidanceParams(i, &params);
    }

    dtQueryFilter filter;
    const float half_extents[3] = {2.0f, 4.0f, 2.0f};
    auto snap = [&](const float* point, float* snapped) {
        dtPolyRef polygon = 0;
        query->findNearestPoly(point, half_extents, &filter, &polygon, snapped);
        return polygon;
    };

    std::ifstream csv(argv[2]);
    std::string line;
    std::getline(csv, line);  // header
    std::vector<Agent> agents;
    while (static_cast<int>(agents.size()) < count && std::getline(csv, line)) {
        std::vector<float> row;
        std::stringstream cells(line);
        std::string cell;
        while (std::getline(cells, cell, ',')) row.push_back(std::strtof(cell.c_str(), nullptr));
        if (row.size() < 7) continue;
        dtCrowdAgentParams params;
        std::memset(&params, 0, sizeof(params));
        params.radius = radius;
        params.height = 2.0f;
        params.maxAcceleration = 8.0f;
        params.maxSpeed = 3.5f;
        params.collisionQueryRange = 12.0f * radius;
        params.pathOptimizationRange = 30.0f * radius;
        params.separationWeight = 2.0f;
        params.updateFlags = DT_CROWD_ANTICIPATE_TURNS | DT_CROWD_OPTIMIZE_VIS |
                             DT_CROWD_OPTIMIZE_TOPO | DT_CROWD_OBSTACLE_AVOIDANCE |
                             DT_CROWD_SEPARATION;
        params.obstacleAvoidanceType = static_cast<unsigned char>(avoidance);
        float start[3];
        snap(&row[1], start);
        Agent agent;
        agent.index = crowd->addAgent(start, &params);
        if (agent.index < 0) continue;
        for (size_t k = 4; k + 2 < row.size(); k += 3) {
            float snapped[3];
            agent.target_polygons.push_back(snap(&row[k], snapped));
            agent.targets.insert(agent.targets.end(), snapped, snapped + 3);
        }
        if (agent.target_polygons.empty()) continue;
        crowd->requestMoveTarget(agent.index, agent.target_polygons[0], &agent.targets[0]);
        agents.push_back(std::move(agent));
    }

    const int agent_count = static_cast<int>(agents.size());
    const float cover_m2 = agent_count * 3.14159265f * radius * radius;
    const double walkable_m2 = reference::walkable_area_m2(navmesh);
    std::vector<double> update_ms;
    long arrivals = 0, partial_ends = 0;
    reference::OverlapCounter overlaps(2.0f * radius);
    std::vector<float> feet(agents.size() * 3), before(agents.size() * 3);
    // Flow, by waymark's FlowMeter rules: progress along the corridor is the step's
    // displacement along the direction to the first corner; an order without 0.5 m of it
    // in its last 3 s at the end is stuck.
    std::vector<float> progress_m(agents.size(), 0.0f), without_progress_s(agents.size(), 0.0f);
    double efficiency_sum = 0.0;
    long efficiency_samples = 0;
    for (int frame = 0; frame < frames; ++frame) {
        for (size_t i = 0; i < agents.size(); ++i) {
            const float* foot = crowd->getAgent(agents[i].index)->npos;
            std::copy(foot, foot + 3, &before[i * 3]);
        }
        const auto start = std::chrono::steady_clock::now();
        crowd->update(dt, nullptr);
        const auto end = std::chrono::steady_clock::now();
        update_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
        for (size_t i = 0; i < agents.size(); ++i) {
            Agent& agent = agents[i];
            const dtCrowdAgent* crowd_agent = crowd->getAgent(agent.index);
            const float* foot = crowd_agent->npos;
            std::copy(foot, foot + 3, &feet[i * 3]);
            // Progress along the corridor this step.
            float along = 0.0f;
            const bool following = crowd_agent->state == DT_CROWDAGENT_STATE_WALKING &&
                                   crowd_agent->targetState != DT_CROWDAGENT_TARGET_NONE &&
                                   crowd_agent->targetState != DT_CROWDAGENT_TARGET_FAILED &&
                                   crowd_agent->ncorners > 0;
            if (following) {
                const float* corner = crowd_agent->cornerVerts;
                const float to_x = corner[0] - before[i * 3], to_z = corner[2] - before[i * 3 + 2];
                const float to_length = std::hypot(to_x, to_z);
                if (to_length > 1e-6f) {
                    along = ((foot[0] - before[i * 3]) * to_x + (foot[2] - before[i * 3 + 2]) * to_z) /
                            (to_length * dt);
                }
                efficiency_sum += along / crowd_agent->params.maxSpeed;
                ++efficiency_samples;
            }
            progress_m[i] += along * dt;
            if (progress_m[i] >= 0.5f) {
                progress_m[i] = 0.0f;
                without_progress_s[i] = 0.0f;
            } else {
                without_progress_s[i] += dt;
            }
            // Arrivals: within ARRIVE_M of the requested target (horizontally). Partial
            // ends: within ARRIVE_M of the end of a corridor whose last polygon is not the
            // target's (the target is unreachable), once the searched path is in (or being
            // searched again, the corridor kept). Both take the next target.
            const float* target = &agent.targets[agent.next * 3];
            bool ended = false;
            if (std::hypot(foot[0] - target[0], foot[2] - target[2]) <= arrive_m) {
                ++arrivals;
                ended = true;
            } else if ((crowd_agent->targetState == DT_CROWDAGENT_TARGET_VALID ||
                        crowd_agent->targetReplan) &&
                       crowd_agent->corridor.getLastPoly() != crowd_agent->targetRef) {
                const float* corridor_end = crowd_agent->corridor.getTarget();
                if (std::hypot(foot[0] - corridor_end[0], foot[2] - corridor_end[2]) <= arrive_m) {
                    ++partial_ends;
                    ended = true;
                }
            }
            if (ended) {
                agent.next = (agent.next + 1) % agent.target_polygons.size();
                crowd->requestMoveTarget(agent.index, agent.target_polygons[agent.next],
                                         &agent.targets[agent.next * 3]);
                progress_m[i] = 0.0f;
                without_progress_s[i] = 0.0f;
            }
        }
        overlaps.count(feet, 2.0f);
    }
    int waiting = 0, stuck = 0;
    for (size_t i = 0; i < agents.size(); ++i) {
        const unsigned char state = crowd->getAgent(agents[i].index)->targetState;
        waiting += state == DT_CROWDAGENT_TARGET_REQUESTING ||
                   state == DT_CROWDAGENT_TARGET_WAITING_FOR_QUEUE ||
                   state == DT_CROWDAGENT_TARGET_WAITING_FOR_PATH;
        stuck += without_progress_s[i] > 3.0f;
    }
    double total_ms = 0.0;
    for (double ms : update_ms) total_ms += ms;
    std::vector<double> sorted = update_ms;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    std::printf(
        "{\"level\":\"%s\",\"agents\":%zu,\"avoidance\":%d,\"frames\":%d,\"polygons\":%d,"
        "\"walkable_area_m2\":%.1f,\"coverage\":%.4f,"
        "\"update_ms_median\":%.4f,\"update_ms_mean\":%.4f,\"agents_per_ms\":%.1f,"
        "\"arrive_m\":%.3f,\"arrivals\":%ld,\"partial_arrivals\":%ld,\"waiting_for_path\":%d,"
        "\"stuck_agents\":%d,\"progress_efficiency\":%.4f,"
        "\"overlap_pairs_per_frame\":%.1f,\"overlap_depth_p50_m\":%.3f,"
        "\"overlap_depth_p99_m\":%.3f,\"max_overlap_m\":%.3f}\n",
        argv[1], agents.size(), avoidance, frames, polygon_count, walkable_m2,
        cover_m2 / walkable_m2, median, total_ms / frames, agents.size() / median, arrive_m,
        arrivals, partial_ends, waiting, stuck,
        efficiency_samples > 0 ? efficiency_sum / efficiency_samples : 0.0,
        static_cast<double>(overlaps.pairs) / frames, overlaps.depth_percentile(0.50),
        overlaps.depth_percentile(0.99), overlaps.deepest_m);
    dtFreeCrowd(crowd);
    dtFreeNavMeshQuery(query);
    dtFreeNavMesh(navmesh);
    return 0;
}
