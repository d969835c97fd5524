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
	bin := findRedisServer()
	if bin == "" {
		t.Skip("redis-server is not installed: skipping (install redis-server to run the Redis tests)")
	}
	dir := t.TempDir()
	for attempt := 0; attempt < 5; attempt++ {
		port := freePort(t)
		args := append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--protected-mode", "yes",
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir,
			"--logfile", filepath.Join(dir, "redis.log"), "--loglevel", "warning"}, extra...)
		cmd := exec.Command(bin, args...)
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
	t.Fatalf("redis-server did not start (log in %s)", dir)
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
