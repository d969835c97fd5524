package cachekit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// redisServer is a redis-server of the test's own on a free loopback port
// (as tests/redis/redis_server.hpp starts one), stopped at the test's end.
type redisServer struct {
	cmd  *exec.Cmd
	port int
}

func findRedisServer() string {
	if env := os.Getenv("CACHEKIT_REDIS_SERVER"); env != "" {
		return env
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRedis starts a server, or skips the test (with why) when
// redis-server is not installed.
func startRedis(t *testing.T) *redisServer { return startRedisWith(t) }

// startRedisWith starts one with more redis-server arguments (a TLS port).
func startRedisWith(t *testing.T, extra ...string) *redisServer {
	t.Helper()
	return startRedisProcess(t, "redis-server", func(dir string, port int) []string {
		return append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--protected-mode", "yes",
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir,
			"--logfile", filepath.Join(dir, "redis.log"), "--loglevel", "warning"}, extra...)
	})
}

// startSentinel starts `redis-server <conf> --sentinel` on a free loopback
// port, monitoring master "m" at 127.0.0.1:masterPort with quorum 1 (as
// tests/redis/sentinel_harness.hpp does), its config file in a temp dir
// (Sentinel rewrites it); extra: more config lines (TLS). Skips as
// startRedis does; stopped at the test's end.
func startSentinel(t *testing.T, masterPort int, extra string) *redisServer {
	t.Helper()
	return startRedisProcess(t, "redis-server --sentinel", func(dir string, port int) []string {
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", port))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\nlogfile %s\n%s"+
			"sentinel monitor m 127.0.0.1 %d 1\nsentinel down-after-milliseconds m 1000\n"+
			"sentinel failover-timeout m 3000\n",
			port, dir, filepath.Join(dir, fmt.Sprintf("sentinel-%d.log", port)), extra, masterPort)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{conf, "--sentinel"}
	})
}

// startRedisProcess runs redis-server with argsFor(its temp dir, a free
// port) until one answers PING on that port (five tries: a lost port race).
func startRedisProcess(t *testing.T, what string, argsFor func(dir string, port int) []string) *redisServer {
	t.Helper()
	bin := findRedisServer()
	if bin == "" {
		t.Skip("redis-server is not installed: skipping (install redis-server to run the Redis tests)")
	}
	dir := t.TempDir()
	for attempt := 0; attempt < 5; attempt++ {
		port := freePort(t)
		cmd := exec.Command(bin, argsFor(dir, port)...)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		s := &redisServer{cmd: cmd, port: port}
		if s.waitReady(5 * time.Second) {
			t.Cleanup(s.stop)
			return s
		}
		s.stop()
	}
	t.Fatalf("%s did not start (log in %s)", what, dir)
	return nil
}

func (s *redisServer) waitReady(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 100*time.Millisecond)
		if err == nil {
			conn.SetDeadline(time.Now().Add(time.Second))
			_, werr := conn.Write([]byte("PING\r\n"))
			buf := make([]byte, 7)
			n, rerr := conn.Read(buf)
			conn.Close()
			if werr == nil && rerr == nil && string(buf[:n]) == "+PONG\r\n" {
				return true
			}
		}
		if s.cmd.ProcessState != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func (s *redisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d", s.port) }

// Calls is how many times the server has run command cmd ("get", "set"),
// from its INFO commandstats.
func (s *redisServer) Calls(t *testing.T, cmd string) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second)
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n")); err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	if err != nil || len(head) < 4 || head[0] != '$' {
		t.Fatalf("INFO commandstats: reply %q, %v", head, err)
	}
	n, err := strconv.Atoi(head[1 : len(head)-2])
	if err != nil {
		t.Fatalf("INFO commandstats: reply %q", head)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	m := regexp.MustCompile(`(?m)^cmdstat_` + regexp.QuoteMeta(cmd) + `:calls=(\d+)`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	calls, _ := strconv.Atoi(string(m[1]))
	return calls
}

// Command sends one command on a plain connection of its own (not through
// cachekit) and gives a bulk reply's payload ("(nil)" for none), else the
// reply's first line as sent (":1", "+OK", "-ERR ...").
func (s *redisServer) Command(t *testing.T, args ...string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	req := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		req += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	if err != nil || len(head) < 3 {
		t.Fatalf("%v: reply %q, %v", args, head, err)
	}
	head = head[:len(head)-2]
	if head[0] != '$' {
		return head
	}
	n, err := strconv.Atoi(head[1:])
	if err != nil || n < 0 {
		return "(nil)"
	}
	body := make([]byte, n+2)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return string(body[:n])
}

// Pause stops the server with SIGSTOP (it keeps its port and sockets).
func (s *redisServer) Pause() { s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *redisServer) Resume() { s.cmd.Process.Signal(syscall.SIGCONT) }

func (s *redisServer) stop() {
	if s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGCONT)
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}
