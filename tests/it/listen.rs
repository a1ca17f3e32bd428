//! Listening on a unix socket: owner-only permissions, and the full API over it.

use std::os::unix::fs::PermissionsExt;

use toolgate::config::Config;
use toolgate::listener::Listener;
use toolgate::proto::gate_client::GateClient;

use crate::helpers::request;

#[tokio::test]
async fn a_unix_socket_is_owner_only_and_serves_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("toolgate.sock");
    let config = Config { db: dir.path().join("trail.db"), ..Config::default() };
    let listener = Listener::bind(&format!("unix:{}", socket.display()), config.unix_socket_mode)
        .await
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(toolgate::server::run(config, listener, None, async {
        let _ = stopped.await;
    }));

    let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
    let channel = tonic::transport::Endpoint::from_shared(format!("unix:{}", socket.display()))
        .unwrap()
        .connect_lazy();
    let mut gate = GateClient::new(channel);
    let mut answer = None;
    for _ in 0..200 {
        // The server records its policy before it serves; retry until it does.
        if let Ok(a) = gate.decide(request("read")).await {
            answer = Some(a.into_inner());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();

    assert_eq!(mode, 0o600);
    let answer = answer.expect("answered over the socket");
    assert_eq!(answer.outcome(), toolgate::proto::Outcome::Allow);
}
