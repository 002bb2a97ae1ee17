package testkit

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RedisServer is a redis-server of the test's own on a loopback port,
// with its data in the test's directory. Stop and Start keep the port and
// the directory, so that a test can take the store away and bring it
// back (with Persist, holding what was written).
type RedisServer struct {
	t       testing.TB
	bin     string
	dir     string
	port    int
	persist bool
	pass    string
	cmd     *exec.Cmd
	exited  chan struct{}
	stderr  *Buffer
}

// RedisOptions tune StartRedis.
type RedisOptions struct {
	// Persist turns on the append-only file, fsynced on every write, so
	// that a restart finds everything written before the stop.
	Persist bool
	// Password, when set, is required of every client (requirepass): the
	// server's URL holds it, Addr does not.
	Password string
}

// RedisBinary returns redis-server's path. Without one the test is
// skipped, or fails where CI=true: CI installs it (.ci/run).
func RedisBinary(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"redis-server", "/usr/bin/redis-server", "/usr/sbin/redis-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const why = "redis-server is not installed (Debian: apt-get install redis-server); the tests of the Redis state store need it"
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

// StartRedis starts redis-server on a free loopback port and waits until
// it answers PING; it is stopped when the test ends.
func StartRedis(t testing.TB, opts RedisOptions) *RedisServer {
	t.Helper()
	r := &RedisServer{t: t, bin: RedisBinary(t), dir: t.TempDir(), persist: opts.Persist, pass: opts.Password}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// URL is the redis:// URL of the server, with its password if it has one.
func (r *RedisServer) URL() string {
	if r.pass != "" {
		return fmt.Sprintf("redis://:%s@127.0.0.1:%d/0", url.UserPassword("", r.pass).String()[1:], r.port)
	}
	return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port)
}

// Addr is the server's host:port.
func (r *RedisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// Dir is the server's data directory (dump and append-only files).
func (r *RedisServer) Dir() string { return r.dir }

// Start starts the server (again) on its port and directory, and waits
// until it answers PING.
func (r *RedisServer) Start() {
	r.t.Helper()
	args := []string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir, "--save", "", "--daemonize", "no", "--loglevel", "warning"}
	if r.persist {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	if r.pass != "" {
		args = append(args, "--requirepass", r.pass)
	}
	r.stderr = &Buffer{}
	r.cmd = exec.Command(r.bin, args...)
	r.cmd.Stdout, r.cmd.Stderr = r.stderr, r.stderr
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("redis-server: %v", err)
	}
	r.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(r.cmd, r.exited)
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := r.ping()
		if err == nil {
			return
		}
		select {
		case <-r.exited:
			r.t.Fatalf("redis-server exited at start: %s", r.stderr.String())
		case <-time.After(20 * time.Millisecond): // polling its port: it says nothing when ready
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server did not answer PING in 15s: %v\n%s", err, r.stderr.String())
		}
	}
}

// ping sends PING, after AUTH when the server has a password, and reads
// the reply.
func (r *RedisServer) ping() error {
	c, err := net.DialTimeout("tcp", r.Addr(), time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	br := bufio.NewReader(c)
	if r.pass != "" {
		if _, err := fmt.Fprintf(c, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(r.pass), r.pass); err != nil {
			return err
		}
		if line, err := br.ReadString('\n'); err != nil {
			return err
		} else if strings.TrimSpace(line) != "+OK" {
			return fmt.Errorf("AUTH answered %q", strings.TrimSpace(line))
		}
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// Stop stops the server (SIGTERM: it writes its append-only file and
// exits) and waits for it to exit. Stopping a stopped server does nothing.
func (r *RedisServer) Stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(os.Interrupt)
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
	r.cmd = nil
}
