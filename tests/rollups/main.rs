//! The run rollups (kept by triggers on `activity_runs`) stay equal to a
//! count of the runs, whoever writes them and however the writer ends:
//! a randomized workload through the store and through plain SQL, and a
//! writer killed mid-burst.

mod crash;
mod workload;

use sqlx::PgPool;

/// A small seeded generator (splitmix64): the same seed, the same workload.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Every rollup row, at every granularity, equals `count(*)` of its key
/// over `activity_runs` (rows at zero are the same as no row), and every
/// duration bin equals the count of its runs whose duration falls in it.
pub async fn assert_rollups_exact(pool: &PgPool) {
    let counts: Vec<String> = sqlx::query_scalar(
        "WITH g(s) AS (VALUES (60), (3600), (86400)),
         truth AS (
             SELECT g.s, date_bin(make_interval(secs => g.s), r.created_at,
                        timestamptz '1970-01-01 00:00:00+00') AS bucket,
                    r.activity_id, r.trigger_type, r.status, count(*) AS n
               FROM activity_runs r CROSS JOIN g GROUP BY 1, 2, 3, 4, 5),
         kept AS (SELECT * FROM run_rollups WHERE runs <> 0)
         SELECT format('%s %s %s %s %s: %s runs, rollup %s',
                       coalesce(t.s, k.bucket_seconds), coalesce(t.bucket, k.bucket),
                       coalesce(t.activity_id, k.activity_id),
                       coalesce(t.trigger_type, k.trigger_type),
                       coalesce(t.status, k.status), t.n, k.runs)
           FROM truth t FULL JOIN kept k
             ON (t.s, t.bucket, t.activity_id, t.trigger_type, t.status)
              = (k.bucket_seconds, k.bucket, k.activity_id, k.trigger_type, k.status)
          WHERE t.n IS DISTINCT FROM k.runs
          LIMIT 10",
    )
    .fetch_all(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        counts.is_empty(),
        "rollups differ from the runs: {counts:#?}"
    );

    let bins: Vec<String> = sqlx::query_scalar(
        "WITH g(s) AS (VALUES (60), (3600), (86400)),
         truth AS (
             SELECT g.s, date_bin(make_interval(secs => g.s), r.created_at,
                        timestamptz '1970-01-01 00:00:00+00') AS bucket,
                    r.activity_id, r.trigger_type, r.status,
                    acp_duration_bin(r.started_at, r.finished_at) AS bin, count(*) AS n
               FROM activity_runs r CROSS JOIN g
              WHERE r.started_at IS NOT NULL AND r.finished_at IS NOT NULL
              GROUP BY 1, 2, 3, 4, 5, 6),
         kept AS (SELECT * FROM run_rollup_bins WHERE n <> 0)
         SELECT format('%s %s %s %s %s bin %s: %s runs, rollup %s',
                       coalesce(t.s, k.bucket_seconds), coalesce(t.bucket, k.bucket),
                       coalesce(t.activity_id, k.activity_id),
                       coalesce(t.trigger_type, k.trigger_type),
                       coalesce(t.status, k.status), coalesce(t.bin, k.bin), t.n, k.n)
           FROM truth t FULL JOIN kept k
             ON (t.s, t.bucket, t.activity_id, t.trigger_type, t.status, t.bin)
              = (k.bucket_seconds, k.bucket, k.activity_id, k.trigger_type, k.status, k.bin)
          WHERE t.n IS DISTINCT FROM k.n
          LIMIT 10",
    )
    .fetch_all(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        bins.is_empty(),
        "duration bins differ from the runs: {bins:#?}"
    );
}

/// Activities for the runs to belong to (the runs' foreign key).
pub async fn activities(app: &crate::common::TestApp, n: usize) -> Vec<uuid::Uuid> {
    let mut ids = Vec::new();
    for _ in 0..n {
        let created = app.create(&crate::common::interval_activity("PT1H")).await;
        let id = created["id"].as_str().unwrap_or_default();
        ids.push(id.parse().unwrap_or_else(|e| panic!("{id}: {e}")));
    }
    ids
}
