package redisconn

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrunk/mcptrunk/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// client is a Client of srv's URL with opts' pool size, closed when the
// test ends.
func client(t *testing.T, url string, poolSize int) *Client {
	t.Helper()
	opts, err := ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opts.PoolSize = poolSize
	c := New(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// must is v of a command that must succeed.
func must(t *testing.T) func(v any, err error) any {
	return func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestCommands: each kind of reply comes back as Do says, binary values
// whole, a missing key as ErrNil.
func TestCommands(t *testing.T) {
	srv := testkit.StartRedis(t, testkit.RedisOptions{})
	c := client(t, srv.URL(), 2)
	ctx := context.Background()
	ok := must(t)

	value := []byte("a\r\nb\x00$-1\r\n")
	if v := ok(c.Do(ctx, "SET", "k", value)); v != "OK" {
		t.Errorf("SET answered %#v, want the simple string OK", v)
	}
	if b, err := Bytes(c.Do(ctx, "GET", "k")); err != nil || string(b) != string(value) {
		t.Errorf("GET = %q, %v; want %q", b, err, value)
	}
	if n, err := Int64(c.Do(ctx, "INCRBY", "n", int64(-7))); err != nil || n != -7 {
		t.Errorf("INCRBY = %d, %v; want -7", n, err)
	}
	if v, err := c.Do(ctx, "GET", "missing"); !errors.Is(err, ErrNil) || v != nil {
		t.Errorf("GET of a missing key = %#v, %v; want ErrNil", v, err)
	}
	v := ok(c.Do(ctx, "MGET", "k", "missing", "n"))
	if a, isArray := v.([]any); !isArray || len(a) != 3 || string(a[0].([]byte)) != string(value) || a[1] != nil || string(a[2].([]byte)) != "-7" {
		t.Errorf("MGET = %#v; want the value, nil, -7", v)
	}
	if b, err := Bytes(c.Do(ctx, "GETDEL", "k")); err != nil || string(b) != string(value) {
		t.Errorf("GETDEL = %q, %v", b, err)
	}
	if n, err := Int64(c.Do(ctx, "DEL", "k", "n")); err != nil || n != 1 {
		t.Errorf("DEL = %d, %v; want 1 (GETDEL took k)", n, err)
	}
	if _, err := c.Do(ctx, "SET", "k", struct{}{}); err == nil || !strings.Contains(err.Error(), "argument 3") {
		t.Errorf("SET of a struct: %v; want an error naming argument 3", err)
	}
	// A password for a server that has none is accepted, as Redis 6's
	// default user (nopass) accepts any.
	named := client(t, "redis://:unneeded@"+srv.Addr(), 1)
	named.opts.ClientName = "trunk-test"
	if name, err := Bytes(named.Do(ctx, "CLIENT", "GETNAME")); err != nil || string(name) != "trunk-test" {
		t.Errorf("CLIENT GETNAME with a password the server does not need = %q, %v; want trunk-test", name, err)
	}
}

// TestErrorReply: an error reply is an Error, and the connection it came
// on serves the next command.
func TestErrorReply(t *testing.T) {
	srv := testkit.StartRedis(t, testkit.RedisOptions{})
	c := client(t, srv.URL(), 1)
	ctx := context.Background()
	ok := must(t)
	ok(c.Do(ctx, "LPUSH", "list", "x"))
	id := ok(c.Do(ctx, "CLIENT", "ID"))
	_, err := c.Do(ctx, "GET", "list")
	var e Error
	if !errors.As(err, &e) || !strings.HasPrefix(string(e), "WRONGTYPE") {
		t.Fatalf("GET of a list: %v; want WRONGTYPE", err)
	}
	if again := ok(c.Do(ctx, "CLIENT", "ID")); again != id {
		t.Errorf("the connection after an error reply is client %v, was %v: an error reply must not cost the connection", again, id)
	}
}

// TestAuthAndSelect: a password alone, a user and password, and the
// database of the URL are set on every connection; a wrong password is
// refused without being quoted.
func TestAuthAndSelect(t *testing.T) {
	const pass = "s3cret-pw"
	srv := testkit.StartRedis(t, testkit.RedisOptions{Password: pass})
	ctx := context.Background()
	ok := must(t)
	addr := srv.Addr()

	if _, err := client(t, "redis://"+addr, 1).Do(ctx, "PING"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("PING without the password: %v; want NOAUTH", err)
	}
	if _, err := client(t, "redis://:wrong-pw@"+addr, 1).Do(ctx, "PING"); err == nil || strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("PING with a wrong password: %v; want an error that does not quote it", err)
	}
	admin := client(t, "redis://:"+pass+"@"+addr+"/0", 1)
	ok(admin.Do(ctx, "SET", "where", "db0"))
	ok(admin.Do(ctx, "ACL", "SETUSER", "alice", "on", ">alice-pw", "~*", "+@all"))

	alice := client(t, "redis://alice:alice-pw@"+addr+"/3", 1)
	if who, err := Bytes(alice.Do(ctx, "ACL", "WHOAMI")); err != nil || string(who) != "alice" {
		t.Errorf("ACL WHOAMI = %q, %v; want alice", who, err)
	}
	if _, err := alice.Do(ctx, "GET", "where"); !errors.Is(err, ErrNil) {
		t.Errorf("GET in database 3 of a key of database 0: %v; want ErrNil", err)
	}
	ok(alice.Do(ctx, "SET", "where", "db3"))
	if b, err := Bytes(admin.Do(ctx, "GET", "where")); err != nil || string(b) != "db0" {
		t.Errorf("database 0 holds %q, %v; the write in database 3 reached it", b, err)
	}
	if _, err := client(t, "redis://alice:wrong-pw@"+addr, 1).Do(ctx, "PING"); err == nil || !strings.Contains(err.Error(), "WRONGPASS") || strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("PING as alice with a wrong password: %v; want WRONGPASS, the password unquoted", err)
	}
}

// TestServerRestart: after a restart the first command succeeds,
// although every pooled connection is to the server that died; while the
// server is down commands fail, and succeed again once it is back.
func TestServerRestart(t *testing.T) {
	srv := testkit.StartRedis(t, testkit.RedisOptions{})
	c := client(t, srv.URL(), 4)
	ctx := context.Background()
	ok := must(t)
	// Four commands at once leave four connections idle in the pool.
	var wg sync.WaitGroup
	var held sync.WaitGroup
	held.Add(4)
	errs := make([]error, 4)
	for i := range 4 {
		wg.Go(func() {
			// BLPOP holds each connection until the last is taken.
			held.Done()
			_, errs[i] = c.Do(ctx, "BLPOP", "go", 5)
		})
	}
	held.Wait()
	waitBlocked(t, srv, 4)
	ok(client(t, srv.URL(), 1).Do(ctx, "RPUSH", "go", 1, 2, 3, 4))
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := idleCount(c); n != 4 {
		t.Fatalf("%d idle connections, want 4", n)
	}

	srv.Stop()
	srv.Start()
	if v, err := c.Do(ctx, "PING"); err != nil || v != "PONG" {
		t.Errorf("the first PING after a restart = %v, %v; want PONG", v, err)
	}
	srv.Stop()
	if _, err := c.Do(ctx, "PING"); err == nil {
		t.Fatal("PING answered with the server stopped")
	}
	srv.Start()
	if v, err := c.Do(ctx, "PING"); err != nil || v != "PONG" {
		t.Errorf("the first PING after the server came back = %v, %v; want PONG", v, err)
	}
}

func idleCount(c *Client) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.idle)
}

// waitBlocked waits until n clients of srv are blocked (BLPOP).
func waitBlocked(t *testing.T, srv *testkit.RedisServer, n int) {
	t.Helper()
	admin := client(t, srv.URL(), 1)
	want := "blocked_clients:" + strconv.Itoa(n)
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := Bytes(admin.Do(context.Background(), "INFO", "clients"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(info), want+"\r\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in 10s:\n%s", want, info)
		}
		time.Sleep(5 * time.Millisecond) // polling the server: it tells no one when a client blocks
	}
}

// TestCancelledCommand: a command whose context ends before its reply
// returns the context's error, and its connection is closed, not handed
// to the next command, which would read the cancelled one's reply.
func TestCancelledCommand(t *testing.T) {
	srv := testkit.StartRedis(t, testkit.RedisOptions{})
	c := client(t, srv.URL(), 1)
	other := client(t, srv.URL(), 1)
	ok := must(t)
	ok(c.Do(context.Background(), "SET", "k", "v"))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "BLPOP", "queue", 0)
		done <- err
	}()
	waitBlocked(t, srv, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled BLPOP: %v; want context.Canceled", err)
	}
	ok(other.Do(context.Background(), "RPUSH", "queue", "x"))
	if b, err := Bytes(c.Do(context.Background(), "GET", "k")); err != nil || string(b) != "v" {
		t.Errorf("GET after a cancelled BLPOP = %q, %v; want v", b, err)
	}
	if n, err := Int64(other.Do(context.Background(), "LLEN", "queue")); err != nil || n != 1 {
		t.Errorf("LLEN queue = %d, %v; want 1: the cancelled BLPOP's connection is still open and took x", n, err)
	}

	deadline, stop := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer stop()
	if _, err := c.Do(deadline, "BLPOP", "empty", 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a BLPOP past its context's deadline: %v; want context.DeadlineExceeded", err)
	}
	if v, err := c.Do(context.Background(), "PING"); err != nil || v != "PONG" {
		t.Errorf("PING after a timed-out BLPOP = %v, %v", v, err)
	}
}

// TestScriptAfterFlush: a script runs by its SHA1 once loaded, and is
// sent again when the server lost it (SCRIPT FLUSH, a restart).
func TestScriptAfterFlush(t *testing.T) {
	srv := testkit.StartRedis(t, testkit.RedisOptions{})
	c := client(t, srv.URL(), 1)
	ctx := context.Background()
	ok := must(t)
	s := NewScript(`redis.call('SET', KEYS[1], ARGV[1]); return {tonumber(ARGV[2]) + 1, 7}`)
	run := func() {
		t.Helper()
		if ns, err := Int64s(s.Run(ctx, c, []string{"k"}, "v", 41)); err != nil || len(ns) != 2 || ns[0] != 42 || ns[1] != 7 {
			t.Fatalf("the script answered %v, %v; want [42 7]", ns, err)
		}
	}
	loaded := func() bool {
		v := ok(c.Do(ctx, "SCRIPT", "EXISTS", s.sha))
		return v.([]any)[0] == int64(1)
	}
	if loaded() {
		t.Fatal("the script is loaded before its first run")
	}
	run()
	if !loaded() {
		t.Fatal("the first run did not load the script")
	}
	run()
	ok(c.Do(ctx, "SCRIPT", "FLUSH"))
	run()
	if !loaded() {
		t.Error("the run after SCRIPT FLUSH did not load the script again")
	}
	calls := commandCalls(t, c)
	if calls["eval"] != 2 || calls["evalsha"] != 3 {
		t.Errorf("EVAL ran %d times and EVALSHA %d; want 2 (first run, after the flush) and 3", calls["eval"], calls["evalsha"])
	}
	if _, err := NewScript(`return redis.call('GET', KEYS[1]) + 1`).Run(ctx, c, []string{"k"}); err == nil {
		t.Error("a script that fails answered no error")
	}
}

// commandCalls is how many times the server ran each command.
func commandCalls(t *testing.T, c *Client) map[string]int {
	t.Helper()
	info, err := Bytes(c.Do(context.Background(), "INFO", "commandstats"))
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, line := range strings.Split(string(info), "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, ",")
		var v int
		for _, d := range n {
			v = v*10 + int(d-'0')
		}
		calls[name] = v
	}
	return calls
}

// TestClosed: a closed Client refuses commands.
func TestClosed(t *testing.T) {
	srv := testkit.StartRedis(t, testkit.RedisOptions{})
	c := client(t, srv.URL(), 1)
	must(t)(c.Do(context.Background(), "PING"))
	c.Close()
	if _, err := c.Do(context.Background(), "PING"); !errors.Is(err, ErrClosed) {
		t.Errorf("PING on a closed client: %v; want ErrClosed", err)
	}
}

// TestConnectionKilledWhileIdle: a pooled connection the server closed
// (CLIENT KILL, as its idle timeout would) costs the next command
// nothing: it is sent again on a new connection.
func TestConnectionKilledWhileIdle(t *testing.T) {
	srv := testkit.StartRedis(t, testkit.RedisOptions{})
	c := client(t, srv.URL(), 1)
	ctx := context.Background()
	ok := must(t)
	id := ok(c.Do(ctx, "CLIENT", "ID"))
	if n, err := Int64(client(t, srv.URL(), 1).Do(ctx, "CLIENT", "KILL", "ID", id)); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL = %d, %v", n, err)
	}
	if n, err := Int64(c.Do(ctx, "INCR", "n")); err != nil || n != 1 {
		t.Errorf("INCR on the pool after its connection was killed = %d, %v; want 1, once", n, err)
	}
	if again := ok(c.Do(ctx, "CLIENT", "ID")); again == id {
		t.Errorf("the killed connection (client %v) is still in use", id)
	}
}

// TestServerSilent: a server that takes the connection and never answers
// fails the command with a timeout, and its connection is not pooled.
func TestServerSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		var held []net.Conn
		defer func() {
			for _, nc := range held {
				nc.Close()
			}
		}()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, nc) // read nothing, answer nothing
		}
	})
	c := New(Options{Addr: ln.Addr().String(), ReadTimeout: 50 * time.Millisecond, WriteTimeout: 50 * time.Millisecond})
	defer c.Close()
	_, err = c.Do(context.Background(), "PING")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("PING to a silent server: %v; want a timeout", err)
	}
	if n := idleCount(c); n != 0 {
		t.Errorf("%d idle connections after a timeout, want 0", n)
	}
}
