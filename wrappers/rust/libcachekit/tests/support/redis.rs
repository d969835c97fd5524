//! A private redis-server on a free loopback port (the flags of
//! tests/redis/redis_server.hpp), stopped on drop. None when not installed.
//! Also a Redis Sentinel monitoring one (`Sentinel`) and a plain RESP client
//! (`command`) to check what landed on a server.
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Child,
    dir: PathBuf,
    pub port: u16,
}

fn binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/bin", "/usr/local/bin", "/usr/sbin"].map(PathBuf::from))
        .map(|d| d.join("redis-server"))
        .find(|p| p.is_file())
}

impl RedisServer {
    pub fn start() -> Option<RedisServer> {
        Self::start_with(&[])
    }

    /// With more redis-server arguments (a TLS port, for example).
    pub fn start_with(extra: &[String]) -> Option<RedisServer> {
        let Some(bin) = binary() else {
            eprintln!("SKIP: redis-server is not installed");
            return None;
        };
        let dir = super::temp_dir("redis");
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let mut child = Command::new(&bin)
                .args([
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--protected-mode",
                    "yes",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--daemonize",
                    "no",
                    "--loglevel",
                    "warning",
                ])
                .arg("--dir")
                .arg(&dir)
                .arg("--logfile")
                .arg(dir.join("redis.log"))
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server starts");
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                // Another test's server may have won the port: it must be ours.
                if serves(port, child.id()) {
                    return Some(RedisServer { child, dir, port });
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break; // lost the port race: try another
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server did not start (see {}/redis.log)", dir.display());
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The server's process id (to SIGSTOP it, for example).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// One command on a plain connection of its own (not through cachekit).
    pub fn command(&self, args: &[&str]) -> String {
        command(self.port, args)
    }
}

/// `redis-server <conf> --sentinel` on a free loopback port, monitoring master
/// "m" at 127.0.0.1:`master_port` with quorum 1 (as
/// tests/redis/sentinel_harness.hpp starts one), its config file in a temp
/// dir of its own (Sentinel rewrites it); `extra`: more config lines (TLS).
/// Stopped on drop.
pub struct Sentinel {
    child: Child,
    dir: PathBuf,
    pub port: u16,
}

impl Sentinel {
    /// Panics when redis-server is missing (start the primary first: it skips).
    pub fn start(master_port: u16, extra: &str) -> Sentinel {
        let bin = binary().expect("redis-server is installed");
        let dir = super::temp_dir("sentinel");
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let conf = dir.join(format!("sentinel-{port}.conf"));
            let text = format!(
                "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {d}\nlogfile {d}/sentinel-{port}.log\n{extra}\
                 sentinel monitor m 127.0.0.1 {master_port} 1\n\
                 sentinel down-after-milliseconds m 1000\nsentinel failover-timeout m 3000\n",
                d = dir.display()
            );
            std::fs::write(&conf, text).unwrap();
            let mut child = Command::new(&bin)
                .arg(&conf)
                .arg("--sentinel")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server --sentinel starts");
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if serves(port, child.id()) {
                    return Sentinel { child, dir, port };
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break; // lost the port race: try another
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server --sentinel did not start (see {})", dir.display());
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One command to 127.0.0.1:`port` on a fresh plain connection (RESP2): a
/// bulk string's payload ("(nil)" for none), else the reply's first line as
/// sent (":1", "+OK", "-ERR ...", "*2" for an array, whose items are not read).
pub fn command(port: u16, args: &[&str]) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to redis");
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut request = format!("*{}\r\n", args.len());
    for a in args {
        request += &format!("${}\r\n{a}\r\n", a.len());
    }
    stream.write_all(request.as_bytes()).expect("send to redis");
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).expect("a reply");
    let line = line.trim_end_matches("\r\n").to_string();
    if let Some(n) = line.strip_prefix('$') {
        let Ok(n) = n.parse::<usize>() else {
            return "(nil)".into();
        };
        let mut body = vec![0u8; n + 2];
        reader.read_exact(&mut body).expect("a bulk reply");
        body.truncate(n);
        return String::from_utf8_lossy(&body).into_owned();
    }
    line
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Throwaway TLS material made with the openssl CLI in `dir`, as
/// tests/redis/tls_certs.hpp makes it: CAs "ca" and "other-ca", a server
/// certificate for 127.0.0.1 and localhost and a client certificate from "ca"
/// (<dir>/<name>.crt/.key). False when openssl is missing or fails.
pub fn make_tls_certs(dir: &std::path::Path) -> bool {
    let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    let run = |args: &[&str]| {
        Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    let ca = |name: &str| {
        let (k, c, subj) = (format!("{name}.key"), format!("{name}.crt"), format!("/CN={name}"));
        let mut args = vec!["req", "-x509"];
        args.extend(key);
        args.extend(["-keyout", &k, "-out", &c, "-days", "2", "-subj", &subj]);
        run(&args)
    };
    let leaf = |name: &str, issuer: &str, ext: &str| {
        if std::fs::write(dir.join(format!("{name}.ext")), format!("{ext}\n")).is_err() {
            return false;
        }
        let (k, csr, c, e) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.crt"),
            format!("{name}.ext"),
        );
        let (ic, ik, subj) = (format!("{issuer}.crt"), format!("{issuer}.key"), format!("/CN={name}"));
        let mut req = vec!["req"];
        req.extend(key);
        req.extend(["-keyout", &k, "-out", &csr, "-subj", &subj]);
        run(&req)
            && run(&[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                &ic,
                "-CAkey",
                &ik,
                "-CAcreateserial",
                "-days",
                "2",
                "-out",
                &c,
                "-extfile",
                &e,
            ])
    };
    ca("ca")
        && ca("other-ca")
        && leaf("server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1")
        && leaf("client", "ca", "extendedKeyUsage=clientAuth")
}

/// Whether the server answering on `port` is process `pid` (INFO's process_id).
/// (A sentinel answers INFO too.)
fn serves(port: u16, pid: u32) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(b"INFO server\r\n").is_err() {
        return false;
    }
    let mut text = Vec::new();
    let mut chunk = [0u8; 4096];
    while text.len() < 1 << 16 {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.extend_from_slice(&chunk[..n]),
        }
        let reply = String::from_utf8_lossy(&text);
        if let Some(at) = reply.find("process_id:") {
            let digits: String = reply[at + 11..].chars().take_while(|c| c.is_ascii_digit()).collect();
            if reply[at + 11 + digits.len()..].starts_with("\r\n") {
                return digits.parse::<u32>().ok() == Some(pid);
            }
        }
    }
    false
}
