//! Which process holds the client end of a loopback TCP connection: the web page's answer to
//! "who is asking" (the unix socket has `SO_PEERCRED`; TCP has nothing like it).
//!
//! The client's socket is the row of `/proc/net/tcp` (or `tcp6`) whose local address is the
//! client's and whose remote address is the server's; its inode names it, and the processes
//! that hold it have a `socket:[inode]` link among their `/proc/<pid>/fd/*`. Only sockets and
//! processes of this user are considered (a process of another user is no run of this host),
//! and the scan is bounded.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use fs_err as fs;

use super::procfs;

/// The most `/proc/<pid>/fd` entries one lookup reads, over all processes.
const MAX_FDS: usize = 1 << 18;
/// The most holders one lookup reports (a socket shared by more is shared on purpose).
const MAX_HOLDERS: usize = 64;

/// The processes of this user that hold the client end of the TCP connection from `client`
/// (the peer's address, as the server's `accept` gave it) to `server` (the listening address
/// the connection reached); empty when there is no such socket of this user (the connection
/// closed, it belongs to another user or another network namespace) or no process of this
/// user holds it. Sorted by pid.
pub fn tcp_peers(client: SocketAddr, server: SocketAddr) -> Vec<i32> {
    let uid = rustix::process::geteuid().as_raw();
    let (client, server) = (canonical(client), canonical(server));
    let Some(inode) = ["/proc/net/tcp", "/proc/net/tcp6"]
        .into_iter()
        .filter_map(|table| fs::read_to_string(table).ok())
        .find_map(|text| socket_inode(&text, client, server, uid))
    else {
        return Vec::new();
    };
    holders(&format!("socket:[{inode}]"), uid)
}

/// An IPv4-mapped IPv6 address as the IPv4 address it maps (a dual-stack socket's peers).
fn canonical(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), addr.port()),
            None => addr,
        },
        IpAddr::V4(_) => addr,
    }
}

/// The inode of the socket in one `/proc/net/tcp{,6}` table whose local address is `local` and
/// remote address `remote`, owned by `uid`; `None` when there is none (or its inode is 0: a
/// socket already gone).
fn socket_inode(table: &str, local: SocketAddr, remote: SocketAddr, uid: u32) -> Option<u64> {
    // "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode"
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_ascii_whitespace().take(10).collect();
        if fields.len() < 10 {
            return None;
        }
        let row_uid: u32 = fields[7].parse().ok()?;
        let inode: u64 = fields[9].parse().ok()?;
        (row_uid == uid
            && inode != 0
            && parse_addr(fields[1]).map(canonical) == Some(local)
            && parse_addr(fields[2]).map(canonical) == Some(remote))
        .then_some(inode)
    })
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6): the kernel prints the address as
/// 32-bit words in host byte order, the port as a number.
fn parse_addr(field: &str) -> Option<SocketAddr> {
    let (addr, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |hex: &str| u32::from_str_radix(hex, 16).ok().map(u32::to_ne_bytes);
    let ip = match addr.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(addr)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_exact_mut(4).enumerate() {
                chunk.copy_from_slice(&word(addr.get(i * 8..i * 8 + 8)?)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The processes of `uid` with an open file descriptor linking to `target`.
#[allow(
    clippy::disallowed_methods,
    reason = "a /proc scan: a failure is an answer (not this socket), never reported"
)]
fn holders(target: &str, uid: u32) -> Vec<i32> {
    let mut budget = MAX_FDS;
    let mut out = Vec::new();
    for st in procfs::all() {
        if budget == 0 || out.len() == MAX_HOLDERS {
            break;
        }
        let dir = format!("/proc/{}", st.pid);
        let owned = rustix::fs::stat(dir.as_str()).is_ok_and(|m| m.st_uid == uid);
        if !owned {
            continue;
        }
        let Ok(fds) = fs::read_dir(format!("{dir}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if budget == 0 {
                break;
            }
            budget -= 1;
            if std::fs::read_link(fd.path()).is_ok_and(|link| link.as_os_str() == target) {
                out.push(st.pid);
                break;
            }
        }
    }
    if budget == 0 {
        tracing::debug!(
            target,
            "the socket's holders were looked for in the first {MAX_FDS} descriptors only"
        );
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use std::net::{TcpListener, TcpStream};

    use super::*;

    #[test]
    fn kernel_addresses_parse() {
        assert_eq!(
            parse_addr("0100007F:1F90"),
            Some("127.0.0.1:8080".parse().unwrap())
        );
        assert_eq!(
            parse_addr("00000000000000000000000001000000:0050"),
            Some("[::1]:80".parse().unwrap())
        );
        assert_eq!(
            parse_addr("0000000000000000FFFF00000100007F:0050").map(canonical),
            Some("127.0.0.1:80".parse().unwrap())
        );
        assert_eq!(parse_addr("zz:1"), None);
    }

    #[test]
    fn the_client_end_of_a_loopback_connection_is_this_process() {
        let me = std::process::id() as i32;
        for bind in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(listener) = TcpListener::bind(bind) else {
                continue; // no IPv6 loopback here
            };
            let server = listener.local_addr().unwrap();
            let _client = TcpStream::connect(server).unwrap();
            let (_accepted, client) = listener.accept().unwrap();
            // A child another test forks at this moment holds every descriptor of this process
            // until its exec: wait until this process is the only holder again.
            let found = planhost_test_support::poll_until(
                "this process to hold the socket alone",
                std::time::Duration::from_secs(10),
                || {
                    let peers = tcp_peers(client, server);
                    (peers == vec![me]).then_some(peers)
                },
            );
            assert_eq!(found, vec![me], "{bind}");
            // No such connection.
            let other = SocketAddr::new(client.ip(), client.port().wrapping_add(1));
            assert_eq!(tcp_peers(other, server), Vec::<i32>::new(), "{bind}");
        }
    }

    #[test]
    fn the_client_end_held_by_another_process_names_it() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let mut child = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "exec 3<>/dev/tcp/127.0.0.1/{}; exec sleep 30",
                server.port()
            ))
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let (accepted, client) = listener.accept().unwrap();
        // bash opened the socket and became `sleep`: one holder, the child.
        let found = planhost_test_support::poll_until(
            "the child holds the socket alone",
            std::time::Duration::from_secs(10),
            || {
                let peers = tcp_peers(client, server);
                (peers == vec![child.id() as i32]).then_some(peers)
            },
        );
        let _ = child.kill();
        let _ = child.wait();
        drop(accepted);
        assert_eq!(found, vec![child.id() as i32]);
    }
}
