//! The events-per-second quota: a token bucket per project, `burst` tokens
//! deep, refilled at `events_per_second`; an event accepted takes one. The
//! bucket is kept in PostgreSQL (every replica takes from the same one);
//! what is decided here is what a taking that fell short tells the client.

/// What taking `wanted` tokens from a project's bucket found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Taken {
    pub wanted: i64,
    /// How many were taken: the first `granted` events are accepted.
    pub granted: i64,
    /// The tokens left after the taking (a fraction refills over time).
    pub left: f64,
    /// Tokens added per second.
    pub rate: i32,
    /// The bucket's depth.
    pub burst: i32,
}

/// An event refused by the events-per-second quota: the problem names it,
/// its `limit` (events per second), the `usage` (the burst's events the
/// rate has not yet paid back) and when a token is there again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateExceeded {
    pub limit: i64,
    pub usage: i64,
    pub retry_after_seconds: u64,
}

/// How long a refused client waits when the rate is 0 (no token ever
/// comes): a polite pace to ask again at, as for the count quotas.
pub const NO_RATE_RETRY_AFTER_SECONDS: u64 = 60;

impl RateExceeded {
    pub const QUOTA: &'static str = "events_per_second";
}

impl Taken {
    /// The refusal for the events beyond those granted, or `None` when all
    /// were.
    pub fn refusal(&self) -> Option<RateExceeded> {
        if self.granted >= self.wanted {
            return None;
        }
        let left = self.left.max(0.0);
        let missing = (1.0 - left).max(0.0);
        let retry_after_seconds = if self.rate <= 0 {
            NO_RATE_RETRY_AFTER_SECONDS
        } else {
            // Whole seconds (Retry-After has no fractions), at least one.
            ((missing / f64::from(self.rate)).ceil() as u64).max(1)
        };
        Some(RateExceeded {
            limit: self.rate.into(),
            usage: (f64::from(self.burst) - left).ceil().max(0.0) as i64,
            retry_after_seconds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_taking_says_when_a_token_is_back() {
        let taken = |wanted, granted, left, rate, burst| Taken {
            wanted,
            granted,
            left,
            rate,
            burst,
        };
        let refused = |limit, usage, retry_after_seconds| {
            Some(RateExceeded {
                limit,
                usage,
                retry_after_seconds,
            })
        };
        let cases = [
            (taken(1, 1, 4.0, 5, 5), None),
            (taken(3, 3, 0.0, 5, 5), None),
            // Empty at 5/s: a token in 0.2 s, so 1 s.
            (taken(1, 0, 0.0, 5, 5), refused(5, 5, 1)),
            // A rate of 0: no token ever comes.
            (taken(1, 0, 0.5, 0, 3), refused(0, 3, 60)),
            // Nearly a token at 1/s.
            (taken(1, 0, 0.9, 1, 10), refused(1, 10, 1)),
            // A batch of 10 granted 4.
            (taken(10, 4, 0.25, 2, 4), refused(2, 4, 1)),
        ];
        for (taken, want) in cases {
            assert_eq!(taken.refusal(), want, "{taken:?}");
        }
    }
}
