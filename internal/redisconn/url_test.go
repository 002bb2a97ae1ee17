package redisconn

import (
	"strings"
	"testing"
)

// TestParseURL: the forms trunk.state.url documents, with their
// defaults; the others refused without quoting a password or user.
func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		url                   string
		addr, user, pass, sni string
		db                    int
	}{
		{url: "redis://redis.internal:6379/0", addr: "redis.internal:6379"},
		{url: "redis://127.0.0.1:6390/3", addr: "127.0.0.1:6390", db: 3},
		{url: "redis://:p%40ss@h:1", addr: "h:1", pass: "p@ss"},
		{url: "redis://alice:pw@h:2/", addr: "h:2", user: "alice", pass: "pw"},
		{url: "redis://h", addr: "h:6379"},
		{url: "redis://", addr: "localhost:6379"},
		{url: "redis://[::1]:7/1", addr: "[::1]:7", db: 1},
		{url: "rediss://:pw@cache.example.com:6380/2", addr: "cache.example.com:6380", pass: "pw", sni: "cache.example.com", db: 2},
	} {
		o, err := ParseURL(c.url)
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		sni := ""
		if o.TLS != nil {
			sni = o.TLS.ServerName
		}
		if o.Addr != c.addr || o.Username != c.user || o.Password != c.pass || o.DB != c.db || sni != c.sni || (strings.HasPrefix(c.url, "rediss:") != (o.TLS != nil)) {
			t.Errorf("%s parsed as %+v", c.url, o)
		}
	}
	for _, c := range []struct{ url, want string }{
		{"http://:hunter2@h:6379/0", "scheme"},
		{"redis:h:6379", "two slashes"},
		{"redis://:hunter2@h:6379/0?dial_timeout=1s", "query"},
		{"redis://:hunter2@h:6379/0#x", "fragment"},
		{"redis://hunter2@h:6379/0", "without a password"},
		{"redis://:hunter2@h:6379/zero", "database"},
		{"redis://:hunter2@h:6379/-1", "database"},
		{"redis://:hunter2@h:99999/0", "port"},
		{"redis://:hunter2@h:port/0", "not a URL"},
		{"redis://:hunter2@h\x7f:1/0", "not a URL"},
	} {
		_, err := ParseURL(c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: %v; want an error saying %q, not quoting the password", c.url, err, c.want)
		}
	}
}
