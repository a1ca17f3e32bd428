//! Certificates rotated on disk, the client CA changed and revocation lists reloaded, all
//! without a restart (at SIGHUP or on the interval).

use super::*;

/// Overwrites the server's certificate and key with a new pair for the same names, issued by
/// `ca`.
fn rotate(pki: &Pki, tls: &TlsConfig, ca: &Ca, cn: &str) {
    let (cert, key) = ca.issue(pki.dir.path(), cn, &["localhost", "127.0.0.1"]);
    std::fs::copy(key, tls.key_file.as_ref().unwrap()).unwrap();
    std::fs::copy(cert, tls.cert_file.as_ref().unwrap()).unwrap();
}

/// Decides over new connections from `endpoint` until the call is `admitted` (or refused, when
/// not) — once a reload is due; the last answer, after ten seconds at most.
async fn until_reloaded(endpoint: impl Fn() -> Endpoint, admitted: bool) -> Result<(), String> {
    let reloaded = async || {
        let answer = decide(endpoint(), request("read")).await;
        if answer.is_ok() == admitted { Ok(answer) } else { Err(answer) }
    };
    let ms = Duration::from_millis;
    eventually(ms(10_000), ms(100), reloaded).await.unwrap_or_else(|answer| answer)
}

#[tokio::test]
async fn a_rotated_certificate_is_served_without_a_restart() {
    let pki = Pki::new();
    let mut tls = pki.server_tls(false);
    tls.reload_interval_ms = 100;
    let url = serve(config(&pki, tls.clone())).await;
    assert_eq!(decide(endpoint(&url, &pki.server_ca.pem, None), request("read")).await, Ok(()));
    let open = endpoint(&url, &pki.server_ca.pem, None).connect().await.unwrap();
    let rotated_ca = Ca::new(pki.dir.path(), "rotated-ca");

    rotate(&pki, &tls, &rotated_ca, "toolgate-2");
    let rotated = until_reloaded(|| endpoint(&url, &rotated_ca.pem, None), true).await;
    let old_trust = decide(endpoint(&url, &pki.server_ca.pem, None), request("read")).await;
    let open_still = GateClient::new(open).decide(request("read")).await;
    // A half-written or broken file keeps the certificate in force; the next good one is
    // taken.
    std::fs::write(tls.cert_file.as_ref().unwrap(), "junk").unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let despite_junk = decide(endpoint(&url, &rotated_ca.pem, None), request("read")).await;
    let third_ca = Ca::new(pki.dir.path(), "third-ca");
    rotate(&pki, &tls, &third_ca, "toolgate-3");
    let third = until_reloaded(|| endpoint(&url, &third_ca.pem, None), true).await;

    assert_eq!(rotated, Ok(()), "new connections get the rotated certificate");
    assert!(old_trust.as_ref().is_err_and(|e| e.contains("UnknownIssuer")), "{old_trust:?}");
    assert!(open_still.is_ok(), "an open connection keeps its session: {open_still:?}");
    assert_eq!(despite_junk, Ok(()), "a broken file keeps the certificate in force");
    assert_eq!(third, Ok(()), "reloads go on after a broken file");
}

#[tokio::test]
async fn sighup_reloads_the_certificate() {
    let pki = Pki::new();
    let tls = pki.server_tls(false);
    let config = pki.dir.path().join("toolgate.toml");
    let (cert, key) = (tls.cert_file.clone().unwrap(), tls.key_file.clone().unwrap());
    // No periodic reload: only the signal can bring the new certificate in.
    let toml = format!(
        "db = {:?}\n[tls]\ncert_file = {cert:?}\nkey_file = {key:?}\nreload_interval_ms = 0\n",
        pki.dir.path().join("trail.db"),
    );
    std::fs::write(&config, toml).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = std::process::Command::new(assert_cmd::cargo::cargo_bin!("toolgate"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--config"])
        .arg(&config)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("https://127.0.0.1:{port}");
    let pid = server.id().to_string();
    let started = until_reloaded(|| endpoint(&url, &pki.server_ca.pem, None), true).await;
    let rotated_ca = Ca::new(pki.dir.path(), "rotated-ca");

    rotate(&pki, &tls, &rotated_ca, "toolgate-2");
    let before_signal = decide(endpoint(&url, &rotated_ca.pem, None), request("read")).await;
    std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap();
    let after_signal = until_reloaded(|| endpoint(&url, &rotated_ca.pem, None), true).await;
    std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    // Waited for off the runtime, which must stay free to close the client connections that
    // the server's graceful shutdown waits for.
    let status = tokio::task::spawn_blocking(move || server.wait().unwrap()).await.unwrap();

    assert_eq!(started, Ok(()));
    assert!(before_signal.is_err(), "reloaded before SIGHUP: {before_signal:?}");
    assert_eq!(after_signal, Ok(()));
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn a_rotated_client_ca_decides_who_may_connect() {
    let pki = Pki::new();
    let mut tls = pki.server_tls(true);
    tls.reload_interval_ms = 100;
    let url = serve(config(&pki, tls.clone())).await;
    let ca = &pki.server_ca.pem;
    let old_client = pki.client("agent-7", &[]);
    let new_client = identity(pki.stranger_ca.issue(pki.dir.path(), "agent-8", &[]));
    assert_eq!(decide(endpoint(&url, ca, Some(old_client.clone())), request("read")).await, Ok(()));

    std::fs::copy(&pki.stranger_ca.pem, tls.client_ca_file.as_ref().unwrap()).unwrap();
    let admitted = until_reloaded(|| endpoint(&url, ca, Some(new_client.clone())), true).await;
    let old_refused = decide(endpoint(&url, ca, Some(old_client)), request("read")).await;

    assert_eq!(admitted, Ok(()), "the new CA's certificates are admitted");
    assert!(old_refused.as_ref().is_err_and(|e| e.contains("UnknownCA")), "{old_refused:?}");
}

/// Mutual TLS reloaded every 100 ms, with a list from the client CA revoking `agent-9` in
/// `crl.pem`.
fn revoking_tls(pki: &Pki) -> TlsConfig {
    let crl = pki.client_ca.revocation_list(pki.dir.path(), "crl.pem", &["agent-9"], 2099);
    TlsConfig { client_crl_file: Some(crl), reload_interval_ms: 100, ..pki.server_tls(true) }
}

#[tokio::test]
async fn revoked_client_certificates_are_refused_and_revocations_reload() {
    let pki = Pki::new();
    let dir = pki.dir.path();
    let tls = revoking_tls(&pki);
    // The stranger CA issues client certificates too, but has no list in the file yet.
    let mut cas = std::fs::read(&pki.client_ca.pem).unwrap();
    cas.extend(std::fs::read(&pki.stranger_ca.pem).unwrap());
    std::fs::write(tls.client_ca_file.as_ref().unwrap(), cas).unwrap();
    let url = serve(config(&pki, tls.clone())).await;
    let ca = &pki.server_ca.pem;
    let (kept, revoked) = (pki.client("agent-7", &[]), pki.client("agent-9", &[]));
    let unlisted = identity(pki.stranger_ca.issue(dir, "agent-11", &[]));

    let kept_before = decide(endpoint(&url, ca, Some(kept.clone())), request("read")).await;
    let refused = decide(endpoint(&url, ca, Some(revoked)), request("read")).await;
    let unknown = decide(endpoint(&url, ca, Some(unlisted.clone())), request("read")).await;
    // New lists, in force at the next reload: agent-7 revoked too, and one for the stranger CA.
    let mut lists =
        std::fs::read(pki.client_ca.revocation_list(dir, "a.pem", &["agent-9", "agent-7"], 2099))
            .unwrap();
    lists.extend(std::fs::read(pki.stranger_ca.revocation_list(dir, "b.pem", &[], 2099)).unwrap());
    std::fs::write(tls.client_crl_file.as_ref().unwrap(), lists).unwrap();
    let kept_after = until_reloaded(|| endpoint(&url, ca, Some(kept.clone())), false).await;
    let listed = decide(endpoint(&url, ca, Some(unlisted)), request("read")).await;

    assert_eq!(kept_before, Ok(()));
    assert!(refused.as_ref().is_err_and(|e| e.contains("CertificateRevoked")), "{refused:?}");
    assert!(kept_after.as_ref().is_err_and(|e| e.contains("CertificateRevoked")), "{kept_after:?}");
    // Refused while its issuer had no list (rustls answers `unknown_ca`), admitted with one.
    assert!(unknown.as_ref().is_err_and(|e| e.contains("UnknownCA")), "{unknown:?}");
    assert_eq!(listed, Ok(()));
}

#[tokio::test]
async fn an_out_of_date_revocation_list_refuses_every_client_certificate() {
    let pki = Pki::new();
    let dir = pki.dir.path();
    let url = serve(config(&pki, revoking_tls(&pki))).await;
    let kept = || endpoint(&url, &pki.server_ca.pem, Some(pki.client("agent-7", &[])));

    let while_current = decide(kept(), request("read")).await;
    // The same list, but its next update was due in 2021: revocations since are unknown.
    pki.client_ca.revocation_list(dir, "crl.pem", &["agent-9"], 2021);
    let once_stale = until_reloaded(kept, false).await;

    assert_eq!(while_current, Ok(()));
    // rustls answers an expired list with the unknown_ca alert.
    assert!(once_stale.as_ref().is_err_and(|e| e.contains("UnknownCA")), "{once_stale:?}");
}
