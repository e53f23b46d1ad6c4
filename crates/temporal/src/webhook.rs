//! Webhook delivery helpers: the SSRF guard and the HMAC signature.

use std::net::IpAddr;

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The header that carries `sha256=<hex HMAC-SHA256 of the body>`.
pub const SIGNATURE_HEADER: &str = "X-Signature";

/// Addresses a webhook may not reach unless the configuration allows it:
/// loopback, private, link-local (cloud metadata lives there), unspecified,
/// multicast, carrier-grade NAT, and their IPv6 counterparts.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link local
        }
    }
}

/// Resolves the URL's host and refuses internal targets (unless allowed).
/// The check and the connection resolve separately, so a hostile DNS server
/// could still rebind in between; operators who need more put an egress
/// proxy in front.
pub async fn check_target(url: &url::Url, allow_internal: bool) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "webhook URL scheme `{}` is not http(s)",
            url.scheme()
        ));
    }
    if allow_internal {
        return Ok(());
    }
    let host = url.host_str().ok_or("webhook URL has no host")?;
    let port = url.port_or_known_default().unwrap_or(443);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| format!("cannot resolve webhook host `{host}`: {e}"))?
            .map(|a| a.ip())
            .collect(),
    };
    if let Some(ip) = addresses.into_iter().find(|ip| is_internal(*ip)) {
        return Err(format!(
            "webhook target {host} resolves to internal address {ip}; refused (set ACP_WEBHOOK_ALLOW_INTERNAL=true to allow)"
        ));
    }
    Ok(())
}

/// `request` with the signature of `body` when `secret_ref` names a secret,
/// read from the worker's environment; a name that is not set there is an
/// error naming it (a failure for good: another attempt will not set it).
pub fn signed(
    request: reqwest::RequestBuilder,
    secret_ref: Option<&str>,
    body: &[u8],
) -> Result<reqwest::RequestBuilder, String> {
    let Some(name) = secret_ref else {
        return Ok(request);
    };
    let secret = std::env::var(name)
        .map_err(|_| format!("secret_ref {name} is not set in the worker's environment"))?;
    Ok(request.header(SIGNATURE_HEADER, sign(secret.as_bytes(), body)))
}

/// `sha256=` + hex HMAC-SHA256 of `body` under `secret`.
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn signature_matches_a_known_vector() {
        // RFC 4231 test case 2.
        assert_eq!(
            sign(b"Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[tokio::test]
    async fn loopback_refused_unless_allowed() {
        let url = url::Url::parse("http://127.0.0.1:9/hook").unwrap();
        assert!(check_target(&url, false).await.is_err());
        assert!(check_target(&url, true).await.is_ok());
        let localhost = url::Url::parse("http://localhost:9/hook").unwrap();
        assert!(check_target(&localhost, false).await.is_err());
    }
}
