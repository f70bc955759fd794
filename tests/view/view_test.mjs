// `waymark view` in a real browser: the system's headless Chromium driven by
// playwright-core. Run by run.sh, which writes the pages this reads:
//
//   node view_test.mjs SMALL.html LARGE.html OUT_DIR
//
// SMALL is a 200-agent replay: the page loads with no console error; after two seconds of
// playback a screenshot shows the navigation mesh and moving agents, and the agents' pixels
// change by the next screenshot; a click on an agent selects it. LARGE is a 10,000-agent
// replay: its playback holds at least 30 frames per second by the page's own counter.
// Screenshots go to OUT_DIR. Exits non-zero on the first failed check.

import { chromium } from "playwright-core";
import path from "node:path";
import fs from "node:fs";

const [smallPage, largePage, outDir] = process.argv.slice(2);
if (!smallPage || !largePage || !outDir) {
  console.error("usage: node view_test.mjs SMALL.html LARGE.html OUT_DIR");
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });

// The colours the page gives a moving agent and the ground area (viewer.html).
const MOVING = [0x1f, 0x77, 0xb4];
const GROUND_AREAS = [[0x74, 0xc4, 0x76], [0x9e, 0xca, 0xe1], [0x6b, 0xae, 0xd6]];

let failures = 0;
function check(condition, what) {
  console.log(`${condition ? "ok  " : "FAIL"} ${what}`);
  if (!condition) failures++;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

/** Opens a page, recording console errors, uncaught exceptions and any network request. */
async function open(file) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  const requests = [];
  page.on("console", (message) => { if (message.type() === "error") errors.push(message.text()); });
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("request", (request) => {
    if (!request.url().startsWith("file:") && !request.url().startsWith("data:")) requests.push(request.url());
  });
  await page.goto("file://" + path.resolve(file));
  await page.waitForFunction(() => window.waymarkView && window.waymarkView.drawnFrames > 2,
                             null, { timeout: 60000 });
  return { page, errors, requests };
}

/** Decodes a PNG screenshot in the browser; per pixel class counts and the agent mask. */
async function pixels(page, png) {
  return page.evaluate(async ({ data, moving, ground }) => {
    const image = new Image();
    image.src = "data:image/png;base64," + data;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = image.width; canvas.height = image.height;
    const context = canvas.getContext("2d");
    context.drawImage(image, 0, 0);
    const rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
    const near = (i, [r, g, b]) => Math.abs(rgba[i] - r) + Math.abs(rgba[i + 1] - g) + Math.abs(rgba[i + 2] - b) < 12;
    const agentPixels = [];
    let groundPixels = 0;
    for (let i = 0, p = 0; i < rgba.length; i += 4, p++) {
      if (near(i, moving)) agentPixels.push(p);
      else if (ground.some((colour) => near(i, colour))) groundPixels++;
    }
    return { width: canvas.width, agentPixels, groundPixels };
  }, { data: png.toString("base64"), moving: MOVING, ground: GROUND_AREAS });
}

// ---- the 200-agent replay ----------------------------------------------------------------

{
  const { page, errors, requests } = await open(smallPage);
  const loaded = await page.evaluate(() => window.waymarkView);
  check(loaded.frames > 0 && loaded.polygons > 0,
        `the page holds ${loaded.frames} frames over ${loaded.polygons} polygons`);
  await page.click("#play");
  await page.waitForTimeout(2000);
  const first = await page.screenshot({ path: path.join(outDir, "after-2s.png") });
  const state = await page.evaluate(() => window.waymarkView);
  check(state.playing && state.frame > 1, `after two seconds it plays, at frame ${state.frame}`);
  await page.waitForTimeout(500);
  const second = await page.screenshot({ path: path.join(outDir, "after-2.5s.png") });
  const a = await pixels(page, first), b = await pixels(page, second);
  check(a.groundPixels > 5000, `the navigation mesh is drawn (${a.groundPixels} ground pixels)`);
  check(a.agentPixels.length > 100 && b.agentPixels.length > 100,
        `moving agents are drawn (${a.agentPixels.length} and ${b.agentPixels.length} pixels)`);
  const before = new Set(a.agentPixels);
  const changed = b.agentPixels.filter((p) => !before.has(p)).length;
  check(changed > 50, `the agents moved between the screenshots (${changed} agent pixels new)`);

  // A click on an agent: pause, find a moving agent's pixel in a fresh screenshot, click it.
  await page.click("#play");
  await page.waitForTimeout(100);
  const paused = await pixels(page, await page.screenshot());
  // A pixel whose right and lower neighbours are agent pixels too: inside a disc.
  const mask = new Set(paused.agentPixels);
  const inside = paused.agentPixels.find((p) => mask.has(p + 1) && mask.has(p + paused.width) && mask.has(p - 1));
  check(inside !== undefined, "a moving agent is on screen to click");
  if (inside !== undefined) {
    await page.mouse.click(inside % paused.width, Math.floor(inside / paused.width));
    await page.waitForTimeout(200);
    const selected = await page.evaluate(() => window.waymarkView.selected);
    const info = await page.textContent("#info");
    check(selected !== null && /status/.test(info) && /velocity/.test(info),
          `the click selected agent ${selected}: "${info.slice(0, 80)}..."`);
    await page.screenshot({ path: path.join(outDir, "selected.png") });
  }
  check(errors.length === 0, `no console error (${errors.join("; ") || "none"})`);
  check(requests.length === 0, `no network request (${requests.join(", ") || "none"})`);
  await page.close();
}

// ---- the 10,000-agent replay: frame rate ---------------------------------------------------

{
  const { page, errors } = await open(largePage);
  const loaded = await page.evaluate(() => window.waymarkView);
  await page.click("#play");
  // The page's own counter: frames drawn in each whole second; the lowest of three.
  const rates = [];
  for (let second = 0; second < 3; second++) {
    await page.waitForTimeout(1050);
    rates.push(await page.evaluate(() => window.waymarkView.fps));
  }
  const state = await page.evaluate(() => window.waymarkView);
  await page.screenshot({ path: path.join(outDir, "large.png") });
  check(state.agentsDrawn >= 10000, `${state.agentsDrawn} agents drawn of the large replay (${loaded.frames} frames)`);
  const lowest = Math.min(...rates);
  check(lowest >= 30, `playback at ${rates.map((r) => r.toFixed(1)).join(", ")} frames per second (at least 30)`);
  check(errors.length === 0, `no console error (${errors.join("; ") || "none"})`);
  await page.close();
}

await browser.close();
console.log(failures === 0 ? "view: all checks passed" : `view: ${failures} checks failed`);
process.exit(failures === 0 ? 0 : 1);
