package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/accesstoken"
	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/metrics"
	"github.com/mcptrunk/mcptrunk/internal/protocol"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/proxy/httpserve"
)

// httpFlags are serve's flags for the HTTP downstream; each wins over its
// trunk.http field.
type httpFlags struct {
	addr      string
	stdio     bool
	tokenFile string
	tlsCert   string
	tlsKey    string
	origins   stringsFlag
}

func (f *httpFlags) register(fs *flagSet) {
	fs.StringVar(&f.addr, "http", "", "serve MCP over streamable HTTP at `ADDR` (such as 127.0.0.1:8931), for many hosts at once")
	fs.BoolVar(&f.stdio, "stdio", false, "with --http: serve the host on stdin/stdout too")
	fs.StringVar(&f.tokenFile, "token-file", "", "with --http: the bearer token clients must send, from `FILE` (created with a new token when missing)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "with --http: serve HTTPS with this certificate `FILE`")
	fs.StringVar(&f.tlsKey, "tls-key", "", "with --http: the certificate's key `FILE`")
	fs.Var(&f.origins, "allow-origin", "with --http: a browser `ORIGIN` allowed besides the listener's own (repeatable)")
}

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

// resolve merges the flags over trunk.http.
func (f *httpFlags) resolve(cfg config.HTTP) config.HTTP {
	if f.addr != "" {
		cfg.Listen = f.addr
	}
	if f.tokenFile != "" {
		cfg.TokenFile = f.tokenFile
	}
	if len(f.origins) > 0 {
		cfg.AllowedOrigins = f.origins
	}
	return cfg
}

// httpDownstream is the bound listener and, once the trunk exists, the
// server on it.
type httpDownstream struct {
	cfg      config.HTTP
	flags    *httpFlags
	ln       net.Listener
	token    string
	key      []byte                // trunk.http.signingKeyFile: shared by the replicas
	auth     *accesstoken.Verifier // trunk.http.auth: a team's access tokens
	loopback bool
	handler  *httpserve.Handler
	srv      *http.Server
	done     chan error
	logger   *slog.Logger
}

// listenHTTP checks the HTTP settings and binds the address before any
// server starts: a bad address or a missing token fails the command at
// once. A non-loopback address refuses to start without a token or
// trunk.http.auth.
func listenHTTP(cfg config.HTTP, f *httpFlags, logger *slog.Logger) (*httpDownstream, error) {
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, usagef("--http %q: want HOST:PORT, such as 127.0.0.1:8931", cfg.Listen)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return nil, usagef("--tls-cert and --tls-key go together")
	}
	d := &httpDownstream{cfg: cfg, flags: f, loopback: host != "" && config.IsLoopbackHost(strings.Trim(host, "[]")), logger: logger, done: make(chan error, 1)}
	if cfg.TokenFile != "" {
		if d.token, err = httpserve.LoadOrCreateToken(cfg.TokenFile, logger); err != nil {
			return nil, err
		}
		if err := checkToken(cfg.TokenFile, d.token, d.loopback, logger); err != nil {
			return nil, err
		}
	}
	if cfg.SigningKeyFile != "" {
		if d.key, err = httpserve.LoadSigningKey(cfg.SigningKeyFile); err != nil {
			return nil, err
		}
	}
	if a := cfg.Auth; a != nil {
		d.auth = accesstoken.New(accesstoken.Config{Issuer: a.Issuer, Resource: a.Resource, Scopes: a.Scopes, SubjectClaim: a.SubjectClaim, TokenTypes: a.TokenTypes})
	}
	if !d.loopback && d.token == "" && d.auth == nil {
		return nil, fmt.Errorf("--http %q is not a loopback address: anyone who can reach it could use every server; give --token-file (a missing file is created with a new token), set trunk.http.auth, or bind 127.0.0.1", cfg.Listen)
	}
	if d.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	return d, nil
}

// sharedCapabilities are what the shared upstreams are told the hosts can
// do: sampling and elicitation, each asked of the session whose call
// caused it. Not roots: roots belong to one host, and a shared server
// cannot have one host's roots.
var sharedCapabilities = []byte(`{"elicitation":{},"sampling":{}}`)

// serve starts the upstreams for every session to come and answers on the
// listener: /mcp, /healthz, /readyz, and, behind the same guard, the
// status page and /metrics, for the trunk's operators alone
// (httpserve.Handler.Handle).
func (d *httpDownstream) serve(t *proxy.Trunk, m *metrics.Metrics) {
	t.Start(sharedCapabilities, protocol.Revision2025)
	limitMemory(int64(d.cfg.MaxBufferedBytes), t.KeptResultsBound(), d.logger)
	d.handler = httpserve.New(t, httpserve.Options{
		Path: d.cfg.Path, Token: d.token, Auth: d.auth, Operator: t.Operator, Profiles: t.HasProfile, AllowedOrigins: d.cfg.AllowedOrigins, LoopbackOnly: d.loopback,
		MaxBodyBytes: int64(d.cfg.MaxBodyBytes), MaxSessions: d.cfg.MaxSessions, MaxInFlight: d.cfg.MaxInFlight,
		SessionIdle: d.cfg.SessionIdle.D(), Logger: d.logger,
		MaxSessionsPerClient: d.cfg.MaxSessionsPerClient, HandshakeIdle: d.cfg.HandshakeTimeout.D(), BodyTimeout: d.cfg.BodyTimeout.D(),
		IdleTimeout: d.cfg.IdleTimeout.D(), MaxConns: d.cfg.MaxConnections, MaxConnsPerClient: d.cfg.MaxConnectionsPerClient,
		MaxBufferedBytes: int64(d.cfg.MaxBufferedBytes), MaxSessionBufferedBytes: int64(d.cfg.MaxSessionBufferedBytes),
		Ready: func() bool {
			select {
			case <-t.Fleet().Settled():
				return true
			default:
				return false
			}
		},
		Degraded: func() string { return stateDegraded(t.StateStore()) },
	})
	if m != nil {
		d.handler.Handle("GET /metrics", m.Handler())
	}
	d.handler.Handle("/", statusPageHandler(t))
	d.srv = d.handler.Server(slog.NewLogLogger(d.logger.Handler(), slog.LevelDebug))
	scheme := "http"
	if d.flags.tlsCert != "" {
		scheme = "https"
	}
	path := d.cfg.Path
	if path == "" {
		path = httpserve.DefaultPath
	}
	d.logger.Info("serving MCP over HTTP", "url", scheme+"://"+d.ln.Addr().String()+path, "token", d.token != "", "issuer", authIssuer(d.cfg.Auth))
	page := "status page"
	if d.token != "" || d.auth != nil {
		page += " (for requests with the token)"
	}
	d.logger.Info(page, "url", scheme+"://"+d.ln.Addr().String()+"/")
	go func() {
		if d.flags.tlsCert != "" {
			d.done <- d.srv.ServeTLS(d.handler.Listener(d.ln), d.flags.tlsCert, d.flags.tlsKey)
			return
		}
		d.done <- d.srv.Serve(d.handler.Listener(d.ln))
	}()
}

// close ends the sessions (their listens answered), then the server.
func (d *httpDownstream) close() error {
	if d.srv == nil {
		return d.ln.Close()
	}
	d.handler.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := d.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, d.srv.Close())
	}
	if serr := <-d.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// authIssuer names the issuer whose tokens the listener admits, for the
// startup line; "" without trunk.http.auth.
func authIssuer(a *config.HTTPAuth) string {
	if a == nil {
		return ""
	}
	return a.Issuer
}
