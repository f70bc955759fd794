// DetourCrowd, built natively (-O2), on a shared crowd: the same measurement as the levels
// README's DetourCrowd table, so waymark and DetourCrowd can be timed on the same machine in
// the same minutes (this VM's speed drifts 1.3-1.5x between minutes; a ratio of two runs
// taken back to back holds where an absolute figure from another day does not).
//
//   stress/detourcrowd/native/build.sh          (compiles this file with Recast's sources)
//   target/detourcrowd/crowd_reference LEVEL.obj AGENTS.csv [N=1000] [AVOIDANCE=3] [FRAMES=300]
//
// The setup is the README's: RecastDemo's default solo bake (cell 0.3, cell height 0.2,
// agent height 2, radius 0.6, climb 0.9, slope 45, region min size 8, merge size 20, edge
// length 12, edge error 1.3, 6 verts per polygon, detail sample distance 6, detail error 1,
// watershed regions), agents with radius 0.6, height 2, max acceleration 8, max speed 3.5,
// collision query range 12 r, path optimisation range 30 r, separation weight 2, all update
// flags, RecastDemo's four avoidance settings, dt 1/30, each agent taking its next target
// on arriving within 0.25 m (horizontally). Starts and targets are snapped to the navmesh
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

namespace {

struct Level {
    std::vector<float> vertices;
    std::vector<int> triangles;
};

// Vertices and faces (fanned into triangles); everything else in the file is ignored.
bool load_obj(const char* path, Level& level) {
    std::ifstream file(path);
    if (!file) return false;
    std::string line;
    while (std::getline(file, line)) {
        std::istringstream words(line);
        std::string kind;
        words >> kind;
        if (kind == "v") {
            float x, y, z;
            words >> x >> y >> z;
            level.vertices.insert(level.vertices.end(), {x, y, z});
        } else if (kind == "f") {
            std::vector<int> corners;
            std::string word;
            const int count = static_cast<int>(level.vertices.size() / 3);
            while (words >> word) {
                int index = std::atoi(word.substr(0, word.find('/')).c_str());
                corners.push_back(index < 0 ? count + index : index - 1);
            }
            for (size_t i = 1; i + 1 < corners.size(); ++i) {
                level.triangles.insert(level.triangles.end(),
                                       {corners[0], corners[i], corners[i + 1]});
            }
        }
    }
    return !level.triangles.empty();
}

// RecastDemo's solo bake with its default settings; returns the Detour navmesh.
dtNavMesh* bake(const Level& level, int& polygon_count) {
    const float cell = 0.3f, cell_height = 0.2f;
    const float agent_height = 2.0f, agent_radius = 0.6f, agent_climb = 0.9f;
    const int walkable_height = static_cast<int>(std::ceil(agent_height / cell_height));
    const int walkable_climb = static_cast<int>(std::floor(agent_climb / cell_height));
    const int walkable_radius = static_cast<int>(std::ceil(agent_radius / cell));
    const int vertex_count = static_cast<int>(level.vertices.size() / 3);
    const int triangle_count = static_cast<int>(level.triangles.size() / 3);

    rcContext context(false);
    float bounds_min[3], bounds_max[3];
    rcCalcBounds(level.vertices.data(), vertex_count, bounds_min, bounds_max);
    int width = 0, height = 0;
    rcCalcGridSize(bounds_min, bounds_max, cell, &width, &height);

    rcHeightfield* solid = rcAllocHeightfield();
    if (!rcCreateHeightfield(&context, *solid, width, height, bounds_min, bounds_max, cell,
                             cell_height)) {
        return nullptr;
    }
    std::vector<unsigned char> areas(triangle_count, 0);
    rcMarkWalkableTriangles(&context, 45.0f, level.vertices.data(), vertex_count,
                            level.triangles.data(), triangle_count, areas.data());
    if (!rcRasterizeTriangles(&context, level.vertices.data(), vertex_count,
                              level.triangles.data(), areas.data(), triangle_count, *solid,
                              walkable_climb)) {
        return nullptr;
    }
    rcFilterLowHangingWalkableObstacles(&context, walkable_climb, *solid);
    rcFilterLedgeSpans(&context, walkable_height, walkable_climb, *solid);
    rcFilterWalkableLowHeightSpans(&context, walkable_height, *solid);

    rcCompactHeightfield* compact = rcAllocCompactHeightfield();
    if (!rcBuildCompactHeightfield(&context, walkable_height, walkable_climb, *solid,
                                   *compact)) {
        return nullptr;
    }
    rcFreeHeightField(solid);
    if (!rcErodeWalkableArea(&context, walkable_radius, *compact)) return nullptr;
    if (!rcBuildDistanceField(&context, *compact)) return nullptr;
    if (!rcBuildRegions(&context, *compact, 0, 8 * 8, 20 * 20)) return nullptr;

    rcContourSet* contours = rcAllocContourSet();
    const int edge_max_cells = static_cast<int>(12.0f / cell);
    if (!rcBuildContours(&context, *compact, 1.3f, edge_max_cells, *contours)) {
        return nullptr;
    }
    rcPolyMesh* polygons = rcAllocPolyMesh();
    if (!rcBuildPolyMesh(&context, *contours, 6, *polygons)) return nullptr;
    rcPolyMeshDetail* detail = rcAllocPolyMeshDetail();
    if (!rcBuildPolyMeshDetail(&context, *polygons, *compact, 6.0f * cell, 1.0f * cell_height,
                               *detail)) {
        return nullptr;
    }
    rcFreeCompactHeightfield(compact);
    rcFreeContourSet(contours);

    // Every walkable polygon gets flag 1, so the default query filter accepts it.
    for (int i = 0; i < polygons->npolys; ++i) {
        polygons->flags[i] = polygons->areas[i] == RC_WALKABLE_AREA ? 1 : 0;
        if (polygons->areas[i] == RC_WALKABLE_AREA) polygons->areas[i] = 0;
    }
    polygon_count = polygons->npolys;

    dtNavMeshCreateParams params;
    std::memset(&params, 0, sizeof(params));
    params.verts = polygons->verts;
    params.vertCount = polygons->nverts;
    params.polys = polygons->polys;
    params.polyAreas = polygons->areas;
    params.polyFlags = polygons->flags;
    params.polyCount = polygons->npolys;
    params.nvp = polygons->nvp;
    params.detailMeshes = detail->meshes;
    params.detailVerts = detail->verts;
    params.detailVertsCount = detail->nverts;
    params.detailTris = detail->tris;
    params.detailTriCount = detail->ntris;
    params.walkableHeight = agent_height;
    params.walkableRadius = agent_radius;
    params.walkableClimb = agent_climb;
    rcVcopy(params.bmin, polygons->bmin);
    rcVcopy(params.bmax, polygons->bmax);
    params.cs = cell;
    params.ch = cell_height;
    params.buildBvTree = true;
    unsigned char* data = nullptr;
    int data_size = 0;
    if (!dtCreateNavMeshData(&params, &data, &data_size)) return nullptr;
    rcFreePolyMesh(polygons);
    rcFreePolyMeshDetail(detail);

    dtNavMesh* navmesh = dtAllocNavMesh();
    if (dtStatusFailed(navmesh->init(data, data_size, DT_TILE_FREE_DATA))) return nullptr;
    return navmesh;
}

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
                     "[FRAMES=300]\n");
        return 2;
    }
    const int count = argc > 3 ? std::atoi(argv[3]) : 1000;
    const int avoidance = argc > 4 ? std::atoi(argv[4]) : 3;
    const int frames = argc > 5 ? std::atoi(argv[5]) : 300;
    const float radius = 0.6f, dt = 1.0f / 30.0f, arrive_m = 0.25f;
    if (count <= 0 || avoidance < 0 || avoidance > 3 || frames <= 0) {
        std::fprintf(stderr, "bad N %d, AVOIDANCE %d or FRAMES %d\n", count, avoidance,
                     frames);
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

    std::vector<double> update_ms;
    long overlap_pairs = 0, arrivals = 0;
    std::vector<float> feet(agents.size() * 3);
    for (int frame = 0; frame < frames; ++frame) {
        const auto start = std::chrono::steady_clock::now();
        crowd->update(dt, nullptr);
        const auto end = std::chrono::steady_clock::now();
        update_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
        for (size_t i = 0; i < agents.size(); ++i) {
            Agent& agent = agents[i];
            const float* foot = crowd->getAgent(agent.index)->npos;
            std::copy(foot, foot + 3, &feet[i * 3]);
            const float* target = &agent.targets[agent.next * 3];
            if (std::hypot(foot[0] - target[0], foot[2] - target[2]) <= arrive_m) {
                ++arrivals;
                agent.next = (agent.next + 1) % agent.target_polygons.size();
                crowd->requestMoveTarget(agent.index, agent.target_polygons[agent.next],
                                         &agent.targets[agent.next * 3]);
            }
        }
        for (size_t i = 0; i < agents.size(); ++i) {
            for (size_t j = i + 1; j < agents.size(); ++j) {
                if (std::fabs(feet[i * 3 + 1] - feet[j * 3 + 1]) >= 2.0f) continue;
                const float distance =
                    std::hypot(feet[i * 3] - feet[j * 3], feet[i * 3 + 2] - feet[j * 3 + 2]);
                if (2.0f * radius - distance > 1e-3f) ++overlap_pairs;
            }
        }
    }
    int waiting = 0;
    for (const Agent& agent : agents) {
        const unsigned char state = crowd->getAgent(agent.index)->targetState;
        waiting += state == DT_CROWDAGENT_TARGET_REQUESTING ||
                   state == DT_CROWDAGENT_TARGET_WAITING_FOR_QUEUE ||
                   state == DT_CROWDAGENT_TARGET_WAITING_FOR_PATH;
    }
    double total_ms = 0.0;
    for (double ms : update_ms) total_ms += ms;
    std::vector<double> sorted = update_ms;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    std::printf(
        "{\"level\":\"%s\",\"agents\":%zu,\"avoidance\":%d,\"frames\":%d,\"polygons\":%d,"
        "\"update_ms_median\":%.4f,\"update_ms_mean\":%.4f,\"agents_per_ms\":%.1f,"
        "\"arrivals\":%ld,\"waiting_for_path\":%d,\"overlap_pairs_per_frame\":%.1f}\n",
        argv[1], agents.size(), avoidance, frames, polygon_count, median,
        total_ms / frames, agents.size() / median, arrivals, waiting,
        static_cast<double>(overlap_pairs) / frames);
    dtFreeCrowd(crowd);
    dtFreeNavMeshQuery(query);
    dtFreeNavMesh(navmesh);
    return 0;
}
