// A level read from an OBJ file and baked the way RecastDemo's solo sample bakes it with
// its default settings: what both native reference runs (crowd_reference.cpp,
// query_reference.cpp) measure Detour on, so they bake the levels README's navmesh.
#pragma once

#include <cmath>
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
};

// Vertices and faces (fanned into triangles); everything else in the file is ignored.
inline bool load_obj(const char* path, Level& level) {
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
inline dtNavMesh* bake(const Level& level, int& polygon_count) {
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

}  // namespace reference
