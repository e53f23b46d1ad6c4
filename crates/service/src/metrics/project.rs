//! The `project` label: bounded to [`PROJECT_LABELS`] values per process,
//! and the project of an activity's runs, read once per activity.

use std::collections::{HashMap, HashSet};
use std::sync::{LazyLock, Mutex};

use super::{RUNS, activity_label};

/// Distinct values the `project` label takes at most: projects are the
/// operator's to make, but a label must stay bounded whatever their number.
pub const PROJECT_LABELS: usize = 100;
/// The label value the projects past [`PROJECT_LABELS`] share.
pub const OTHER_PROJECTS: &str = "other";

static PROJECT_LABEL_VALUES: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Default::default);

/// `value` when it is already one of `seen` or `seen` has room for it (it
/// is then remembered); [`OTHER_PROJECTS`] otherwise.
fn bounded_label(seen: &mut HashSet<String>, value: &str, cap: usize) -> String {
    if seen.contains(value) {
        return value.to_owned();
    }
    if seen.len() < cap {
        seen.insert(value.to_owned());
        return value.to_owned();
    }
    OTHER_PROJECTS.to_owned()
}

/// The `project` label of a project: its ID for the first
/// [`PROJECT_LABELS`] projects this process labels, `other` after.
pub fn project_label(project: &str) -> String {
    let mut seen = PROJECT_LABEL_VALUES
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    bounded_label(&mut seen, project, PROJECT_LABELS)
}

/// Activities' projects as read for [`count_run`] (a project never changes);
/// past this many it starts again empty.
const KNOWN_OWNERS: usize = 10_000;
static ACTIVITY_PROJECTS: LazyLock<Mutex<HashMap<uuid::Uuid, String>>> =
    LazyLock::new(Default::default);

/// The project label of an activity's runs: read once per activity.
async fn project_label_of(pool: &sqlx::PgPool, activity_id: uuid::Uuid) -> String {
    let known = ACTIVITY_PROJECTS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&activity_id)
        .cloned();
    let project = match known {
        Some(project) => project,
        None => match acp_store::projects::owner::of_activity(pool, activity_id).await {
            Ok(Some(project)) => {
                let mut known = ACTIVITY_PROJECTS.lock().unwrap_or_else(|p| p.into_inner());
                if known.len() >= KNOWN_OWNERS {
                    known.clear();
                }
                known.insert(activity_id, project.clone());
                project
            }
            // Unread (the database is away) or gone: counted, unattributed.
            _ => return OTHER_PROJECTS.to_owned(),
        },
    };
    project_label(&project)
}

/// Counts a run that ended (`acp_runs_total`), by its activity, the
/// activity's project and the status it ended in.
pub async fn count_run(
    pool: &sqlx::PgPool,
    activity_id: uuid::Uuid,
    status: acp_domain::run::RunStatus,
) {
    let project = project_label_of(pool, activity_id).await;
    RUNS.with_label_values(&[&activity_label(&activity_id), &project, status.as_str()])
        .inc();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_labels_are_bounded_and_the_rest_are_other() {
        let mut seen = HashSet::new();
        assert_eq!(bounded_label(&mut seen, "team-a", 2), "team-a");
        assert_eq!(bounded_label(&mut seen, "team-b", 2), "team-b");
        assert_eq!(bounded_label(&mut seen, "team-c", 2), OTHER_PROJECTS);
        assert_eq!(
            bounded_label(&mut seen, "team-a", 2),
            "team-a",
            "a labelled project keeps its label"
        );
        assert_eq!(seen.len(), 2);
    }
}
