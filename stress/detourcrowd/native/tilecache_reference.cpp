// dtTileCache's temporary obstacles on an OBJ level, timed: the anchor of waymark's
// `bake/obstacle_48` bench (benches/bake.rs).
//
//   tilecache_reference LEVEL.obj QUERIES.csv [CYCLES]
//
// Bakes LEVEL with RecastDemo's default settings in 48-cell tiles into heightfield layers
// kept by a dtTileCache (stored uncompressed: the compressor copies, so the anchor pays no
// decompression and is if anything faster than RecastDemo's FastLZ), builds the navmesh,
// then CYCLES times: adds a cylinder (radius 1 m, height 2 m) whose base is the first
// query's start, calls update until the cache is up to date, removes it and updates to
// completion again. Prints one JSON line: the median cycle and the median of each half,
// milliseconds, the tiles touched, and the layers kept.
#include <chrono>
#include <cstdio>

#include "DetourNavMesh.h"
#include "DetourNavMeshBuilder.h"
#include "DetourTileCache.h"
#include "DetourTileCacheBuilder.h"
#include "Recast.h"
#include "recast_level.h"

namespace {

const float kCell = 0.3f, kCellHeight = 0.2f;
const float kAgentHeight = 2.0f, kAgentRadius = 0.6f, kAgentClimb = 0.9f;
const int kTileCells = 48;

// Keeps layers as they are: copying is the cheapest a compressor can be.
struct CopyCompressor : public dtTileCacheCompressor {
    int maxCompressedSize(const int size) override { return size; }
    dtStatus compress(const unsigned char* in, const int size, unsigned char* out,
                      const int capacity, int* written) override {
        if (size > capacity) return DT_FAILURE;
        std::memcpy(out, in, size);
        *written = size;
        return DT_SUCCESS;
    }
    dtStatus decompress(const unsigned char* in, const int size, unsigned char* out,
                        const int capacity, int* written) override {
        if (size > capacity) return DT_FAILURE;
        std::memcpy(out, in, size);
        *written = size;
        return DT_SUCCESS;
    }
};

// Every walkable polygon walkable by the default filter (flag 1), as the other runs do.
struct FlagWalkable : public dtTileCacheMeshProcess {
    void process(dtNavMeshCreateParams* params, unsigned char* areas,
                 unsigned short* flags) override {
        for (int i = 0; i < params->polyCount; ++i) {
            if (areas[i] == DT_TILECACHE_WALKABLE_AREA) areas[i] = 0;
            flags[i] = 1;
        }
    }
};

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s LEVEL.obj QUERIES.csv [CYCLES]\n", argv[0]);
        return 2;
    }
    const int cycles = argc > 3 ? std::atoi(argv[3]) : 200;
    reference::Level level;
    if (!reference::load_obj(argv[1], level)) {
        std::fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    float base[3];
    {
        std::ifstream queries(argv[2]);
        std::string line;
        std::getline(queries, line);  // header
        std::getline(queries, line);
        if (std::sscanf(line.c_str(), "%f,%f,%f", &base[0], &base[1], &base[2]) != 3) {
            std::fprintf(stderr, "no query in %s\n", argv[2]);
            return 1;
        }
    }
    const int vertex_count = static_cast<int>(level.vertices.size() / 3);
    const int triangle_count = static_cast<int>(level.triangles.size() / 3);
    const int walkable_height = static_cast<int>(std::ceil(kAgentHeight / kCellHeight));
    const int walkable_climb = static_cast<int>(std::floor(kAgentClimb / kCellHeight));
    const int walkable_radius = static_cast<int>(std::ceil(kAgentRadius / kCell));
    const int border = walkable_radius + 3;

    float bounds_min[3], bounds_max[3];
    rcCalcBounds(level.vertices.data(), vertex_count, bounds_min, bounds_max);
    int grid_width = 0, grid_height = 0;
    rcCalcGridSize(bounds_min, bounds_max, kCell, &grid_width, &grid_height);
    const int tiles_x = (grid_width + kTileCells - 1) / kTileCells;
    const int tiles_z = (grid_height + kTileCells - 1) / kTileCells;
    const float tile_m = kTileCells * kCell;

    dtTileCacheParams cache_params;
    std::memset(&cache_params, 0, sizeof(cache_params));
    rcVcopy(cache_params.orig, bounds_min);
    cache_params.cs = kCell;
    cache_params.ch = kCellHeight;
    cache_params.width = kTileCells;
    cache_params.height = kTileCells;
    cache_params.walkableHeight = kAgentHeight;
    cache_params.walkableRadius = kAgentRadius;
    cache_params.walkableClimb = kAgentClimb;
    cache_params.maxSimplificationError = 1.3f;
    cache_params.maxTiles = tiles_x * tiles_z * 8;
    cache_params.maxObstacles = 128;
    dtTileCacheAlloc allocator;
    CopyCompressor compressor;
    FlagWalkable process;
    dtTileCache* cache = dtAllocTileCache();
    if (dtStatusFailed(cache->init(&cache_params, &allocator, &compressor, &process))) {
        std::fprintf(stderr, "dtTileCache::init failed\n");
        return 1;
    }

    dtNavMeshParams mesh_params;
    std::memset(&mesh_params, 0, sizeof(mesh_params));
    rcVcopy(mesh_params.orig, bounds_min);
    mesh_params.tileWidth = tile_m;
    mesh_params.tileHeight = tile_m;
    // Tile and polygon bits share a 32-bit reference's 22 (RecastDemo's split).
    int tile_bits = 0;
    while ((1 << tile_bits) < tiles_x * tiles_z * 8) ++tile_bits;
    tile_bits = std::min(tile_bits, 14);
    mesh_params.maxTiles = 1 << tile_bits;
    mesh_params.maxPolys = 1 << (22 - tile_bits);
    dtNavMesh* navmesh = dtAllocNavMesh();
    if (dtStatusFailed(navmesh->init(&mesh_params))) {
        std::fprintf(stderr, "dtNavMesh::init failed\n");
        return 1;
    }

    rcContext context(false);
    std::vector<unsigned char> areas(triangle_count, 0);
    rcMarkWalkableTriangles(&context, 45.0f, level.vertices.data(), vertex_count,
                            level.triangles.data(), triangle_count, areas.data());
    int layers_kept = 0;
    for (int tz = 0; tz < tiles_z; ++tz) {
        for (int tx = 0; tx < tiles_x; ++tx) {
            // The tile's grid, grown by the border, as RecastDemo's layered sample cuts it.
            float tile_min[3] = {bounds_min[0] + tx * tile_m - border * kCell, bounds_min[1],
                                 bounds_min[2] + tz * tile_m - border * kCell};
            float tile_max[3] = {bounds_min[0] + (tx + 1) * tile_m + border * kCell,
                                 bounds_max[1],
                                 bounds_min[2] + (tz + 1) * tile_m + border * kCell};
            const int side = kTileCells + 2 * border;
            rcHeightfield* solid = rcAllocHeightfield();
            rcCreateHeightfield(&context, *solid, side, side, tile_min, tile_max, kCell,
                                kCellHeight);
            rcRasterizeTriangles(&context, level.vertices.data(), vertex_count,
                                 level.triangles.data(), areas.data(), triangle_count, *solid,
                                 walkable_climb);
            rcFilterLowHangingWalkableObstacles(&context, walkable_climb, *solid);
            rcFilterLedgeSpans(&context, walkable_height, walkable_climb, *solid);
            rcFilterWalkableLowHeightSpans(&context, walkable_height, *solid);
            rcCompactHeightfield* compact = rcAllocCompactHeightfield();
            rcBuildCompactHeightfield(&context, walkable_height, walkable_climb, *solid,
                                      *compact);
            rcFreeHeightField(solid);
            rcErodeWalkableArea(&context, walkable_radius, *compact);
            rcHeightfieldLayerSet layers;
            rcBuildHeightfieldLayers(&context, *compact, border, walkable_height, layers);
            rcFreeCompactHeightfield(compact);
            for (int i = 0; i < layers.nlayers; ++i) {
                const rcHeightfieldLayer& layer = layers.layers[i];
                dtTileCacheLayerHeader header;
                header.magic = DT_TILECACHE_MAGIC;
                header.version = DT_TILECACHE_VERSION;
                header.tx = tx;
                header.ty = tz;
                header.tlayer = i;
                rcVcopy(header.bmin, layer.bmin);
                rcVcopy(header.bmax, layer.bmax);
                header.width = static_cast<unsigned char>(layer.width);
                header.height = static_cast<unsigned char>(layer.height);
                header.minx = static_cast<unsigned char>(layer.minx);
                header.maxx = static_cast<unsigned char>(layer.maxx);
                header.miny = static_cast<unsigned char>(layer.miny);
                header.maxy = static_cast<unsigned char>(layer.maxy);
                header.hmin = static_cast<unsigned short>(layer.hmin);
                header.hmax = static_cast<unsigned short>(layer.hmax);
                unsigned char* data = nullptr;
                int size = 0;
                if (dtStatusFailed(dtBuildTileCacheLayer(&compressor, &header, layer.heights,
                                                         layer.areas, layer.cons, &data,
                                                         &size))) {
                    std::fprintf(stderr, "dtBuildTileCacheLayer failed at tile %d, %d\n", tx, tz);
                    return 1;
                }
                cache->addTile(data, size, DT_COMPRESSEDTILE_FREE_DATA, nullptr);
                ++layers_kept;
            }
        }
    }
    for (int tz = 0; tz < tiles_z; ++tz) {
        for (int tx = 0; tx < tiles_x; ++tx) cache->buildNavMeshTilesAt(tx, tz, navmesh);
    }

    using Clock = std::chrono::steady_clock;
    auto settle = [&]() {
        bool done = false;
        while (!done) cache->update(0.0f, navmesh, &done);
    };
    std::vector<double> add_ms, remove_ms, cycle_ms;
    int touched = 0;
    for (int cycle = 0; cycle < cycles; ++cycle) {
        const auto start = Clock::now();
        dtObstacleRef obstacle = 0;
        if (dtStatusFailed(cache->addObstacle(base, 1.0f, 2.0f, &obstacle))) {
            std::fprintf(stderr, "dtTileCache::addObstacle failed\n");
            return 1;
        }
        settle();
        const auto added = Clock::now();
        if (cycle == 0) touched = cache->getObstacleByRef(obstacle)->ntouched;
        cache->removeObstacle(obstacle);
        settle();
        const auto removed = Clock::now();
        add_ms.push_back(std::chrono::duration<double, std::milli>(added - start).count());
        remove_ms.push_back(std::chrono::duration<double, std::milli>(removed - added).count());
        cycle_ms.push_back(std::chrono::duration<double, std::milli>(removed - start).count());
    }
    std::printf(
        "{\"level\":\"%s\",\"base\":[%g,%g,%g],\"cycles\":%d,\"cycle_ms\":%.4f,"
        "\"add_and_update_ms\":%.4f,\"remove_and_update_ms\":%.4f,\"tiles_touched\":%d,"
        "\"layers\":%d}\n",
        argv[1], base[0], base[1], base[2], cycles, median(cycle_ms), median(add_ms),
        median(remove_ms), touched, layers_kept);
    dtFreeTileCache(cache);
    dtFreeNavMesh(navmesh);
    return 0;
}
