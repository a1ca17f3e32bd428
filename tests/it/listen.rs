//! Listening on a unix socket: owner-only permissions, the full API over it, and the socket's
//! path as the `:authority` (what grpc C-core and grpc-java send), written frame by frame the
//! way those clients do, since no Rust client can send an authority `http` refuses.

use std::os::unix::fs::PermissionsExt;

use loona_hpack::{Decoder, Encoder};
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use toolgate::config::Config;
use toolgate::listener::Listener;
use toolgate::proto::gate_client::GateClient;
use toolgate::proto::{DecideResponse, Outcome};

use crate::helpers::{request, spawn_app, toolgate_async};

type Server = tokio::task::JoinHandle<Result<(), toolgate::server::ServerError>>;

/// A server on a unix socket in `dir`, with its stop signal.
async fn unix_server(
    dir: &std::path::Path,
) -> (std::path::PathBuf, tokio::sync::oneshot::Sender<()>, Server) {
    let socket = dir.join("toolgate.sock");
    let config = Config { db: dir.join("trail.db"), ..Config::default() };
    let listener = Listener::bind(&format!("unix:{}", socket.display()), config.unix_socket_mode)
        .await
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(toolgate::server::run(config, listener, None, async {
        let _ = stopped.await;
    }));
    (socket, stop, server)
}

#[tokio::test]
async fn a_unix_socket_is_owner_only_and_serves_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let (socket, stop, server) = unix_server(dir.path()).await;

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

/// What a Decide written frame by frame got back.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    /// The gRPC status and, with status 0, the decision's outcome.
    Grpc { status: String, outcome: Option<Outcome> },
    /// The stream was reset with this HTTP/2 error code.
    Reset(u32),
}

fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// A Decide for `read` on stream 1 with `:authority` `authority`, as raw HTTP/2.
async fn decide_raw(mut stream: impl AsyncRead + AsyncWrite + Unpin, authority: &str) -> Answer {
    let headers: [(&[u8], &[u8]); 6] = [
        (b":method", b"POST"),
        (b":scheme", b"http"),
        (b":path", b"/toolgate.v1.Gate/Decide"),
        (b":authority", authority.as_bytes()),
        (b"content-type", b"application/grpc"),
        (b"te", b"trailers"),
    ];
    let block = Encoder::new().encode(headers);
    let message = request("read").encode_to_vec();
    let mut grpc = vec![0];
    grpc.extend_from_slice(&(message.len() as u32).to_be_bytes());
    grpc.extend_from_slice(&message);
    let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    frame(&mut bytes, 0x4, 0, 0, &[]); // SETTINGS
    frame(&mut bytes, 0x1, 0x4, 1, &block); // HEADERS, END_HEADERS
    frame(&mut bytes, 0x0, 0x1, 1, &grpc); // DATA, END_STREAM
    stream.write_all(&bytes).await.unwrap();

    let mut decoder = Decoder::new();
    let mut outcome = None;
    loop {
        let mut header = [0; 9];
        stream.read_exact(&mut header).await.unwrap();
        let length = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
        let mut payload = vec![0; length];
        stream.read_exact(&mut payload).await.unwrap();
        let (kind, flags) = (header[3], header[4]);
        let on_stream_1 = u32::from_be_bytes([header[5], header[6], header[7], header[8]]) == 1;
        match kind {
            0x4 if flags & 0x1 == 0 => {
                let mut ack = Vec::new();
                frame(&mut ack, 0x4, 0x1, 0, &[]);
                stream.write_all(&ack).await.unwrap();
            }
            0x3 if on_stream_1 => {
                return Answer::Reset(u32::from_be_bytes(payload[..4].try_into().unwrap()));
            }
            0x0 if on_stream_1 => {
                outcome = Some(DecideResponse::decode(&payload[5..]).unwrap().outcome());
            }
            0x1 if on_stream_1 => {
                let mut status = None;
                decoder
                    .decode_with_cb(&payload, |name, value| {
                        if &*name == b"grpc-status" {
                            status = Some(String::from_utf8_lossy(&value).into_owned());
                        }
                    })
                    .unwrap();
                if flags & 0x1 != 0 {
                    return Answer::Grpc { status: status.unwrap_or_default(), outcome };
                }
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn the_sockets_path_as_authority_is_served_on_the_unix_socket_only() {
    let dir = tempfile::tempdir().unwrap();
    let (socket, stop, server) = unix_server(dir.path()).await;
    let tcp = spawn_app().await;
    let tcp_addr = tcp.url.trim_start_matches("http://").to_owned();
    let mut connected = None;
    for _ in 0..200 {
        match tokio::net::UnixStream::connect(&socket).await {
            Ok(stream) => {
                connected = Some(stream);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
        }
    }
    drop(connected);
    // The server records its policy before it serves: give it the time a gRPC client would.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;

    // grpc C-core's form (grpcio, Ruby, C++), and grpc-java's.
    let mut answers = Vec::new();
    for authority in ["run%2Ftoolgate%2Ftg.sock", "/run/toolgate/tg.sock", "localhost"] {
        let unix = tokio::net::UnixStream::connect(&socket).await.unwrap();
        let tcp = tokio::net::TcpStream::connect(&tcp_addr).await.unwrap();
        answers.push((decide_raw(unix, authority).await, decide_raw(tcp, authority).await));
    }
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();

    let allowed = Answer::Grpc { status: "0".into(), outcome: Some(Outcome::Allow) };
    // PROTOCOL_ERROR (1): TCP keeps h2's strict check on the authority.
    assert_eq!(answers[0], (allowed.clone(), Answer::Reset(1)));
    assert_eq!(answers[1], (allowed.clone(), Answer::Reset(1)));
    assert_eq!(answers[2], (allowed.clone(), allowed));
}

#[tokio::test]
async fn a_second_writer_on_a_trail_refuses_to_start_and_the_first_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("trail.db");
    let first = crate::faults::Proc::start(&db, "").await;
    let db_arg = db.display().to_string();

    let second = toolgate_async(&["serve", "--db", &db_arg, "--listen", "127.0.0.1:0"]).await;
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("the trail `{db_arg}` is written by pid")), "{stderr}");
    // The first keeps deciding, and a reader beside it still reads.
    let mut gate = first.gate().await;
    let decided = gate.decide(request("read")).await.unwrap().into_inner();
    assert!(decided.seq > 0);
    let verified = toolgate_async(&["verify", "--db", &db_arg]).await;
    assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stderr));
}

#[tokio::test]
async fn a_unix_socket_path_that_is_a_regular_file_is_refused_not_removed() {
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("precious.db");
    std::fs::write(&precious, b"a trail given as the socket's path by mistake").unwrap();
    let db = dir.path().join("trail.db").display().to_string();
    let listen = format!("unix:{}", precious.display());

    let out = toolgate_async(&["serve", "--db", &db, "--listen", &listen]).await;

    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("exists and is not a socket"), "{stderr}");
    assert_eq!(std::fs::read(&precious).unwrap(), b"a trail given as the socket's path by mistake");
}
