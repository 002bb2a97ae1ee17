package usercreds

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/naming"
	"golang.org/x/sync/singleflight"
)

// Options tune a Broker; the zero value works.
type Options struct {
	Client *http.Client     // for the token endpoints; http.DefaultClient when nil
	Now    func() time.Time // time.Now when nil
	Logger *slog.Logger     // server names and subjects only
	// OAuth gives the tokens of servers in credentials mode "oauth",
	// which each caller gets by signing in (proxy/signin); without it
	// such servers have none.
	OAuth OAuthTokens
}

// OAuthTokens are the tokens of servers in credentials mode "oauth": a
// caller's own (Authorization), and the trunk's own for the instance that
// lists the tools (Catalog).
type OAuthTokens interface {
	Authorization(ctx context.Context, subject, server, refused string) (string, error)
	Catalog(ctx context.Context, server, refused string) (string, error)
}

// Broker holds the per-user credentials of a trunk's servers: which
// servers have them, and the tokens got so far for each subject and
// server, in memory only. Safe for concurrent use.
type Broker struct {
	opts    Options
	flights singleflight.Group // one exchange at a time per subject and server

	mu      sync.Mutex
	servers map[string]*server          // by server id: those with per-user credentials
	tokens  map[string]map[string]Token // subject -> server -> its token
	owns    map[string]Token            // server -> the trunk's own token (the catalog's instance)
}

type server struct {
	spec config.Spec
	ex   *Exchanger // exchange mode only
}

// New returns a Broker with no servers; Configure gives it the config's.
func New(opts Options) *Broker {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Broker{opts: opts, servers: map[string]*server{}, tokens: map[string]map[string]Token{}, owns: map[string]Token{}}
}

// Configure takes the servers of a config (at start and at each reload):
// a server whose credentials changed or went away loses the tokens got
// for it.
func (b *Broker) Configure(specs []config.Spec) {
	b.mu.Lock()
	defer b.mu.Unlock()
	next := map[string]*server{}
	for _, spec := range specs {
		id, err := naming.ServerID(spec.Name)
		if err != nil || !spec.PerUser() || spec.Invalid != nil {
			continue
		}
		if old, ok := b.servers[id]; ok && old.spec.Equal(spec) {
			next[id] = old
			continue
		}
		s := &server{spec: spec}
		if spec.Credentials.Mode == config.CredentialsExchange {
			s.ex = NewExchanger(id, spec.Credentials, b.opts.Client, b.opts.Now)
		}
		next[id] = s
	}
	for id := range b.servers {
		if next[id] != b.servers[id] {
			delete(b.owns, id)
			for _, byServer := range b.tokens {
				delete(byServer, id)
			}
		}
	}
	b.servers = next
}

func (b *Broker) server(id string) (*server, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.servers[id]
	if !ok {
		return nil, fmt.Errorf("server %q has no per-user credentials", id)
	}
	return s, nil
}

// ForSubject is spec as subject's own instance runs it: with the
// subject's secrets in static mode; as it is in exchange mode, whose
// token comes with each request (Authorization).
func (b *Broker) ForSubject(spec config.Spec, subject string) (config.Spec, error) {
	if spec.Credentials.Mode != config.CredentialsStatic {
		return spec, nil
	}
	u, err := secretsOf(spec, subject)
	if err != nil {
		return config.Spec{}, err
	}
	return withSecrets(spec, u), nil
}

// Authorization is the Authorization header of subject's requests to
// server: in exchange mode a token for the server exchanged for inbound()
// (the subject's current access token for the trunk), reused until shortly
// before it expires; "" in static mode, whose secrets are in the spec.
// refused, the value the server has just refused ("" for none), is
// dropped rather than given again.
func (b *Broker) Authorization(ctx context.Context, subject, id, refused string, inbound func() string) (string, error) {
	s, err := b.server(id)
	if err == nil && s.spec.Credentials.Mode == config.CredentialsOAuth {
		return b.oauth().Authorization(ctx, subject, id, refused)
	}
	if err != nil || s.ex == nil {
		return "", err
	}
	if refused != "" {
		b.dropRefused(subject, id, refused)
	}
	if tok, ok := b.cached(subject, id); ok {
		return "Bearer " + tok.Value, nil
	}
	v, err, _ := b.flights.Do(subject+"\x00"+id, func() (any, error) {
		if tok, ok := b.cached(subject, id); ok {
			return tok, nil
		}
		in := inbound()
		if in == "" {
			return Token{}, fmt.Errorf("server %q needs a signed-in caller: %q has no open session whose token could be exchanged", id, subject)
		}
		// Not the request's ctx: waiters share the result.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		tok, err := s.ex.Exchange(ctx, in)
		if err != nil {
			b.opts.Logger.Warn("token exchange failed", "server", id, "subject", subject, "error", err)
			return Token{}, err
		}
		b.opts.Logger.Debug("token exchanged", "server", id, "subject", subject, "expires", tok.Expires)
		b.store(subject, id, tok)
		return tok, nil
	})
	if err != nil {
		return "", err
	}
	return "Bearer " + v.(Token).Value, nil
}

// Catalog is the Authorization header of the instance every caller
// shares, which only lists the server's catalog (it serves no caller's
// call): in exchange mode the trunk's own token (client credentials), in
// static mode none (the entry's own headers apply). refused is the value
// the server has just refused ("" for none): the trunk's own sign-in drops
// it.
func (b *Broker) Catalog(ctx context.Context, id, refused string) (string, error) {
	s, err := b.server(id)
	if err == nil && s.spec.Credentials.Mode == config.CredentialsOAuth {
		return b.oauth().Catalog(ctx, id, refused)
	}
	if err != nil || s.ex == nil {
		return "", err
	}
	b.mu.Lock()
	tok := b.owns[id]
	b.mu.Unlock()
	if tok.usable(b.opts.Now()) {
		return "Bearer " + tok.Value, nil
	}
	v, err, _ := b.flights.Do("\x00"+id, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return s.ex.ClientToken(ctx)
	})
	if err != nil {
		return "", err
	}
	tok = v.(Token)
	b.mu.Lock()
	b.owns[id] = tok
	b.mu.Unlock()
	return "Bearer " + tok.Value, nil
}

// Forget drops every token got for subject.
func (b *Broker) Forget(subject string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.tokens, subject)
}

// Holding reports how many subjects have tokens kept: for tests and
// status, never which.
func (b *Broker) Holding() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.tokens)
}

// dropRefused forgets subject's token for id when it is the value the
// server refused, so that the next request exchanges again.
func (b *Broker) dropRefused(subject, id, refused string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if tok := b.tokens[subject][id]; "Bearer "+tok.Value == refused {
		delete(b.tokens[subject], id)
	}
}

func (b *Broker) oauth() OAuthTokens {
	if b.opts.OAuth == nil {
		return noOAuth{}
	}
	return b.opts.OAuth
}

type noOAuth struct{}

func (noOAuth) Authorization(_ context.Context, _, server, _ string) (string, error) {
	return "", fmt.Errorf("server %q: per-user sign-in is not available here", server)
}

func (n noOAuth) Catalog(ctx context.Context, server, refused string) (string, error) {
	return n.Authorization(ctx, "", server, refused)
}

func (b *Broker) cached(subject, id string) (Token, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tok := b.tokens[subject][id]
	return tok, tok.usable(b.opts.Now())
}

func (b *Broker) store(subject, id string, tok Token) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens[subject] == nil {
		b.tokens[subject] = map[string]Token{}
	}
	b.tokens[subject][id] = tok
}
