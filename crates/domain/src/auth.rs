//! API keys: scopes, tokens and their verification. Pure; storage is in
//! `store::keys`, enforcement in `api::auth`.
//!
//! A token is `acp_{key id, 32 hex}_{secret, 64 hex}`. Only the SHA-256 of the
//! secret is stored. The id in the token makes the lookup a primary-key read,
//! and the secret's hash is compared in constant time.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use utoipa::ToSchema;
use uuid::Uuid;

/// A key as listed: never its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: Uuid,
    pub name: String,
    pub scope: Scope,
    /// The project the key acts in; `None` for an `operator` key.
    pub project: Option<crate::project::ProjectId>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// Why a presented token does not authenticate.
#[derive(Debug, PartialEq, Eq)]
pub enum Rejection {
    Malformed,
    UnknownKey,
    Revoked,
    WrongSecret,
}

/// What a key may do. `read`: every GET under `/v1`; `write`: `read` plus
/// definitions, trigger, pause, resume and backfill; `events`: `POST
/// /v1/events` only; `admin`: everything in its project, including its
/// keys; `operator`: everything, including projects, and belongs to no
/// project (the only scope that does not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Read,
    Write,
    Events,
    Admin,
    Operator,
}

impl Scope {
    pub const ALL: [Scope; 5] = [
        Scope::Read,
        Scope::Write,
        Scope::Events,
        Scope::Admin,
        Scope::Operator,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Events => "events",
            Scope::Admin => "admin",
            Scope::Operator => "operator",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether a key with this scope may call a route that needs `needed`.
    pub fn grants(self, needed: Scope) -> bool {
        match self {
            Scope::Operator => true,
            Scope::Admin => needed != Scope::Operator,
            Scope::Write => matches!(needed, Scope::Write | Scope::Read),
            Scope::Read | Scope::Events => self == needed,
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

const PREFIX: &str = "acp_";

/// A freshly minted token: shown once, then only its hash exists.
pub struct NewToken {
    pub key_id: Uuid,
    pub token: String,
    pub secret_sha256: [u8; 32],
}

/// Mints a token for a new key from the operating system's random source.
pub fn mint() -> anyhow::Result<NewToken> {
    let mut secret = [0u8; 32];
    getrandom::getrandom(&mut secret)
        .map_err(|e| anyhow::anyhow!("no random source for a key: {e}"))?;
    let secret = hex::encode(secret);
    let key_id = Uuid::new_v4();
    Ok(NewToken {
        key_id,
        token: format!("{PREFIX}{}_{secret}", key_id.simple()),
        secret_sha256: digest(&secret),
    })
}

/// A presented token split into the key it names and its secret. `None` when
/// it is not shaped like one of ours.
pub fn parse(token: &str) -> Option<(Uuid, &str)> {
    let rest = token.strip_prefix(PREFIX)?;
    let (id, secret) = rest.split_once('_')?;
    if id.len() != 32 || secret.len() != 64 || !secret.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some((Uuid::try_parse(id).ok()?, secret))
}

fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// Whether `secret` hashes to `stored`, in time independent of where they differ.
pub fn verify(secret: &str, stored: &[u8]) -> bool {
    digest(secret).ct_eq(stored).into()
}

/// What a key is that never changes once it exists: its scope, its project
/// and the hash of its secret. A key can only be revoked, so these may be
/// kept in memory; whether the key is still live may not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFacts {
    pub scope: Scope,
    pub secret_sha256: [u8; 32],
    /// The key's project; `None` for an `operator` key.
    pub project: Option<crate::project::ProjectId>,
}

/// A request's key, verified against [`KeyFacts`] held in memory, whose
/// liveness (not revoked) is still to be confirmed by PostgreSQL. The
/// statement that serves the request confirms it in the same snapshot it
/// reads or writes in, so a revocation refuses the very next request on
/// every replica without a round trip of its own; a path that cannot fold
/// the check in asks `KeyStore::confirm` (in the store) before acting.
#[derive(Debug, Clone)]
pub struct UnconfirmedKey {
    id: Uuid,
    confirmed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl UnconfirmedKey {
    pub fn new(id: Uuid) -> Self {
        Self {
            id,
            confirmed: Default::default(),
        }
    }

    pub fn id(&self) -> Uuid {
        self.id
    }

    /// PostgreSQL said the key is live, in the request's own statement.
    pub fn confirm(&self) {
        self.confirmed
            .store(true, std::sync::atomic::Ordering::Release);
    }

    pub fn is_confirmed(&self) -> bool {
        self.confirmed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The key still to check, if any: `None` once confirmed.
    pub fn pending(key: Option<&Self>) -> Option<Uuid> {
        key.filter(|k| !k.is_confirmed()).map(Self::id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_token_parses_and_verifies() {
        let minted = mint().expect("mint");
        let (id, secret) = parse(&minted.token).expect("parse");
        assert_eq!(id, minted.key_id);
        assert!(verify(secret, &minted.secret_sha256));
        assert!(!verify(&"0".repeat(64), &minted.secret_sha256));
        assert!(!verify(secret, &[0u8; 32]));
        assert!(!verify(secret, b"short"));
    }

    #[test]
    fn tokens_are_distinct() {
        let a = mint().expect("mint");
        let b = mint().expect("mint");
        assert_ne!(a.token, b.token);
        assert_ne!(a.secret_sha256, b.secret_sha256);
    }

    #[test]
    fn malformed_tokens_do_not_parse() {
        let good = mint().expect("mint").token;
        for bad in [
            "",
            "acp_",
            "Bearer x",
            &good[1..],
            &good[..good.len() - 1],
            &good.replace("acp_", "acq_"),
            &format!("{good}0"),
            &format!("acp_{}_{}", "z".repeat(32), "0".repeat(64)),
            &format!("acp_{}_{}", "0".repeat(32), "g".repeat(64)),
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn scope_lattice() {
        use Scope::*;
        let granted = |k: Scope| {
            Scope::ALL
                .into_iter()
                .filter(|n| k.grants(*n))
                .collect::<Vec<_>>()
        };
        assert_eq!(granted(Read), vec![Read]);
        assert_eq!(granted(Write), vec![Read, Write]);
        assert_eq!(granted(Events), vec![Events]);
        assert_eq!(granted(Admin), vec![Read, Write, Events, Admin]);
        assert_eq!(granted(Operator), Scope::ALL.to_vec());
        for s in Scope::ALL {
            assert_eq!(Scope::parse(s.as_str()), Some(s));
        }
    }
}
