// DetourCrowd on a shared crowd, for comparison with `waymark crowd`: the quality figures
// waymark's CLI reports (overlapping pairs per frame, deepest overlap) and the time per
// `dtCrowd::update`. DetourCrowd here is the recast-navigation npm package's WebAssembly
// build of Recast, Detour and DetourCrowd, not the levels README's native build: compare
// its times with care.
//
//   cd stress/detourcrowd && npm install
//   node overlaps.mjs LEVEL.obj AGENTS.csv [N=1000] [AVOIDANCE=3]
//
// The setup is the levels README's: the default bake (RecastDemo's settings), agents with
// radius 0.6, height 2, max acceleration 8, max speed 3.5, collision query range 12 r, path
// optimisation range 30 r, separation weight 2, all update flags, RecastDemo's four
// avoidance settings (3: high quality), dt 1/30, 300 frames, each agent taking its next
// target on arriving within 0.25 m. A pair overlaps when its feet are closer than the sum
// of the radii by more than 1 mm and differ in height by less than 2 m (waymark's
// `measure_quality`).
import fs from 'node:fs';
import { init, Crowd, NavMeshQuery } from '@recast-navigation/core';
import { generateSoloNavMesh } from '@recast-navigation/generators';

const [objPath, csvPath, countArg, avoidanceArg] = process.argv.slice(2);
if (!objPath || !csvPath) {
  console.error('usage: node overlaps.mjs LEVEL.obj AGENTS.csv [N] [AVOIDANCE]');
  process.exit(2);
}
const count = Number(countArg ?? 1000);
const avoidanceType = Number(avoidanceArg ?? 3);
const radius = 0.6;
const frames = 300;
const dt = 1 / 30;
const arriveM = 0.25;
await init();

const positions = [];
const indices = [];
for (const line of fs.readFileSync(objPath, 'utf8').split('\n')) {
  const words = line.trim().split(/\s+/);
  if (words[0] === 'v') positions.push(+words[1], +words[2], +words[3]);
  if (words[0] === 'f') {
    const corners = words.slice(1).map((word) => parseInt(word.split('/')[0], 10) - 1);
    for (let i = 1; i + 1 < corners.length; i++) indices.push(corners[0], corners[i], corners[i + 1]);
  }
}
// RecastDemo's defaults in Recast's cell units: cell 0.3, cell height 0.2, agent height
// 2 (10 cells), climb 0.9 (4), radius 0.6 (2), edge length 12 m (40 cells).
const { success, navMesh } = generateSoloNavMesh(positions, indices, {
  cs: 0.3, ch: 0.2, walkableSlopeAngle: 45, walkableHeight: 10, walkableClimb: 4,
  walkableRadius: 2, maxEdgeLen: 40, maxSimplificationError: 1.3, minRegionArea: 8,
  mergeRegionArea: 20, maxVertsPerPoly: 6, detailSampleDist: 6, detailSampleMaxError: 1,
});
if (!success) throw new Error(`${objPath}: the bake failed`);
const query = new NavMeshQuery(navMesh);
const crowd = new Crowd(navMesh, { maxAgents: count, maxAgentRadius: radius });
[[5, 2, 1], [5, 2, 2], [7, 2, 3], [7, 3, 3]].forEach(([divs, rings, depth], index) => {
  const params = crowd.raw.getObstacleAvoidanceParams(index);
  params.velBias = 0.5;
  params.adaptiveDivs = divs;
  params.adaptiveRings = rings;
  params.adaptiveDepth = depth;
  crowd.raw.setObstacleAvoidanceParams(index, params);
});

const snap = (x, y, z) =>
  query.findClosestPoint({ x, y, z }, { halfExtents: { x: 2, y: 4, z: 2 } }).point;
const rows = fs.readFileSync(csvPath, 'utf8').trim().split('\n').slice(1, count + 1)
  .map((row) => row.split(',').map(Number));
const agents = rows.map((row) => {
  const agent = crowd.addAgent(snap(row[1], row[2], row[3]), {
    radius, height: 2, maxAcceleration: 8, maxSpeed: 3.5, collisionQueryRange: 12 * radius,
    pathOptimizationRange: 30 * radius, separationWeight: 2, updateFlags: 1 | 2 | 4 | 8 | 16,
    obstacleAvoidanceType: avoidanceType,
  });
  const targets = [];
  for (let k = 0; k < 16; k++) targets.push(snap(row[4 + 3 * k], row[5 + 3 * k], row[6 + 3 * k]));
  agent.requestMoveTarget(targets[0]);
  return { agent, targets, next: 0 };
});

const x = new Float64Array(count);
const y = new Float64Array(count);
const z = new Float64Array(count);
const updateMs = [];
let overlapPairs = 0;
let deepest = 0;
let arrivals = 0;
for (let frame = 0; frame < frames; frame++) {
  const start = process.hrtime.bigint();
  crowd.update(dt);
  updateMs.push(Number(process.hrtime.bigint() - start) / 1e6);
  agents.forEach((entry, i) => {
    const foot = entry.agent.position();
    [x[i], y[i], z[i]] = [foot.x, foot.y, foot.z];
    const target = entry.targets[entry.next];
    if (Math.hypot(foot.x - target.x, foot.z - target.z) <= arriveM) {
      arrivals++;
      entry.next = (entry.next + 1) % entry.targets.length;
      entry.agent.requestMoveTarget(entry.targets[entry.next]);
    }
  });
  for (let i = 0; i < count; i++) {
    for (let j = i + 1; j < count; j++) {
      if (Math.abs(y[i] - y[j]) >= 2) continue;
      const overlap = 2 * radius - Math.hypot(x[i] - x[j], z[i] - z[j]);
      if (overlap > 1e-3) {
        overlapPairs++;
        deepest = Math.max(deepest, overlap);
      }
    }
  }
}
updateMs.sort((a, b) => a - b);
const median = updateMs[frames >> 1];
console.log(JSON.stringify({
  level: objPath, agents: count, avoidance: avoidanceType, frames,
  overlap_pairs_per_frame: overlapPairs / frames, max_overlap_m: deepest,
  arrivals, update_ms_median: median, agents_per_ms: count / median,
}));
