package redisconn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// ParseURL reads the Redis URLs the trunk documents:
// redis://[[user]:password@][host][:port][/db], and rediss:// for TLS
// (verified against the host's name). The host defaults to localhost,
// the port to 6379, the database to 0. Anything else (another scheme, a
// query, a user without a password) is refused. Errors never quote the
// URL's user or password.
func ParseURL(raw string) (Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Options{}, errors.New("not a URL (the value is not shown: it may hold a password)")
	}
	var opts Options
	switch u.Scheme {
	case "redis":
	case "rediss":
		opts.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	default:
		return Options{}, fmt.Errorf("the scheme %q is not redis:// or rediss://", u.Scheme)
	}
	switch {
	case u.Opaque != "":
		return Options{}, errors.New("want redis://host:port/db, with the two slashes")
	case u.RawQuery != "" || u.ForceQuery:
		return Options{}, errors.New("a query (?...) is not supported: write redis://[user:password@]host:port[/db]")
	case u.Fragment != "":
		return Options{}, errors.New("a fragment (#...) is not supported")
	}
	if u.User != nil {
		opts.Username = u.User.Username()
		p, ok := u.User.Password()
		if !ok {
			return Options{}, errors.New("a user without a password: write redis://user:password@host, or redis://:password@host for a password alone")
		}
		opts.Password = p
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "6379"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return Options{}, fmt.Errorf("the port %q is not a port number", port)
	}
	opts.Addr = net.JoinHostPort(host, port)
	if opts.TLS != nil {
		opts.TLS.ServerName = host
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return Options{}, fmt.Errorf("the database %q is not a number (redis://host:port/0)", db)
		}
		opts.DB = n
	}
	return opts, nil
}
