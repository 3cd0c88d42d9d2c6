//! The page for another device (`serve --web-remote ADDR`) on this machine's own non-loopback
//! address: HTTPS only (plain HTTP gets a 400 that says where the page is, and no cookie), its
//! certificate's SHA-256 in `web.json` and on stderr with a warning, a phone-sized Chromium
//! approving over TLS with a `Secure` cookie, and the agent's Bash refused there as on loopback.

use std::io::{Read as _, Write as _};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};

use planhost_core::{ApprovalStatus, PermissionMode, Role};
use planhost_protocol::{ConfigureParams, TurnOutcome, methods};
use serde_json::{Value, json};

use crate::browser::{Browser, browser_scenario};
use crate::http::{Visitor, approve_form, log_in};
use crate::support::{
    HostOptions, PLAN, WebHost, agent, approval_of, assert_resolved_by_the_page, open_session,
    params, pending_plan, run_bash,
};

/// This machine's address on its default route (no packet is sent: a UDP socket's `connect`
/// only picks the route), when it has one that is not loopback.
fn machine_address() -> Option<IpAddr> {
    let socket = UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("198.51.100.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

fn free_port(ip: IpAddr) -> u16 {
    std::net::TcpListener::bind((ip, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[test]
fn the_remote_page_is_https_only_and_a_phone_approves_over_tls() {
    let Some(ip) = machine_address() else {
        eprintln!("skipped: this machine has no non-loopback address for the remote page");
        return;
    };
    let (_slot, budget) = browser_scenario();
    let remote = SocketAddr::new(ip, free_port(ip));
    let host = WebHost::start_with(
        &budget,
        HostOptions {
            remote: Some(remote),
            ..HostOptions::default()
        },
    );
    let mut agent = agent(&host);
    let approval = pending_plan(&host, &mut agent, "Approve from the phone", PLAN);
    let id = approval.proposal_id.to_string();

    // web.json and stderr name it, with the certificate's fingerprint and a warning.
    let file: Value =
        serde_json::from_str(&fs_err::read_to_string(host.state_dir().join("web.json")).unwrap())
            .unwrap();
    let https = format!("https://{remote}/");
    assert_eq!(file["remote_url"], https, "{file}");
    let fingerprint = file["remote_fingerprint"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(fingerprint.len(), 32 * 3 - 1, "{file}");
    let stderr = host.stderr();
    assert!(
        stderr.contains("WARNING") && stderr.contains(&https) && stderr.contains(&fingerprint),
        "{stderr}"
    );
    assert!(
        !stderr.contains(&host.token),
        "the token is not on stderr: {stderr}"
    );

    // Plain HTTP on the remote port: 400, where the page is, and no cookie.
    let mut plain = TcpStream::connect(remote).expect("connect");
    // One write: the page answers from the first byte and closes.
    let request = format!(
        "GET /?token={} HTTP/1.1\r\nHost: {remote}\r\nConnection: close\r\n\r\n",
        host.token
    );
    plain.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    plain.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains(&https), "{answer}");
    assert!(
        !answer.to_ascii_lowercase().contains("set-cookie"),
        "{answer}"
    );

    // The agent's Bash, which can read the token, is refused on the remote page too.
    if which("curl") {
        let Visitor { csrf, .. } = log_in(&host, &host.token);
        let body = approve_form(&approval, &csrf, "auto");
        let working = open_session(&host, &mut agent);
        host.connect("e2e-person", &[Role::Approver])
            .call::<methods::SessionsConfigure>(ConfigureParams {
                permission_mode: Some(PermissionMode::Auto),
                ..params::configure(&working)
            });
        let script = format!(
            r#"token=$(grep -o '"token": *"[0-9a-f]*"' '{web_json}' | grep -o '[0-9a-f]\{{64\}}')
curl -sk -o - -w '\nstatus=%{{http_code}}\n' -H "Cookie: {cookie}=$token" -H 'Origin: https://{remote}' --data '{body}' 'https://{remote}/approvals/{id}'
"#,
            web_json = host.state_dir().join("web.json").display(),
            cookie = host.cookie_name(),
        );
        let script_path = host.workspace().join("approve-remote.sh");
        fs_err::write(&script_path, script).unwrap();
        let input = json!({ "command": format!("bash '{}'", script_path.display()) });
        let (turn, ran) = run_bash(&mut agent, &working, "bash-remote", &input);
        let text = serde_json::to_string(&ran).unwrap();
        assert!(text.contains("status=403"), "refused with 403: {text}");
        assert!(text.contains("ROLE_APPROVER_REFUSED"), "{text}");
        agent.call::<methods::TurnsEnd>(params::end(&working, &turn, TurnOutcome::Completed));
        assert_eq!(
            approval_of(&mut agent, &approval).status,
            ApprovalStatus::Pending
        );
    } else {
        eprintln!("no curl on this machine: the remote refusal of the agent's Bash is not tried");
    }

    // A phone-sized Chromium over TLS (the made certificate is not in its trust store, as on
    // a phone until the person accepts it): the token sets a Secure cookie, and Approve works.
    let browser = Browser::start(
        &host,
        "remote_phone",
        json!({
            "remoteUrl": https, "token": host.token, "approvalId": id,
            "allowHosts": [ip.to_string()],
        }),
    );
    let r = browser.result();
    assert_eq!(r["landed"], https, "{r:#}");
    assert_eq!(r["cookieSecure"], true, "{r:#}");
    assert_eq!(r["status"], "approved", "{r:#}");
    let approved = approval_of(&mut agent, &approval);
    assert_eq!(approved.status, ApprovalStatus::Approved, "{approved:?}");
    assert_resolved_by_the_page(approved.resolved_by.as_ref(), &approved);
}

fn which(tool: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}
