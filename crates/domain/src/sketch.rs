//! Run durations as a mergeable log-bucketed histogram (as DDSketch does):
//! a duration of `d` microseconds falls in bin `ceil(log_gamma(d))`, with
//! `gamma = (1 + a) / (1 - a)` and `a = 1 %`; zero (and negative: clocks
//! that disagree) durations have a bin of their own. The database fills the
//! bins (its triggers compute the same index, see the run rollups'
//! migration); this merges the bins of a window and reads quantiles off
//! them.
//!
//! The bound: a bin's value, `2 gamma^i / (gamma + 1)`, is within `a` of
//! every duration in the bin, `(gamma^(i-1), gamma^i]`. So the value read
//! at a rank is within 1 % of the exact duration at that rank, and a
//! quantile interpolated between two ranks (as `percentile_cont` does) is
//! within 1 % of the exact interpolation: both weights are positive.

use std::collections::BTreeMap;

/// The relative error of every value read from the bins.
pub const RELATIVE_ERROR: f64 = 0.01;

/// The ratio between consecutive bins' bounds.
pub const GAMMA: f64 = (1.0 + RELATIVE_ERROR) / (1.0 - RELATIVE_ERROR);

/// The bin of zero and negative durations, below every other (a duration
/// of 1 µs is bin 0).
pub const ZERO_BIN: i32 = -1;

/// The bin of a duration in microseconds.
pub fn bin_of(micros: i64) -> i32 {
    if micros < 1 {
        return ZERO_BIN;
    }
    ((micros as f64).ln() / GAMMA.ln()).ceil() as i32
}

/// The value a bin stands for, in seconds.
pub fn value_of(bin: i32) -> f64 {
    if bin <= ZERO_BIN {
        return 0.0;
    }
    2.0 * GAMMA.powi(bin) / (GAMMA + 1.0) / 1e6
}

/// Durations by bin: how many fell in each. Merging adds the counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Histogram {
    bins: BTreeMap<i32, i64>,
}

impl Histogram {
    /// Adds `n` durations to `bin` (a negative `n` takes them away, as a
    /// run that is retried takes its duration back).
    pub fn add(&mut self, bin: i32, n: i64) {
        let count = self.bins.entry(bin).or_insert(0);
        *count += n;
        if *count == 0 {
            self.bins.remove(&bin);
        }
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (&bin, &n) in &other.bins {
            self.add(bin, n);
        }
    }

    /// How many durations it holds.
    pub fn count(&self) -> i64 {
        self.bins.values().filter(|n| **n > 0).sum()
    }

    /// The value at 0-based `rank` of the sorted durations.
    fn at_rank(&self, rank: i64) -> Option<f64> {
        let mut seen = 0;
        for (&bin, &n) in &self.bins {
            if n <= 0 {
                continue;
            }
            seen += n;
            if seen > rank {
                return Some(value_of(bin));
            }
        }
        None
    }

    /// The `q` quantile (0 ≤ q ≤ 1) in seconds, interpolated between the two
    /// closest ranks as `percentile_cont` does; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let rank = q.clamp(0.0, 1.0) * (n - 1) as f64;
        let (lo, hi) = (rank.floor(), rank.ceil());
        let low = self.at_rank(lo as i64)?;
        let high = self.at_rank(hi as i64)?;
        Some(low + (high - low) * (rank - lo))
    }
}

impl FromIterator<(i32, i64)> for Histogram {
    fn from_iter<T: IntoIterator<Item = (i32, i64)>>(iter: T) -> Self {
        let mut h = Histogram::default();
        for (bin, n) in iter {
            h.add(bin, n);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(micros: &[i64]) -> Histogram {
        micros.iter().map(|&d| (bin_of(d), 1)).collect()
    }

    /// `percentile_cont` over exact durations, in seconds.
    fn exact(micros: &[i64], q: f64) -> f64 {
        let mut s: Vec<f64> = micros.iter().map(|&d| d.max(0) as f64 / 1e6).collect();
        s.sort_by(f64::total_cmp);
        let rank = q * (s.len() - 1) as f64;
        let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
        s[lo] + (s[hi] - s[lo]) * (rank - lo as f64)
    }

    fn within_bound(got: f64, want: f64) -> bool {
        (got - want).abs() <= RELATIVE_ERROR * want + 1e-12
    }

    #[test]
    fn bins_hold_durations_within_one_percent() {
        // (microseconds, bin): zero and negative apart, 1 µs in bin 0,
        // then one bin per factor of gamma.
        let cases: [(i64, i32); 7] = [
            (0, ZERO_BIN),
            (-5_000, ZERO_BIN),
            (1, 0),
            (2, 35),
            (1_000, 346),
            (1_000_000, 691),
            (86_400_000_000, 1260),
        ];
        for (micros, bin) in cases {
            assert_eq!(bin_of(micros), bin, "{micros} µs");
            let want = micros.max(0) as f64 / 1e6;
            assert!(
                within_bound(value_of(bin), want),
                "{micros} µs reads {}",
                value_of(bin)
            );
        }
        // Every duration from 1 µs to a day, on a sparse grid.
        let mut d = 1_i64;
        while d < 86_400_000_000 {
            let got = value_of(bin_of(d));
            assert!(within_bound(got, d as f64 / 1e6), "{d} µs reads {got}");
            d = d * 1013 / 1000 + 1;
        }
    }

    #[test]
    fn quantiles_are_within_one_percent_of_percentile_cont() {
        // (durations in µs, quantile)
        let cases: [(&[i64], f64); 8] = [
            (&[1_500_000], 0.5),
            (&[1_000_000, 3_000_000], 0.5),
            (&[0, 0, 0, 2_000_000], 0.5),
            (&[0, 0, 0, 2_000_000], 0.99),
            (&[250, 1_000, 4_000, 16_000, 64_000, 256_000], 0.95),
            (&[5, 5, 5, 5, 5, 5, 5, 5, 5, 90_000_000], 0.95),
            (&[3_600_000_000, 60_000_000, 1_000_000, 17], 0.0),
            (&[3_600_000_000, 60_000_000, 1_000_000, 17], 1.0),
        ];
        for (durations, q) in cases {
            let got = of(durations).quantile(q);
            let want = exact(durations, q);
            assert!(
                got.is_some_and(|g| within_bound(g, want)),
                "{durations:?} q={q}: {got:?} vs {want}"
            );
        }
        assert_eq!(Histogram::default().quantile(0.5), None);
    }

    #[test]
    fn merging_equals_binning_everything_at_once() {
        let a = [10_i64, 20, 30, 4_000_000];
        let b = [0_i64, 7, 2_500_000, 9_999_999_999];
        let mut merged = of(&a);
        merged.merge(&of(&b));
        let all: Vec<i64> = a.iter().chain(&b).copied().collect();
        assert_eq!(merged, of(&all));
        assert_eq!(merged.count(), 8);
        for q in [0.5, 0.95, 0.99] {
            assert_eq!(merged.quantile(q), of(&all).quantile(q));
        }
    }

    #[test]
    fn taking_durations_away_empties_their_bins() {
        let mut h = of(&[1_000, 2_000]);
        h.add(bin_of(2_000), -1);
        assert_eq!(h, of(&[1_000]));
        h.add(bin_of(1_000), -1);
        assert_eq!(h, Histogram::default());
        assert_eq!(h.quantile(0.5), None);
    }
}
