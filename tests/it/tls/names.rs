//! Client certificates mapped to roles and identities: by the kind of each name, with a
//! token standing in when certificates are optional, and SPIFFE IDs by trust domain and path.

use super::*;

#[tokio::test]
async fn client_certificates_map_to_roles_and_identities() {
    let pki = Pki::new();
    let mut config = config(&pki, pki.server_tls(true));
    config.auth = certificates();
    let db = config.db.clone();
    let url = serve(config).await;
    let ca = &pki.server_ca.pem;
    let agent = pki.client("agent-7", &["agent-7.team-a.svc"]);
    let auditor = pki.client("auditor", &["uri:spiffe://cluster/ns/audit/sa/auditor"]);
    let stranger = pki.client("stranger", &[]);

    let own = decide(endpoint(&url, ca, Some(agent.clone())), as_actor("team-a/coder")).await;
    let impersonated = decide(endpoint(&url, ca, Some(agent.clone())), as_actor("team-b/x")).await;
    let unmapped = decide(endpoint(&url, ca, Some(stranger)), as_actor("team-a/coder")).await;
    let audit = |identity: Identity| async {
        let channel: Channel = endpoint(&url, ca, Some(identity)).connect().await.unwrap();
        AuditClient::new(channel)
            .query(QueryRequest::default())
            .await
            .map(|_| ())
            .map_err(|s| s.code())
    };
    let agent_reads = audit(agent).await;
    let auditor_reads = audit(auditor.clone()).await;
    let auditor_decides = decide(endpoint(&url, ca, Some(auditor)), as_actor("team-a/coder")).await;

    assert_eq!(own, Ok(()));
    assert!(
        impersonated.as_ref().is_err_and(|e| e.starts_with("PermissionDenied")),
        "{impersonated:?}"
    );
    assert!(unmapped.as_ref().is_err_and(|e| e.contains("[[auth.certificates]]")), "{unmapped:?}");
    assert_eq!(agent_reads, Err(Code::PermissionDenied));
    assert_eq!(auditor_reads, Ok(()));
    assert!(auditor_decides.as_ref().is_err_and(|e| e.starts_with("PermissionDenied")));
    let refused: Vec<_> = rows(&db)
        .into_iter()
        .filter(|r| r.kind == "access_denied")
        .map(|r| r.actor_id.unwrap_or_default())
        .collect();
    for caller in ["cert:agent-7", "cert:stranger", "spiffe://cluster/ns/audit/sa/auditor"] {
        assert!(refused.iter().any(|id| id == caller), "{caller} not in {refused:?}");
    }
}

/// Each name is matched only as what it is: a SPIFFE ID only as an SVID's one URI name, a
/// common name only as the subject's. Every certificate below is signed by the trusted CA and
/// tries to pass for the auditor; none reads the trail.
#[tokio::test]
async fn a_name_passes_for_another_kind_of_name_never() {
    const AUDITOR_ID: &str = "spiffe://cluster/ns/audit/sa/auditor";
    let pki = Pki::new();
    let mut config = config(&pki, pki.server_tls(true));
    config.auth = toml::from_str(&format!(
        "[[certificates]]\nsubject = \"auditor-cn\"\nroles = [\"auditor\"]\n\
         [[spiffe]]\nid = \"{AUDITOR_ID}\"\nroles = [\"auditor\"]\n"
    ))
    .unwrap();
    let url = serve(config).await;
    let ca = &pki.server_ca.pem;
    let dir = pki.dir.path();
    let issue = |stem: &str, cn: &str, sans: &[&str]| {
        identity(pki.client_ca.issue_as(dir, stem, cn, sans, |_| {}))
    };
    let signs_certificates = identity(pki.client_ca.issue_as(
        dir,
        "signer",
        "signer",
        &[&format!("uri:{AUDITOR_ID}")],
        |params| {
            params.key_usages =
                vec![rcgen::KeyUsagePurpose::DigitalSignature, rcgen::KeyUsagePurpose::KeyCertSign];
        },
    ));
    let reads = |identity: Identity| async {
        let channel: Channel = endpoint(&url, ca, Some(identity)).connect().await.unwrap();
        AuditClient::new(channel)
            .query(QueryRequest::default())
            .await
            .map(|_| ())
            .map_err(|s| s.code())
    };

    let attempts = [
        (
            "two URI names",
            issue("two-uris", "two-uris", &[&format!("uri:{AUDITOR_ID}"), "uri:https://x.example"]),
        ),
        ("a leaf that signs certificates", signs_certificates),
        ("a common name that is the SPIFFE ID", issue("cn-is-id", AUDITOR_ID, &[])),
        ("a DNS name equal to the common name", issue("dns", "mallory-d", &["auditor-cn"])),
        (
            "an e-mail name equal to the common name",
            issue("email", "mallory-e", &["email:auditor-cn"]),
        ),
    ];
    for (what, identity) in attempts {
        assert_eq!(reads(identity).await, Err(Code::PermissionDenied), "{what}");
    }
    // The names as they are meant: the common name, and a proper SVID.
    assert_eq!(reads(issue("auditor-cn", "auditor-cn", &[])).await, Ok(()));
    assert_eq!(reads(issue("svid", "svid", &[&format!("uri:{AUDITOR_ID}")])).await, Ok(()));
    // And a SPIFFE ID written as a certificate's subject is refused at start.
    let refused = toolgate::auth::Auth::new(
        &toml::from_str(&format!("[[certificates]]\nsubject = \"{AUDITOR_ID}\"\nroles = []\n"))
            .unwrap(),
    );
    assert!(refused.is_err_and(|e| e.to_string().contains("[[auth.spiffe]]")));
}

#[tokio::test]
async fn with_optional_client_certificates_a_token_stands_in() {
    let pki = Pki::new();
    let mut tls = pki.server_tls(true);
    tls.client_auth_optional = true;
    let mut config = config(&pki, tls);
    config.auth = certificates();
    let url = serve(config).await;
    let ca = &pki.server_ca.pem;
    let with_token = |secret: &'static str| {
        let mut req = tonic::Request::new(as_actor("ci/build"));
        req.metadata_mut().insert("authorization", format!("Bearer {secret}").parse().unwrap());
        req
    };

    let anonymous = decide(endpoint(&url, ca, None), as_actor("ci/build")).await;
    let channel = endpoint(&url, ca, None).connect().await.unwrap();
    let tokened = GateClient::new(channel.clone()).decide(with_token("ci-secret-0b7e")).await;
    let wrong = GateClient::new(channel).decide(with_token("not-the-secret")).await;

    assert!(
        anonymous.as_ref().is_err_and(|e| e.contains("no bearer token and no client certificate")),
        "{anonymous:?}"
    );
    assert!(tokened.is_ok(), "{tokened:?}");
    assert_eq!(wrong.unwrap_err().code(), Code::Unauthenticated);
}

/// X.509 SVIDs as a SPIRE agent hands them out: a client certificate whose one URI name is a
/// SPIFFE ID, from the trust domain's CA (here the test's client CA).
#[tokio::test]
async fn spiffe_ids_map_by_trust_domain_and_path_and_name_the_caller_on_the_trail() {
    let pki = Pki::new();
    let mut config = config(&pki, pki.server_tls(true));
    config.auth = toml::from_str(
        r#"
        [[spiffe]]
        id = "spiffe://example.org/agents/*"
        roles = ["agent"]

        [[spiffe]]
        id = "spiffe://example.org/agents/billing/*"
        roles = ["agent"]
        actors = ["billing/*"]
        "#,
    )
    .unwrap();
    let db = config.db.clone();
    let url = serve(config).await;
    let ca = &pki.server_ca.pem;
    let svid = |name: &str, uris: &[&str]| {
        let sans: Vec<String> = uris.iter().map(|u| format!("uri:{u}")).collect();
        pki.client(name, &sans.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let search = svid("search", &["spiffe://example.org/agents/search"]);
    let billing = svid("billing", &["spiffe://example.org/agents/billing/eu"]);
    let foreign = svid("foreign", &["spiffe://other.org/agents/search"]);
    let smith = svid("smith", &["spiffe://example.org/agentsmith"]);
    let two = svid("two", &["spiffe://example.org/agents/x", "spiffe://example.org/agents/y"]);
    let id = |s: &str| s.to_owned();
    let search_id = id("spiffe://example.org/agents/search");

    let own = decide(endpoint(&url, ca, Some(search.clone())), as_actor(&search_id)).await;
    let other = decide(endpoint(&url, ca, Some(search)), as_actor("billing/eu")).await;
    let billing_own =
        decide(endpoint(&url, ca, Some(billing.clone())), as_actor("billing/eu")).await;
    let billing_as_id = decide(
        endpoint(&url, ca, Some(billing)),
        as_actor("spiffe://example.org/agents/billing/eu"),
    )
    .await;
    let foreign = decide(endpoint(&url, ca, Some(foreign)), as_actor(&search_id)).await;
    let smith =
        decide(endpoint(&url, ca, Some(smith)), as_actor("spiffe://example.org/agentsmith")).await;
    let two =
        decide(endpoint(&url, ca, Some(two)), as_actor("spiffe://example.org/agents/x")).await;

    assert_eq!(own, Ok(()));
    assert!(other.as_ref().is_err_and(|e| e.starts_with("PermissionDenied")), "{other:?}");
    assert_eq!(billing_own, Ok(()), "the longest entry, with its actors");
    assert!(billing_as_id.is_err(), "{billing_as_id:?}");
    for (refused, why) in [
        (&foreign, "not in [[auth.spiffe]]"),
        (&smith, "not in [[auth.spiffe]]"),
        (&two, "exactly one URI name"),
    ] {
        assert!(
            refused.as_ref().is_err_and(|e| e.starts_with("PermissionDenied") && e.contains(why)),
            "{refused:?}"
        );
    }
    let rows = rows(&db);
    let decided: Vec<_> = rows
        .iter()
        .filter(|r| r.kind == "decision")
        .map(|r| (r.actor_id.clone().unwrap_or_default(), r.request.clone().unwrap_or_default()))
        .collect();
    assert!(
        decided.contains(&(
            search_id.clone(),
            r#"{"identity":"spiffe://example.org/agents/search"}"#.to_owned()
        )),
        "{decided:?}"
    );
    assert!(
        decided.contains(&(
            "billing/eu".to_owned(),
            r#"{"identity":"spiffe://example.org/agents/billing/eu"}"#.to_owned()
        )),
        "{decided:?}"
    );
}
