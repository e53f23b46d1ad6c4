use super::*;

fn load(weight: i32, in_flight: i64) -> Load {
    Load {
        weight,
        guaranteed: 0,
        cap: None,
        in_flight,
        running: in_flight,
    }
}

/// `pending[p]` candidates of each project, aged so that project 0's are
/// the oldest (a burst that arrived first).
fn candidates(pending: &[i64]) -> Vec<Candidate<(usize, i64)>> {
    pending
        .iter()
        .enumerate()
        .flat_map(|(project, &n)| {
            (1..=n).map(move |place| Candidate {
                project,
                place,
                age_key: (project, place),
            })
        })
        .collect()
}

/// Which project each of the first `room` leased candidates belongs to.
fn leased(loads: &[Load], pending: &[i64], room: usize) -> Vec<usize> {
    let candidates = candidates(pending);
    order(loads, &candidates)
        .take(room)
        .into_iter()
        .map(|i| candidates[i].project)
        .collect()
}

#[test]
fn rounds_under_contention_share_by_weight() {
    // (weights, room per round, rounds): runs never finish, so what each
    // has in flight is what it was given; every share is within 10 %.
    let cases: &[(&[i32], usize, usize)] = &[
        (&[3, 1], 1, 400),
        (&[3, 1], 4, 100),
        (&[3, 1], 64, 10),
        (&[1, 1], 3, 100),
        (&[5, 2, 1], 7, 80),
        (&[1000, 1], 10, 50),
    ];
    for &(weights, room, rounds) in cases {
        let mut loads: Vec<Load> = weights.iter().map(|&w| load(w, 0)).collect();
        let pending = vec![room as i64; weights.len()];
        for _ in 0..rounds {
            for p in leased(&loads, &pending, room) {
                loads[p].in_flight += 1;
            }
        }
        let total: i64 = loads.iter().map(|l| l.in_flight).sum();
        let weight_sum: i64 = weights.iter().map(|&w| i64::from(w)).sum();
        assert_eq!(total, (room * rounds) as i64, "{weights:?}");
        for (p, l) in loads.iter().enumerate() {
            let want = total as f64 * f64::from(weights[p]) / weight_sum as f64;
            let got = l.in_flight as f64;
            assert!(
                (got - want).abs() <= (want * 0.1).max(1.0),
                "{weights:?} room {room}: project {p} got {got}, wants {want}"
            );
        }
    }
}

/// Loads, pending per project, room, and the projects leased in order.
type Case = (Vec<Load>, Vec<i64>, usize, Vec<usize>);

#[test]
fn who_goes_first() {
    let guaranteed = |weight, in_flight, guaranteed| Load {
        guaranteed,
        ..load(weight, in_flight)
    };
    let capped = |weight, in_flight, cap| Load {
        cap: Some(cap),
        ..load(weight, in_flight)
    };
    let cases: Vec<Case> = vec![
        // Alone: everything, whatever its weight.
        (vec![load(1, 0)], vec![5], 5, vec![0, 0, 0, 0, 0]),
        (
            vec![load(1, 0), load(9, 0)],
            vec![4, 0],
            4,
            vec![0, 0, 0, 0],
        ),
        // A project back from idle goes first beside a busy one's burst.
        (vec![load(3, 30), load(1, 0)], vec![5, 1], 2, vec![1, 0]),
        // Equal virtual time: the older first (project 0's are older).
        (
            vec![load(1, 0), load(1, 0)],
            vec![2, 2],
            4,
            vec![0, 1, 0, 1],
        ),
        // 3:1 from nothing: three of the heavy one's per light one's.
        (
            vec![load(3, 0), load(1, 0)],
            vec![6, 2],
            8,
            vec![0, 0, 0, 1, 0, 0, 0, 1],
        ),
        // Within its guarantee a light project goes before a heavy one.
        (
            vec![load(9, 0), guaranteed(1, 0, 2)],
            vec![3, 3],
            4,
            vec![1, 1, 0, 0],
        ),
        // Its guarantee used, it is back to its weight.
        (
            vec![load(1, 0), guaranteed(1, 2, 2)],
            vec![3, 3],
            3,
            vec![0, 0, 0],
        ),
        // A cap leaves the rest pending; a cap reached takes nothing.
        (
            vec![capped(1, 1, 3), load(1, 5)],
            vec![5, 1],
            5,
            vec![0, 0, 1],
        ),
        (vec![capped(1, 4, 3)], vec![5], 5, vec![]),
        (vec![capped(1, 0, 0)], vec![5], 5, vec![]),
        // No room (another project's burst fills the admission): the
        // guaranteed runs still start, and only they.
        (
            vec![load(1, 8), guaranteed(1, 0, 2)],
            vec![50, 5],
            0,
            vec![1, 1],
        ),
        (
            vec![load(1, 8), guaranteed(1, 1, 2)],
            vec![50, 5],
            0,
            vec![1],
        ),
        (vec![load(1, 8), load(1, 0)], vec![50, 5], 0, vec![]),
        // More room than guarantees: the guaranteed first, then by weight.
        (
            vec![load(9, 0), guaranteed(1, 0, 1)],
            vec![50, 5],
            3,
            vec![1, 0, 0],
        ),
        // Runs that finished lately count toward the weights, not toward
        // the guarantee or the cap: the guarantee holds, then the big
        // recent share puts it behind.
        (
            vec![
                load(1, 0),
                Load {
                    running: 0,
                    ..guaranteed(1, 20, 1)
                },
            ],
            vec![3, 3],
            3,
            vec![1, 0, 0],
        ),
        (
            vec![Load {
                running: 1,
                ..capped(1, 20, 3)
            }],
            vec![5],
            5,
            vec![0, 0],
        ),
    ];
    for (loads, pending, room, want) in cases {
        assert_eq!(
            leased(&loads, &pending, room),
            want,
            "{loads:?} pending {pending:?}"
        );
    }
}

#[test]
fn a_candidate_of_no_known_project_is_left_out() {
    let candidates = [Candidate {
        project: 3,
        place: 1,
        age_key: 0,
    }];
    assert!(order(&[load(1, 0)], &candidates).take(5).is_empty());
}
