//! Fuzz targets over every input that crosses waymark's library boundary, and the seeded
//! mutation engine that drives them on the stable toolchain.
//!
//! Shared by the seconds-long run in the test suite (`tests/fuzz_inputs.rs`) and the long
//! run (`stress/fuzz.rs`, `cargo run --release --example fuzz -- [EXECS] [TARGET...]`),
//! each including this file by `#[path]`.
//!
//! The engine: each execution takes an input of the target's corpus (the files under
//! `tests/fuzz_corpus/<target>/` and inputs built here from real data), applies one to
//! four mutations drawn from a seeded generator (bit flips; bytes, 32-bit words and floats
//! overwritten with boundary values: NaN, infinities, 3.4e38, 1e20, 0, -0, u32::MAX; chunks
//! cut, repeated or spliced from another input; for text, numbers replaced by boundary
//! numbers and lines dropped or doubled), and runs the target under `catch_unwind`. A
//! panic, an execution over a second, or one whose allocations peak over 1 GiB is a
//! finding, reported with its seed, which regenerates the input exactly. Checksums do not
//! stand in for validation: the save and mesh targets re-seal their mutated bytes, so the
//! decoded values are fuzzed, not only the framing. Structured targets (the bake
//! configuration, sequences of crowd calls) draw their values from the same generator.
//!
//! Invariants checked besides "no panic": a restored or stepped crowd's agents stand at
//! finite points inside the world and move within the speed limit; a mesh that loads
//! answers queries with finite points.
//!
//! Coverage guidance, on the stable toolchain: built with LLVM's SanitizerCoverage inline
//! 8-bit counters (`stress/fuzz.sh` sets the flags), every edge of waymark's code counts
//! its passes, and the module registers its counters through
//! `__sanitizer_cov_8bit_counters_init`, defined here. After each execution the engine reads
//! the counters, buckets each count as AFL does (1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+),
//! and an input that reached a bucket no earlier input reached joins the corpus that later
//! executions mutate (half of them; the other half mutate the starting corpus). In a build without the flags no counter registers and the engine is
//! the seeded mutation alone, where a finding's seed regenerates its input; a guided run's
//! input depends on the corpus it grew, so findings carry their inputs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::AssertUnwindSafe;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use glam::Vec3;
use waymark::bake::{BakeConfig, Preset, bake};
use waymark::crowd::{AgentId, AgentParams, Crowd, CrowdConfig, HoldPolicy, KinematicController};
use waymark::geom::SplitMix64;
use waymark::geom::limits::{COORDINATE_MAX_M, SPEED_MAX_MPS, within_each};
use waymark::ids::SupportId;
use waymark::mesh::blob::NavMeshFile;
use waymark::mesh::{LinkDesc, LinkId, LinkKind, NavMesh};
use waymark::query::{NodePool, QueryFilter, find_path, nearest_polygon};
use waymark::scene::gltf::{GltfOptions, parse_gltf, write_glb};
use waymark::scene::obj::{ObjOptions, parse_obj};
use waymark::scene::{InstanceDesc, Scene, TriMesh};

/// The allocator every fuzz binary installs: the system's, counting live bytes and the
/// peak since the last [`reset_peak`].
pub struct CountingAllocator;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);
static PEAK_BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to `System` unchanged; the counters only observe sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, passed on as is.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            let live = LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK_BYTES.fetch_max(live, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(pointer, layout) };
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

/// The coverage counters of an instrumented build (see the module doc).
pub mod coverage {
    use std::sync::Mutex;

    /// Each instrumented module's counters: start and end addresses.
    static REGIONS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

    /// Called by each instrumented module's constructor with its counter array.
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_8bit_counters_init(start: *mut u8, stop: *mut u8) {
        if let Ok(mut regions) = REGIONS.lock() {
            regions.push((start as usize, stop as usize));
        }
    }

    /// The counters as one slice per module.
    fn counters() -> Vec<&'static mut [u8]> {
        let regions = REGIONS
            .lock()
            .map(|regions| regions.clone())
            .unwrap_or_default();
        regions
            .into_iter()
            .filter(|&(start, stop)| stop > start)
            // SAFETY: the instrumentation hands over each module's counter array, live
            // for the whole program, once; only the fuzz engine's thread reads or clears
            // them between executions (an execution's worker threads have finished;
            // a stray increment racing the clear loses one count, as in libFuzzer).
            .map(|(start, stop)| unsafe {
                std::slice::from_raw_parts_mut(start as *mut u8, stop - start)
            })
            .collect()
    }

    /// The edges an instrumented build counts (0 without instrumentation).
    pub fn edges() -> usize {
        counters().iter().map(|counters| counters.len()).sum()
    }

    /// AFL's hit-count bucket of a counter, as one bit.
    fn bucket(count: u8) -> u8 {
        match count {
            0 => 0,
            1 => 1,
            2 => 2,
            3 => 4,
            4..=7 => 8,
            8..=15 => 16,
            16..=31 => 32,
            32..=127 => 64,
            128.. => 128,
        }
    }

    /// The (edge, bucket) pairs reached so far.
    #[derive(Default)]
    pub struct Map {
        reached: Vec<u8>,
    }

    impl Map {
        /// Clears the counters (before an execution).
        pub fn clear(&self) {
            for counters in counters() {
                counters.fill(0);
            }
        }

        /// Folds the counters of the execution that just ended into the map and clears
        /// them; returns how many (edge, bucket) pairs were new and how many edges the
        /// execution passed.
        pub fn absorb(&mut self) -> (usize, usize) {
            let mut new = 0;
            let mut passed = 0;
            let mut index = 0;
            for counters in counters() {
                if self.reached.len() < index + counters.len() {
                    self.reached.resize(index + counters.len(), 0);
                }
                for (count, reached) in counters.iter_mut().zip(&mut self.reached[index..]) {
                    let bit = bucket(*count);
                    passed += usize::from(bit != 0);
                    if bit & !*reached != 0 {
                        *reached |= bit;
                        new += 1;
                    }
                    *count = 0;
                }
                index += counters.len();
            }
            (new, passed)
        }

        /// Edges reached at least once.
        pub fn edges_reached(&self) -> usize {
            self.reached.iter().filter(|&&bits| bits != 0).count()
        }
    }
}

/// Starts a new peak from the bytes live now.
fn reset_peak() {
    PEAK_BYTES.store(LIVE_BYTES.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// The most an execution may allocate above what was live when it began, bytes.
pub const ALLOCATION_MAX_BYTES: usize = 1 << 30;

/// How often a run reports its progress on standard error, executions.
const PROGRESS_EVERY: u64 = 100_000;

/// The longest an execution may take.
pub const EXECUTION_MAX: Duration = Duration::from_secs(1);

/// A fuzz target: a name (its corpus folder) and what it runs on one input.
pub struct Target {
    /// Name, also the corpus folder under `tests/fuzz_corpus/`.
    pub name: &'static str,
    /// Whether inputs are text (mutated by numbers and lines as well as bytes).
    pub text: bool,
    /// Runs one input; `Err` is an invariant broken without a panic.
    pub run: fn(&[u8]) -> Result<(), String>,
    /// Inputs built here from real data, beside the corpus files.
    pub seeds: fn() -> Vec<Vec<u8>>,
}

/// Every target.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "obj",
            text: true,
            run: run_obj,
            seeds: || vec![small_level_obj().into_bytes()],
        },
        Target {
            name: "gltf",
            text: false,
            run: run_gltf,
            seeds: || vec![small_level_glb()],
        },
        Target {
            name: "wmnav",
            text: false,
            run: run_wmnav,
            seeds: || vec![level_file().to_bytes()],
        },
        Target {
            name: "save",
            text: false,
            run: run_save,
            seeds: || vec![saved_crowd()],
        },
        Target {
            name: "agents_csv",
            text: true,
            run: run_agents_csv,
            seeds: || {
                vec![b"agent,sx,sy,sz,t0x,t0y,t0z\n0,1,0,1,5,0,5\n1,2,0,2,8,0,3,1,0,1\n".to_vec()]
            },
        },
        Target {
            name: "bake_config",
            text: false,
            run: run_bake_config,
            seeds: || vec![vec![0; 64]],
        },
        Target {
            name: "crowd_calls",
            text: false,
            run: run_crowd_calls,
            seeds: || vec![vec![0; 256], (0..=255).collect()],
        },
    ]
}

/// What a run of one target found.
#[derive(Debug, Default)]
pub struct Findings {
    /// Executions run.
    pub executions: u64,
    /// Each finding: its input, the seed that mutated it, and what went wrong.
    pub failures: Vec<Failure>,
    /// The slowest execution.
    pub slowest: Duration,
    /// The largest allocation peak of one execution, bytes.
    pub peak_bytes: usize,
    /// Edges of the instrumented code reached (0 in a build without coverage counters).
    pub edges_reached: usize,
    /// Inputs in the corpus at the end: the starting corpus and those that reached new
    /// coverage.
    pub corpus_size: usize,
}

/// One finding.
#[derive(Debug)]
pub struct Failure {
    /// The mutation seed; in a build without coverage it regenerates `input`
    /// ([`input_of`]).
    pub seed: u64,
    /// The input.
    pub input: Vec<u8>,
    /// What went wrong.
    pub what: String,
}

/// The corpus of `target`: its files in `tests/fuzz_corpus/<name>/` and its built seeds.
fn corpus(target: &Target) -> Vec<Vec<u8>> {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_corpus")
        .join(target.name);
    let mut inputs = (target.seeds)();
    if let Ok(entries) = std::fs::read_dir(folder) {
        let mut paths: Vec<_> = entries
            .filter_map(|entry| Some(entry.ok()?.path()))
            .collect();
        paths.sort();
        inputs.extend(paths.iter().filter_map(|path| std::fs::read(path).ok()));
    }
    inputs
}

/// Whether inputs that reach new coverage join the corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guidance {
    /// They do (where the build counts coverage).
    Coverage,
    /// The corpus stays as it started; coverage is only counted (to measure what guidance
    /// adds).
    Blind,
}

/// Runs `target` for `executions` inputs from the generator seeded with `seed`, guided by
/// coverage where the build counts it.
pub fn fuzz(target: &Target, executions: u64, seed: u64) -> Findings {
    fuzz_with(target, executions, seed, Guidance::Coverage)
}

/// [`fuzz`] with the guidance chosen.
pub fn fuzz_with(target: &Target, executions: u64, seed: u64, guidance: Guidance) -> Findings {
    let mut corpus = corpus(target);
    let length_max = input_length_max(&corpus);
    // How deep each input went: the edges its own execution passed (the starting inputs'
    // are learnt as they run).
    let mut depth = vec![0usize; corpus.len()];
    let starting = corpus.len();
    let mut map = coverage::Map::default();
    let mut findings = Findings::default();
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for execution in 0..executions {
        let input_seed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ execution;
        // Parents: half from the starting corpus, half the deeper of two drawn from
        // everything kept. Most inputs that reached new coverage were refused early (a new
        // refusal is new coverage); breeding from them evenly starves the deep paths the
        // real inputs reach.
        // Until something is kept (always, in a build without counters), the parent is
        // the one `mutated` draws, so a finding's seed regenerates its input.
        let mut draw = SplitMix64::new(input_seed ^ 0x5EED_F00D);
        let mut index = |bound: usize| (draw.next_u64() % bound as u64) as usize;
        let parent = if corpus.len() == starting {
            (SplitMix64::new(input_seed).next_u64() % starting as u64) as usize
        } else if index(2) == 0 {
            index(starting)
        } else {
            let (first, second) = (index(corpus.len()), index(corpus.len()));
            if depth[second] > depth[first] {
                second
            } else {
                first
            }
        };
        let mut input = mutated_from(&corpus, parent, target.text, input_seed);
        input.truncate(length_max);
        reset_peak();
        map.clear();
        let base = LIVE_BYTES.load(Ordering::Relaxed);
        let clock = Instant::now();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| (target.run)(&input)));
        let took = clock.elapsed();
        let peak = PEAK_BYTES.load(Ordering::Relaxed).saturating_sub(base);
        findings.executions += 1;
        findings.slowest = findings.slowest.max(took);
        findings.peak_bytes = findings.peak_bytes.max(peak);
        let what = match outcome {
            Err(panic) => Some(format!("panic: {}", panic_text(&panic))),
            Ok(Err(broken)) => Some(broken),
            Ok(Ok(())) if took > EXECUTION_MAX => Some(format!("took {took:?}")),
            Ok(Ok(())) if peak > ALLOCATION_MAX_BYTES => Some(format!("allocated {peak} bytes")),
            Ok(Ok(())) => None,
        };
        let (new_edges, passed) = map.absorb();
        let new_coverage = new_edges > 0;
        if parent < starting {
            depth[parent] = depth[parent].max(passed);
        }
        if (execution + 1) % PROGRESS_EVERY == 0 {
            eprintln!(
                "{}: {} executions, {} findings, {} edges reached, corpus {}",
                target.name,
                execution + 1,
                findings.failures.len(),
                map.edges_reached(),
                corpus.len()
            );
        }
        match what {
            Some(what) => {
                let failure = Failure {
                    seed: input_seed,
                    input,
                    what,
                };
                write_finding(target.name, &failure);
                findings.failures.push(failure);
            }
            // An input that failed is reported, not bred from.
            None if new_coverage && guidance == Guidance::Coverage => {
                corpus.push(input);
                depth.push(passed);
            }
            None => {}
        }
    }
    std::panic::set_hook(previous_hook);
    findings.edges_reached = map.edges_reached();
    findings.corpus_size = corpus.len();
    findings
}

/// Panics naming the first target of `targets` that has a finding in `executions`
/// executions from `seed` (the test suite's short run).
pub fn assert_each_survives(targets: &[Target], executions: u64, seed: u64) {
    for target in targets {
        let findings = fuzz(target, executions, seed);
        assert_eq!(findings.executions, executions);
        if let Some(first) = findings.failures.first() {
            panic!(
                "{}: {} findings, the first (seed {}): {}",
                target.name,
                findings.failures.len(),
                first.seed,
                first.what
            );
        }
    }
}

/// The CSV header of [`report_line`].
pub const REPORT_HEADER: &str =
    "target,executions,findings,slowest_ms,peak_mib,edges_reached,edges,corpus,seconds";

/// One line of a long run's report: `findings` of the target `name` after `seconds`.
pub fn report_line(name: &str, findings: &Findings, seconds: f64) -> String {
    format!(
        "{name},{},{},{:.1},{:.1},{},{},{},{seconds:.0}",
        findings.executions,
        findings.failures.len(),
        findings.slowest.as_secs_f64() * 1e3,
        findings.peak_bytes as f64 / (1 << 20) as f64,
        findings.edges_reached,
        coverage::edges(),
        findings.corpus_size,
    )
}

/// Writes a finding's input to `target/fuzz/findings/<name>/<seed>` and names it on
/// standard error with what went wrong, as soon as it is found: a long run stopped early
/// keeps what it found, and a guided run's inputs cannot be regenerated from their seeds.
fn write_finding(name: &str, failure: &Failure) {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/fuzz/findings")
        .join(name);
    let path = folder.join(failure.seed.to_string());
    let written = std::fs::create_dir_all(&folder)
        .and_then(|()| std::fs::write(&path, &failure.input))
        .map(|()| path.display().to_string())
        .unwrap_or_else(|error| format!("not written: {error}"));
    eprintln!(
        "{name}: seed {}: {} ({written})",
        failure.seed, failure.what
    );
}

/// The input of `target` an execution seeded with `seed` runs (a finding's seed).
pub fn input_of(target: &Target, seed: u64) -> Vec<u8> {
    let corpus = corpus(target);
    let mut input = mutated(&corpus, target.text, seed);
    input.truncate(input_length_max(&corpus));
    input
}

/// The longest input an execution runs: four times the longest of the starting corpus.
/// Without a bound, coverage guidance breeds ever longer inputs (a repeated chunk is new
/// coverage whenever a counter reaches its next bucket), and an execution's time grows
/// with its input while what it reaches does not.
fn input_length_max(starting: &[Vec<u8>]) -> usize {
    4 * starting.iter().map(Vec::len).max().unwrap_or(0)
}

/// The input an execution seeded with `seed` runs (the same seed, the same input).
pub fn mutated(corpus: &[Vec<u8>], text: bool, seed: u64) -> Vec<u8> {
    let parent = (SplitMix64::new(seed).next_u64() % corpus.len().max(1) as u64) as usize;
    mutated_from(corpus, parent, text, seed)
}

/// The input an execution seeded with `seed` runs when it mutates `corpus[parent]` (other
/// corpus inputs may be spliced in).
pub fn mutated_from(corpus: &[Vec<u8>], parent: usize, text: bool, seed: u64) -> Vec<u8> {
    let mut random = SplitMix64::new(seed);
    let mut pick = |bound: usize| (random.next_u64() % bound.max(1) as u64) as usize;
    // The draw `mutated` spent on the parent, so a seed's mutations do not depend on how
    // its parent was chosen.
    let _ = pick(corpus.len());
    let mut input = corpus[parent].clone();
    for _ in 0..1 + pick(4) {
        let kind = pick(if text { 9 } else { 7 });
        let at = pick(input.len());
        match kind {
            0 => {
                if let Some(byte) = input.get_mut(at) {
                    *byte ^= 1 << pick(8);
                }
            }
            1 => {
                if let Some(byte) = input.get_mut(at) {
                    *byte = [0, 0xff, 0x7f, 0x80, b'-', b'.', b'e', b'\n'][pick(8)];
                }
            }
            2 | 3 => {
                let word = if kind == 2 {
                    INTERESTING_FLOATS[pick(INTERESTING_FLOATS.len())].to_bits()
                } else {
                    INTERESTING_WORDS[pick(INTERESTING_WORDS.len())]
                };
                if at + 4 <= input.len() {
                    input[at..at + 4].copy_from_slice(&word.to_le_bytes());
                }
            }
            4 => {
                let end = (at + 1 + pick(64)).min(input.len());
                input.drain(at..end);
            }
            5 => {
                let end = (at + 1 + pick(64)).min(input.len());
                let chunk = input[at..end].to_vec();
                let times = 1 + pick(8);
                for _ in 0..times {
                    input.splice(at..at, chunk.iter().copied());
                }
            }
            6 => {
                let other = &corpus[pick(corpus.len())];
                let from = pick(other.len());
                let end = (from + 1 + pick(256)).min(other.len());
                input.splice(at..at, other[from..end].iter().copied());
            }
            7 => replace_number(
                &mut input,
                at,
                INTERESTING_NUMBERS[pick(INTERESTING_NUMBERS.len())],
            ),
            _ => {
                // A line dropped or doubled.
                let text = String::from_utf8_lossy(&input).into_owned();
                let mut lines: Vec<&str> = text.lines().collect();
                if !lines.is_empty() {
                    let line = pick(lines.len());
                    if pick(2) == 0 {
                        lines.remove(line);
                    } else {
                        lines.insert(line, lines[line]);
                    }
                }
                input = lines.join("\n").into_bytes();
            }
        }
    }
    input
}

const INTERESTING_FLOATS: [f32; 12] = [
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::MAX,
    -3.4e38,
    1e20,
    1e30,
    0.0,
    -0.0,
    1e-45,
    -1.0,
    65536.0,
];

const INTERESTING_WORDS: [u32; 8] = [
    0,
    1,
    u32::MAX,
    0x7fff_ffff,
    0x8000_0000,
    65_535,
    65_536,
    255,
];

const INTERESTING_NUMBERS: [&str; 12] = [
    "nan",
    "inf",
    "-inf",
    "3.4e38",
    "1e20",
    "-1e30",
    "0",
    "-0",
    "1e-45",
    "99999999999",
    "-1",
    "1e5",
];

/// The number in `input` around byte `at` (if any) replaced by `number`.
fn replace_number(input: &mut Vec<u8>, at: usize, number: &str) {
    let is_number = |byte: u8| byte.is_ascii_digit() || matches!(byte, b'.' | b'-' | b'e');
    let Some(start) = (0..input.len().min(at + 1))
        .rev()
        .find(|&i| is_number(input[i]))
    else {
        return;
    };
    let mut first = start;
    while first > 0 && is_number(input[first - 1]) {
        first -= 1;
    }
    let mut end = start;
    while end < input.len() && is_number(input[end]) {
        end += 1;
    }
    input.splice(first..end, number.bytes());
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(not text)".into())
}

/// Two rooms joined by a corridor, as OBJ text.
/// The small OBJ level as a GLB.
fn small_level_glb() -> Vec<u8> {
    let world = parse_obj(
        small_level_obj().as_bytes(),
        "rooms.obj",
        &ObjOptions::default(),
    )
    .expect("the seed level reads")
    .world_triangles()
    .expect("the seed level has triangles");
    write_glb(&world)
}

fn small_level_obj() -> String {
    let mut text = String::from("# two rooms and a corridor\n");
    let mut vertices = 0;
    for (x0, x1, z0, z1) in [
        (0.0, 8.0, 0.0, 6.0),
        (12.0, 20.0, 0.0, 6.0),
        (0.0, 20.0, 7.0, 9.0),
    ] {
        for (x, z) in [(x0, z0), (x1, z0), (x1, z1), (x0, z1)] {
            text.push_str(&format!("v {x} 0 {z}\n"));
        }
        text.push_str(&format!(
            "f {} {} {}\nf {} {} {}\n",
            vertices + 1,
            vertices + 3,
            vertices + 2,
            vertices + 1,
            vertices + 4,
            vertices + 3
        ));
        vertices += 4;
    }
    text
}

/// The settings the targets bake with: coarse cells in tiles of 64, so a level a mutation
/// made large is refused by the grid's limits or baked within the time budget. (Tiled
/// because a solo bake of a long sliver is slow: see docs/reliability.md, findings.)
fn fuzz_bake_config() -> BakeConfig {
    BakeConfig {
        cell_size_m: 0.5,
        cell_height_m: 0.2,
        tile_size_cells: Some(64),
        ..BakeConfig::preset(Preset::Guard)
    }
}

/// Two rooms and a corridor baked (once), with a door link between the rooms.
fn level_mesh() -> NavMesh {
    level().0
}

/// [`level_mesh`] and its door.
fn level() -> (NavMesh, LinkId) {
    static FILE: OnceLock<NavMeshFile> = OnceLock::new();
    let file = FILE.get_or_init(level_file).clone();
    let mut mesh = NavMesh::from_file(file).expect("a mesh");
    let door = mesh
        .add_link(LinkDesc {
            kind: LinkKind::Door,
            start: Vec3::new(9.0, 0.0, 3.0),
            end: Vec3::new(15.0, 0.0, 3.0),
            bidirectional: true,
            radius_m: 1.0,
            open: true,
        })
        .expect("the door");
    (mesh, door)
}

/// The two rooms and their corridor as a baked `.wmnav` file's content.
fn level_file() -> NavMeshFile {
    let mut scene = Scene::new();
    for (name, x0, x1, z0, z1) in [
        ("room_a", 0.0, 10.0, 0.0, 6.0),
        ("room_b", 14.0, 24.0, 0.0, 6.0),
        ("corridor", 0.0, 24.0, 8.0, 11.0),
        ("left", 0.0, 3.0, 5.0, 9.0),
    ] {
        let mesh = scene.add_mesh(TriMesh::axis_box(
            name,
            Vec3::new(x0, -0.2, z0),
            Vec3::new(x1, 0.0, z1),
        ));
        scene
            .add_instance(InstanceDesc::new(name, mesh))
            .expect("an instance");
    }
    let world = scene.world_triangles().expect("the rooms' triangles");
    let config = BakeConfig {
        tile_size_cells: Some(32),
        ..BakeConfig::preset(Preset::Guard)
    };
    bake(&world, &config).expect("a bake").to_file()
}

const WALKER: AgentParams = AgentParams {
    radius_m: 0.4,
    height_m: 1.8,
    max_speed_mps: 2.0,
    preferred_speed_mps: 1.5,
    max_acceleration_mps2: 8.0,
};

/// A crowd of six walkers on [`level_mesh`], ten steps in, saved.
fn saved_crowd() -> Vec<u8> {
    let mut crowd = Crowd::new(&level_mesh(), CrowdConfig::default()).expect("a crowd");
    for index in 0..6 {
        let agent = crowd
            .add_agent(Vec3::new(1.0 + index as f32, 0.0, 2.0), WALKER)
            .expect("an agent");
        crowd
            .request_move(agent, Vec3::new(20.0, 0.0, 3.0 + (index % 2) as f32))
            .expect("an order");
        if index == 5 {
            crowd
                .request_hold(agent, Vec3::new(6.0, 0.0, 4.0), HoldPolicy::SPEC_EXAMPLE)
                .expect("a hold");
        }
    }
    crowd
        .set_support_velocity(SupportId(0), Vec3::new(0.5, 0.0, 0.0))
        .expect("a belt");
    for _ in 0..10 {
        crowd
            .step(1.0 / 30.0, &mut KinematicController)
            .expect("a step");
    }
    crowd.save()
}

/// `Err` naming the first agent not at a finite point inside the world or moving past
/// the speed limit.
fn check_agents(crowd: &Crowd, when: &str) -> Result<(), String> {
    match crowd.agents().find(|view| {
        !(within_each(view.position, COORDINATE_MAX_M) && within_each(view.velocity, SPEED_MAX_MPS))
    }) {
        Some(view) => Err(format!("{when}: {view:?}")),
        None => Ok(()),
    }
}

fn run_obj(input: &[u8]) -> Result<(), String> {
    let Ok(scene) = parse_obj(input, "fuzz.obj", &ObjOptions::default()) else {
        return Ok(());
    };
    let Ok(world) = scene.world_triangles() else {
        return Ok(());
    };
    if world.len() > 20_000 {
        return Ok(()); // a level, not a fuzz input: its bake is measured elsewhere
    }
    // A bake's time follows its level's area (at the targets' half-metre cells, a square
    // kilometre takes about a second; tiled, a 100 km sliver 20 m wide: 8 s), as it
    // should, so levels over a tenth of a square kilometre are not baked here: their time
    // is no finding, and a level that size is a benchmark's input, not a fuzzer's.
    let extent = world.bounds.max - world.bounds.min;
    if extent.x * extent.z > 1e5 {
        return Ok(());
    }
    if let Ok(baked) = bake(&world, &fuzz_bake_config()) {
        NavMesh::from_file(baked.to_file())
            .map_err(|error| format!("baked but not loaded: {error}"))?;
    }
    Ok(())
}

fn run_gltf(input: &[u8]) -> Result<(), String> {
    let Ok(scene) = parse_gltf(input, None, "fuzz.glb", &GltfOptions::default()) else {
        return Ok(());
    };
    let Ok(world) = scene.world_triangles() else {
        return Ok(());
    };
    // Baked as the OBJ target bakes, within the same bounds.
    let extent = world.bounds.max - world.bounds.min;
    if world.len() > 20_000 || extent.x * extent.z > 1e5 {
        return Ok(());
    }
    if let Ok(baked) = bake(&world, &fuzz_bake_config()) {
        NavMesh::from_file(baked.to_file())
            .map_err(|error| format!("baked but not loaded: {error}"))?;
    }
    Ok(())
}

fn run_wmnav(input: &[u8]) -> Result<(), String> {
    // Re-sealed: the checksum is the file's last eight bytes (FNV-1a of the rest).
    let mut bytes = input.to_vec();
    if bytes.len() > 8 {
        let body = bytes.len() - 8;
        let checksum = waymark::mesh::blob::fnv1a64(&bytes[..body]);
        bytes[body..].copy_from_slice(&checksum.to_le_bytes());
    }
    let Ok(file) = NavMeshFile::from_bytes(&bytes) else {
        return Ok(());
    };
    let Ok(mesh) = NavMesh::from_file(file) else {
        return Ok(());
    };
    let snapshot = mesh.snapshot();
    let filter = QueryFilter::new();
    let extents = Vec3::new(2.0, 4.0, 2.0);
    let mut pool = NodePool::new(2048);
    let points = [
        Vec3::new(2.0, 0.0, 2.0),
        Vec3::new(18.0, 0.0, 3.0),
        Vec3::ZERO,
    ];
    for &start in &points {
        for &end in &points {
            let (Ok(Some(from)), Ok(Some(to))) = (
                nearest_polygon(&snapshot, start, extents, &filter),
                nearest_polygon(&snapshot, end, extents, &filter),
            ) else {
                continue;
            };
            if !from.point.is_finite() || !to.point.is_finite() {
                return Err(format!("a snapped point not finite: {from:?} {to:?}"));
            }
            let _ = find_path(
                &snapshot,
                from.polygon,
                from.point,
                to.polygon,
                to.point,
                &filter,
                &mut pool,
            );
        }
    }
    Ok(())
}

fn run_save(input: &[u8]) -> Result<(), String> {
    // Re-sealed: the CRC-32 at bytes 20..24 covers the payload from byte 24.
    let mut bytes = input.to_vec();
    if bytes.len() >= 24 {
        let checksum = crc32fast::hash(&bytes[24..]);
        bytes[20..24].copy_from_slice(&checksum.to_le_bytes());
    }
    let Ok(mut crowd) = Crowd::restore(&level_mesh(), CrowdConfig::default(), &bytes) else {
        return Ok(());
    };
    check_agents(&crowd, "restored")?;
    for _ in 0..3 {
        crowd
            .step(1.0 / 30.0, &mut KinematicController)
            .map_err(|error| format!("a restored crowd's step failed: {error}"))?;
    }
    check_agents(&crowd, "stepped")
}

fn run_agents_csv(input: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    if let Ok(plans) = waymark::harness::parse_agents_csv(&text, "fuzz.csv", 2) {
        for plan in &plans {
            if !within_each(plan.start, COORDINATE_MAX_M)
                || !plan
                    .targets
                    .iter()
                    .all(|&t| within_each(t, COORDINATE_MAX_M))
            {
                return Err(format!("a plan outside the world was accepted: {plan:?}"));
            }
        }
    }
    Ok(())
}

/// A value for a structured field: a byte of `input` picks a boundary value or a scaled
/// ordinary one.
fn value_of(byte: u8) -> f32 {
    match byte % 16 {
        index @ 0..12 => INTERESTING_FLOATS[index as usize],
        12 => f32::from(byte) / 64.0,
        13 => f32::from(byte) / 8.0,
        14 => -f32::from(byte) / 16.0,
        _ => f32::from(byte) * 100.0,
    }
}

fn run_bake_config(input: &[u8]) -> Result<(), String> {
    let byte = |index: usize| input.get(index).copied().unwrap_or(13);
    let mut config = fuzz_bake_config();
    let fields: [&mut f32; 12] = [
        &mut config.cell_size_m,
        &mut config.cell_height_m,
        &mut config.agent_radius_m,
        &mut config.agent_height_m,
        &mut config.agent_max_climb_m,
        &mut config.agent_max_slope_deg,
        &mut config.region_min_area_m2,
        &mut config.region_merge_area_m2,
        &mut config.edge_max_length_m,
        &mut config.edge_max_error_m,
        &mut config.detail_sample_distance_m,
        &mut config.detail_sample_max_error_m,
    ];
    for (index, field) in fields.into_iter().enumerate() {
        // Half the fields keep their preset values, so a bake gets through sometimes.
        if byte(index) & 0x80 != 0 {
            *field = value_of(byte(index + 16));
        }
    }
    config.verts_per_poly_max = usize::from(byte(12) % 8);
    config.tile_size_cells = (byte(13) & 1 == 1).then_some(u32::from(byte(14)) * 4);
    let Ok(valid) = config.validate() else {
        return Ok(());
    };
    // Fine cells on the small level stay within the budget; the grid's limits refuse more.
    if valid.config.cell_size_m < 0.05 {
        return Ok(());
    }
    let scene = parse_obj(
        small_level_obj().as_bytes(),
        "rooms.obj",
        &ObjOptions::default(),
    )
    .map_err(|error| error.to_string())?;
    let world = scene.world_triangles().map_err(|error| error.to_string())?;
    if let Ok(baked) = bake(&world, &config) {
        NavMesh::from_file(baked.to_file())
            .map_err(|error| format!("baked but not loaded: {error}"))?;
    }
    Ok(())
}

/// A point for a structured call: mostly on or near the rooms, sometimes a boundary value.
fn point_of(bytes: [u8; 3]) -> Vec3 {
    let coordinate = |byte: u8, span: f32| {
        if byte >= 240 {
            value_of(byte)
        } else {
            f32::from(byte) / 240.0 * span
        }
    };
    Vec3::new(
        coordinate(bytes[0], 24.0),
        coordinate(bytes[1], 0.5) - 0.25,
        coordinate(bytes[2], 11.0),
    )
}

fn run_crowd_calls(input: &[u8]) -> Result<(), String> {
    let (mut mesh, door) = level();
    let mut crowd = Crowd::new(&mesh, CrowdConfig::default()).map_err(|error| error.to_string())?;
    let mut agents: Vec<AgentId> = Vec::new();
    let mut controller = KinematicController;
    let mut at = 0;
    let mut next = |count: usize| -> Option<&[u8]> {
        let slice = input.get(at..at + count)?;
        at += count;
        Some(slice)
    };
    while let Some(&[call, pick, a, b, c]) = next(5) {
        let agent = if agents.is_empty() {
            None
        } else {
            Some(agents[usize::from(pick) % agents.len()])
        };
        let point = point_of([a, b, c]);
        match (call % 16, agent) {
            (0 | 1, _) => {
                let params = AgentParams {
                    radius_m: if a >= 240 {
                        value_of(a)
                    } else {
                        WALKER.radius_m
                    },
                    max_speed_mps: if b >= 240 {
                        value_of(b)
                    } else {
                        WALKER.max_speed_mps
                    },
                    ..WALKER
                };
                if let Ok(agent) = crowd.add_agent(point_of([c, 100, pick]), params) {
                    agents.push(agent);
                }
            }
            (2, Some(agent)) => {
                let _ = crowd.remove_agent(agent);
            }
            (3 | 4, Some(agent)) => {
                let _ = crowd.request_move(agent, point);
            }
            (5, Some(agent)) => {
                let _ = crowd.cancel(agent);
            }
            (6, Some(agent)) => {
                let _ = crowd.teleport(agent, point);
            }
            (7, Some(agent)) => {
                let _ = crowd.push(agent, point - Vec3::new(12.0, 0.0, 5.0));
            }
            (8, Some(agent)) => {
                let _ =
                    crowd.request_velocity(agent, Vec3::new(value_of(a), 0.0, value_of(c)) * 0.01);
            }
            (9, Some(agent)) => {
                let _ = crowd.request_hold(agent, point, HoldPolicy::SPEC_EXAMPLE);
            }
            (10, Some(agent)) => {
                let params = AgentParams {
                    max_speed_mps: value_of(a).abs(),
                    preferred_speed_mps: value_of(b).abs(),
                    ..WALKER
                };
                let _ = crowd.set_params(agent, params);
            }
            (11, _) => {
                let _ = crowd.set_support_velocity(
                    SupportId(u32::from(pick % 3)),
                    point - point_of([a, a, a]),
                );
            }
            (12, _) => {
                let _ =
                    crowd.set_support_rotation(SupportId(u32::from(pick % 3)), point, value_of(a));
            }
            (13, _) => {
                if mesh.set_link_open(door, a % 2 == 0).is_ok() {
                    crowd.set_mesh(&mesh);
                }
            }
            (14, _) => {
                let bytes = crowd.save();
                crowd = Crowd::restore(&mesh, CrowdConfig::default(), &bytes)
                    .map_err(|error| format!("a save of this crowd was refused: {error}"))?;
                agents.retain(|&agent| crowd.status(agent).is_ok());
            }
            _ => {
                let dt = if a >= 128 { value_of(b) } else { 1.0 / 30.0 };
                if crowd.step(dt, &mut controller).is_ok() {
                    check_agents(&crowd, "stepped")?;
                }
            }
        }
    }
    for _ in 0..5 {
        crowd
            .step(1.0 / 30.0, &mut controller)
            .map_err(|error| format!("a step at 1/30 s failed: {error}"))?;
    }
    check_agents(&crowd, "at the end")
}
