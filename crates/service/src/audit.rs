//! The audit log's reading side (`GET /v1/audit`). Entries are appended by
//! the writes themselves, in their own transactions (see `acp_store::audit`).

use acp_domain::audit::{AuditEntry, AuditFilter};
use acp_domain::project::ProjectId;
use acp_store::AuditStore;

use super::Result;

#[derive(Clone)]
pub struct AuditLog {
    store: AuditStore,
}

impl AuditLog {
    pub fn new(store: AuditStore) -> Self {
        Self { store }
    }

    /// The project's entries matching `filter`, newest first, below the
    /// sequence number `before` (the last one of the previous page).
    pub async fn list(
        &self,
        project: &ProjectId,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>> {
        Ok(self.store.list(project, filter, before, limit).await?)
    }
}
