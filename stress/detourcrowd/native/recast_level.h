// A level read from an OBJ file and baked the way RecastDemo's solo sample bakes it with
// its default settings: what both native reference runs (crowd_reference.cpp,
// query_reference.cpp) measure Detour on, so they bake the levels README's navmesh.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "DetourNavMesh.h"
#include "DetourNavMeshBuilder.h"
#include "Recast.h"

namespace reference {

struct Level {
    std::vector<float> vertices;
    std::vector<int> triangles;
    // Per triangle: whether its object or group carries waymark's `area:unwalkable` tag
    // (`o name|area:unwalkable`, as `waymark export` writes a generated level's solids).
    std::vector<unsigned char> unwalkable;
};

// Vertices and faces (fanned into triangles), and the `area:unwalkable` tag of `o` and `g`
// names; everything else in the file is ignored.
inline bool load_obj(const char* path, Level& level) {
    std::ifstream file(path);
    if (!file) return false;
    std::string line;
    bool tagged_unwalkable = false;
    while (std::getline(file, line)) {
        std::istringstream words(line);
        std::string kind;
        words >> kind;
        if (kind == "v") {
            float x, y, z;
            words >> x >> y >> z;
            level.vertices.insert(level.vertices.end(), {x, y, z});
        } else if (kind == "o" || kind == "g") {
            std::string name;
            std::getline(words, name);
            tagged_unwalkable = name.find("area:unwalkable") != std::string::npos;
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
                level.unwalkable.push_back(tagged_unwalkable ? 1 : 0);
            }
        }
    }
    return !level.triangles.empty();
}

// Milliseconds of each stage of one bake, named as waymark's `stage_ms` (its bake
// stages); `navmesh` is Detour's tile data and navmesh (dtCreateNavMeshData, init), which
// waymark's bake does not build.
struct BakeStageMs {
    double rasterize = 0, filter = 0, compact = 0, erode = 0, distance_field = 0,
           regions = 0, contours = 0, polygon_mesh = 0, detail = 0, navmesh = 0;
};

// Adds the time since the last lap to `into` and starts the next lap.
struct StageClock {
    std::chrono::steady_clock::time_point lap = std::chrono::steady_clock::now();
    void stop(double& into) {
        const auto now = std::chrono::steady_clock::now();
        into += std::chrono::duration<double, std::milli>(now - lap).count();
        lap = now;
    }
};

// RecastDemo's solo bake with its default settings; returns the Detour navmesh. With
// `stages`, each stage's time is added to it (marking walkable triangles counts as
// rasterizing, as in waymark, whose rasterizer tests the slope).
inline dtNavMesh* bake(const Level& level, int& polygon_count, BakeStageMs* stages = nullptr) {
    BakeStageMs ignored;
    BakeStageMs& ms = stages ? *stages : ignored;
    const float cell = 0.3f, cell_height = 0.2f;
    const float agent_height = 2.0f, agent_radius = 0.6f, agent_climb = 0.9f;
    const int walkable_height = static_cast<int>(std::ceil(agent_height / cell_height));
    const int walkable_climb = static_cast<int>(std::floor(agent_climb / cell_height));
    const int walkable_radius = static_cast<int>(std::ceil(agent_radius / cell));
    const int vertex_count = static_cast<int>(level.vertices.size() / 3);
    const int triangle_count = static_cast<int>(level.triangles.size() / 3);

    rcContext context(false);
    StageClock clock;
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
    for (int i = 0; i < triangle_count; ++i) {
        if (level.unwalkable[i]) areas[i] = RC_NULL_AREA;
    }
    if (!rcRasterizeTriangles(&context, level.vertices.data(), vertex_count,
                              level.triangles.data(), areas.data(), triangle_count, *solid,
                              walkable_climb)) {
        return nullptr;
    }
    clock.stop(ms.rasterize);
    rcFilterLowHangingWalkableObstacles(&context, walkable_climb, *solid);
    rcFilterLedgeSpans(&context, walkable_height, walkable_climb, *solid);
    rcFilterWalkableLowHeightSpans(&context, walkable_height, *solid);
    clock.stop(ms.filter);

    rcCompactHeightfield* compact = rcAllocCompactHeightfield();
    if (!rcBuildCompactHeightfield(&context, walkable_height, walkable_climb, *solid,
                                   *compact)) {
        return nullptr;
    }
    rcFreeHeightField(solid);
    clock.stop(ms.compact);
    if (!rcErodeWalkableArea(&context, walkable_radius, *compact)) return nullptr;
    clock.stop(ms.erode);
    if (!rcBuildDistanceField(&context, *compact)) return nullptr;
    clock.stop(ms.distance_field);
    if (!rcBuildRegions(&context, *compact, 0, 8 * 8, 20 * 20)) return nullptr;
    clock.stop(ms.regions);

    rcContourSet* contours = rcAllocContourSet();
    const int edge_max_cells = static_cast<int>(12.0f / cell);
    if (!rcBuildContours(&context, *compact, 1.3f, edge_max_cells, *contours)) {
        return nullptr;
    }
    clock.stop(ms.contours);
    rcPolyMesh* polygons = rcAllocPolyMesh();
    if (!rcBuildPolyMesh(&context, *contours, 6, *polygons)) return nullptr;
    clock.stop(ms.polygon_mesh);
    rcPolyMeshDetail* detail = rcAllocPolyMeshDetail();
    if (!rcBuildPolyMeshDetail(&context, *polygons, *compact, 6.0f * cell, 1.0f * cell_height,
                               *detail)) {
        return nullptr;
    }
    rcFreeCompactHeightfield(compact);
    rcFreeContourSet(contours);
    clock.stop(ms.detail);

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
    clock.stop(ms.navmesh);
    return navmesh;
}

// The walkable area of a baked navmesh: its ground polygons' areas projected on the
// horizontal plane, m² (waymark's `walkable_area_m2`; off-mesh connections have none).
inline double walkable_area_m2(const dtNavMesh* navmesh) {
    double area = 0.0;
    for (int t = 0; t < navmesh->getMaxTiles(); ++t) {
        const dtMeshTile* tile = navmesh->getTile(t);
        if (!tile || !tile->header) continue;
        for (int p = 0; p < tile->header->polyCount; ++p) {
            const dtPoly& poly = tile->polys[p];
            if (poly.getType() != DT_POLYTYPE_GROUND) continue;
            double twice = 0.0;
            for (int k = 0; k < poly.vertCount; ++k) {
                const float* a = &tile->verts[poly.verts[k] * 3];
                const float* b = &tile->verts[poly.verts[(k + 1) % poly.vertCount] * 3];
                twice += static_cast<double>(a[0]) * b[2] - static_cast<double>(b[0]) * a[2];
            }
            area += std::fabs(twice) * 0.5;
        }
    }
    return area;
}

// Overlapping bodies by waymark's measure (`measure_quality`): a pair whose feet are
// closer, horizontally, than the sum of the radii by more than 1 mm, with heights within
// the vertical range. Counted each frame over a grid of cells one radius sum wide; the
// depth (radius sum less distance) of every overlapping pair goes into 1 mm bins, so its
// percentiles are exact to the millimetre.
struct OverlapCounter {
    explicit OverlapCounter(float radius_sum) : radius_sum(radius_sum), bins(4001, 0) {}

    // `feet`: x, y, z per agent.
    void count(const std::vector<float>& feet, float vertical_range) {
        const size_t n = feet.size() / 3;
        cells.resize(n);
        for (size_t i = 0; i < n; ++i) {
            cells[i] = {key(cell_of(feet[i * 3]), cell_of(feet[i * 3 + 2])), static_cast<int>(i)};
        }
        std::sort(cells.begin(), cells.end());
        for (size_t i = 0; i < n; ++i) {
            const int cx = cell_of(feet[i * 3]), cz = cell_of(feet[i * 3 + 2]);
            for (int dx = -1; dx <= 1; ++dx) {
                for (int dz = -1; dz <= 1; ++dz) {
                    const int64_t wanted = key(cx + dx, cz + dz);
                    auto it = std::lower_bound(cells.begin(), cells.end(),
                                               std::make_pair(wanted, 0));
                    for (; it != cells.end() && it->first == wanted; ++it) {
                        const size_t j = static_cast<size_t>(it->second);
                        if (j <= i) continue;
                        if (std::fabs(feet[i * 3 + 1] - feet[j * 3 + 1]) >= vertical_range) continue;
                        const float distance = std::hypot(feet[i * 3] - feet[j * 3],
                                                          feet[i * 3 + 2] - feet[j * 3 + 2]);
                        const float depth = radius_sum - distance;
                        if (depth > 1e-3f) {
                            ++pairs;
                            deepest_m = std::max(deepest_m, depth);
                            ++bins[std::min<size_t>(static_cast<size_t>(depth * 1000.0f),
                                                    bins.size() - 1)];
                        }
                    }
                }
            }
        }
    }

    // The depth below which `share` of the overlapping pairs counted lie, metres.
    double depth_percentile(double share) const {
        if (pairs == 0) return 0.0;
        const double wanted = share * static_cast<double>(pairs);
        long seen = 0;
        for (size_t bin = 0; bin < bins.size(); ++bin) {
            seen += bins[bin];
            if (static_cast<double>(seen) >= wanted) return (bin + 1) * 1e-3;
        }
        return bins.size() * 1e-3;
    }

    float radius_sum;
    long pairs = 0;
    float deepest_m = 0.0f;
    std::vector<long> bins;

  private:
    int cell_of(float coordinate) const {
        return static_cast<int>(std::floor(coordinate / radius_sum));
    }
    static int64_t key(int x, int z) {
        return (static_cast<int64_t>(x) << 32) ^ static_cast<int64_t>(static_cast<uint32_t>(z));
    }
    std::vector<std::pair<int64_t, int>> cells;
};

}  // namespace reference
