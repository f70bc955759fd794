//! Sorting networks for the K-nearest search: up to sixteen 64-bit keys (distance and slot)
//! sorted without a data-dependent branch.
//!
//! Stage: crowd runtime, inside the neighbour grid's query. Input: a query's candidate
//! keys; output: the same keys in ascending order. A network's compare-exchanges are a
//! min and a max each, so the sort takes the same path whatever the keys; networks cut down
//! to the inputs in use are derived from the full one at compile time.

/// Inputs of the sorting network.
pub(crate) const NETWORK_INPUTS: usize = 16;

/// A 16-input sorting network (60 comparators in 10 layers, M. W. Green's): every
/// compare-exchange is a min and a max, so the sort takes the same path whatever the keys,
/// where an insertion sort of a dozen random keys mispredicts a branch for most of them
/// (the query's largest cost when it sorted that way).
#[rustfmt::skip]
const SORTING_NETWORK: [(u8, u8); 60] = [
    (0, 13), (1, 12), (2, 15), (3, 14), (4, 8), (5, 6), (7, 11), (9, 10),
    (0, 5), (1, 7), (2, 9), (3, 4), (6, 13), (8, 14), (10, 15), (11, 12),
    (0, 1), (2, 3), (4, 5), (6, 8), (7, 9), (10, 11), (12, 13), (14, 15),
    (0, 2), (1, 3), (4, 10), (5, 11), (6, 7), (8, 9), (12, 14), (13, 15),
    (1, 2), (3, 12), (4, 6), (5, 7), (8, 10), (9, 11), (13, 14),
    (1, 4), (2, 6), (5, 8), (7, 10), (9, 13), (11, 14),
    (2, 4), (3, 6), (9, 12), (11, 13),
    (3, 5), (6, 8), (7, 9), (10, 12),
    (3, 4), (5, 6), (7, 8), (9, 10), (11, 12),
    (6, 7), (8, 9),
];

/// Sorts 16 keys ascending with [`SORTING_NETWORK`].
#[cfg(test)]
fn sort_by_network(keys: &mut [u64; NETWORK_INPUTS]) {
    for &(low, high) in &SORTING_NETWORK {
        let (low, high) = (usize::from(low), usize::from(high));
        let (a, b) = (keys[low], keys[high]);
        keys[low] = a.min(b);
        keys[high] = a.max(b);
    }
}

/// [`SORTING_NETWORK`] cut down to its first `inputs` places (see [`pruned_network`]).
#[derive(Clone, Copy, Debug)]
struct PrunedNetwork {
    /// Compare-exchanges (min to the first place), the first `length` used.
    comparators: [(u8, u8); SORTING_NETWORK.len()],
    length: usize,
    /// The place where the network leaves the j-th smallest key.
    output: [u8; NETWORK_INPUTS],
}

/// The sorting network for keys in the first `inputs` places, from the 16-input one with
/// the other inputs taken as infinite: a comparator between two infinite places, or with the
/// infinity already on its high side, does nothing and is left out; one with the infinity on
/// its low side only swaps, which is done by renaming the places rather than moving keys.
/// What remains compares real keys only: 31 comparators for 10 keys, 40 for 12, against 60
/// for the padded 16 (a query's first look usually brings 10 to 14).
const fn pruned_network(inputs: usize) -> PrunedNetwork {
    let mut infinite = [false; NETWORK_INPUTS];
    // place[wire]: where the key the full network would carry on `wire` is.
    let mut place = [0u8; NETWORK_INPUTS];
    let mut wire = 0;
    while wire < NETWORK_INPUTS {
        infinite[wire] = wire >= inputs;
        place[wire] = wire as u8;
        wire += 1;
    }
    let mut comparators = [(0u8, 0u8); SORTING_NETWORK.len()];
    let mut length = 0;
    let mut next = 0;
    while next < SORTING_NETWORK.len() {
        let (low, high) = SORTING_NETWORK[next];
        let (low, high) = (low as usize, high as usize);
        if infinite[low] && !infinite[high] {
            (place[low], place[high]) = (place[high], place[low]);
            (infinite[low], infinite[high]) = (false, true);
        } else if !infinite[low] && !infinite[high] {
            comparators[length] = (place[low], place[high]);
            length += 1;
        }
        next += 1;
    }
    PrunedNetwork {
        comparators,
        length,
        output: place,
    }
}

/// [`pruned_network`] for every input count up to 16, built at compile time.
const PRUNED_NETWORKS: [PrunedNetwork; NETWORK_INPUTS + 1] = {
    let mut networks = [pruned_network(0); NETWORK_INPUTS + 1];
    let mut inputs = 1;
    while inputs <= NETWORK_INPUTS {
        networks[inputs] = pruned_network(inputs);
        inputs += 1;
    }
    networks
};

/// Sorts the first `count` (at most 16) of `keys` ascending with [`PRUNED_NETWORKS`]; the
/// other places come back in no particular order. One straight-line function per count
/// (the network a constant in each), so every compare-exchange has its places built in
/// rather than read from a table.
#[inline]
pub(crate) fn sort_short(keys: &mut [u64; NETWORK_INPUTS], count: usize) {
    debug_assert!(
        count <= NETWORK_INPUTS,
        "{count} keys for a 16-input network"
    );
    match count {
        0 | 1 => {}
        2 => sort_fixed::<2>(keys),
        3 => sort_fixed::<3>(keys),
        4 => sort_fixed::<4>(keys),
        5 => sort_fixed::<5>(keys),
        6 => sort_fixed::<6>(keys),
        7 => sort_fixed::<7>(keys),
        8 => sort_fixed::<8>(keys),
        9 => sort_fixed::<9>(keys),
        10 => sort_fixed::<10>(keys),
        11 => sort_fixed::<11>(keys),
        12 => sort_fixed::<12>(keys),
        13 => sort_fixed::<13>(keys),
        14 => sort_fixed::<14>(keys),
        15 => sort_fixed::<15>(keys),
        _ => sort_fixed::<16>(keys),
    }
}

/// [`sort_short`] for `COUNT` keys.
#[inline(always)]
fn sort_fixed<const COUNT: usize>(keys: &mut [u64; NETWORK_INPUTS]) {
    let network = const { PRUNED_NETWORKS[COUNT] };
    // Written out comparator by comparator: with the network a constant, each test below
    // folds away or leaves one compare-exchange at fixed places (LLVM does not unroll a
    // loop of sixty on its own).
    macro_rules! compare_exchanges {
        ($($next:literal)*) => {$(
            if $next < network.length {
                let (low, high) = network.comparators[$next];
                let (low, high) = (usize::from(low), usize::from(high));
                let (a, b) = (keys[low], keys[high]);
                keys[low] = a.min(b);
                keys[high] = a.max(b);
            }
        )*};
    }
    compare_exchanges!(
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29
        30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57
        58 59
    );
    const { assert!(SORTING_NETWORK.len() == 60) };
    let placed = *keys;
    for (key, &place) in keys.iter_mut().zip(&network.output) {
        *key = placed[usize::from(place)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crowd::avoidance::neighbours::key_of;

    #[test]
    fn the_sorting_network_sorts_every_input_of_zeros_and_ones() {
        // The 0-1 principle: a comparator network that sorts every sequence of zeros and
        // ones sorts every sequence.
        for bits in 0u32..1 << NETWORK_INPUTS {
            let mut keys: [u64; NETWORK_INPUTS] =
                std::array::from_fn(|i| u64::from((bits >> i) & 1));
            sort_by_network(&mut keys);
            assert!(keys.is_sorted(), "{bits:016b} -> {keys:?}");
        }
        // And keys of the query's own form, against the standard sort.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..1000 {
            let mut keys: [u64; NETWORK_INPUTS] = std::array::from_fn(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                key_of(f32::from_bits((state >> 41) as u32), state as u32 & 0xffff)
            });
            let mut expected = keys;
            expected.sort_unstable();
            sort_by_network(&mut keys);
            assert_eq!(keys, expected);
        }
    }

    #[test]
    fn the_cut_down_networks_sort_every_input_of_zeros_and_ones() {
        for count in 0..=NETWORK_INPUTS {
            for bits in 0u32..1 << count {
                // Garbage beyond `count`, which the network must neither read nor keep.
                let mut keys: [u64; NETWORK_INPUTS] = std::array::from_fn(|i| {
                    if i < count {
                        u64::from((bits >> i) & 1)
                    } else {
                        7
                    }
                });
                sort_short(&mut keys, count);
                let mut expected: Vec<u64> =
                    (0..count).map(|i| u64::from((bits >> i) & 1)).collect();
                expected.sort_unstable();
                assert_eq!(&keys[..count], &expected[..], "{count} keys, {bits:b}");
            }
        }
        let network_sizes: Vec<usize> = PRUNED_NETWORKS.iter().map(|n| n.length).collect();
        assert_eq!(network_sizes[10], 31);
        assert_eq!(network_sizes[16], SORTING_NETWORK.len());
    }
}
