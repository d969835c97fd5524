package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// redisServer is G2's own redis-server on a free loopback port.
type redisServer struct {
	cmd  *exec.Cmd
	port int
}

func startRedis() (*redisServer, error) {
	bin := os.Getenv("CACHEKIT_REDIS_SERVER")
	if bin == "" {
		bin = "redis-server"
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("G2 needs redis-server: %w", err)
	}
	s := &redisServer{cmd: cmd, port: port}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if conn, err := net.Dial("tcp", s.addr()); err == nil {
			conn.Close()
			return s, nil
		}
	}
	s.stop()
	return nil, fmt.Errorf("redis-server did not listen on %s", s.addr())
}

func (s *redisServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }
func (s *redisServer) url() string  { return "redis://" + s.addr() }

func (s *redisServer) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
}
