package usercreds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/statestore"
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
	// Store keeps the exchanged tokens, sealed, until they expire; nil
	// (or one that cannot seal) keeps them in memory. While it does not
	// answer, tokens are exchanged afresh: the cache is never needed.
	Store *statestore.Store
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
// server, in its store (Options.Store). Safe for concurrent use.
type Broker struct {
	opts    Options
	flights singleflight.Group // one exchange at a time per subject and server
	// life is the Broker's, until Close: the deletes Forget starts run on
	// it, off their caller's path.
	life    context.Context
	stop    context.CancelFunc
	forgets sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	servers map[string]*server              // by server id: those with per-user credentials
	held    map[string]map[string]time.Time // subject -> server -> until when this process stored its token
	stores  int                             // since held was last pruned
	owns    map[string]Token                // server -> the trunk's own token (the catalog's instance)
}

type server struct {
	spec  config.Spec
	ex    *Exchanger // exchange mode only
	entry string     // what a token was got for: a changed entry finds none of the old ones
}

// entryOf is a short digest of what in an exchange entry a token depends
// on, the same in every replica with the same config. Not the client
// secret: the names are seen by whatever else uses the Redis, and a fast
// digest of a weak secret can be guessed offline; a token is the client
// id's whatever its secret.
func entryOf(spec config.Spec) string {
	c := spec.Credentials
	sum := sha256.Sum256([]byte(strings.Join(append([]string{spec.URL, c.Issuer, c.TokenEndpoint, c.Audience, c.Resource, c.ClientID}, c.Scopes...), "\x00")))
	return hex.EncodeToString(sum[:8])
}

// tokenName is the store's name of subject's token for server id (the
// subject hashed: the store's names say nothing of who).
func tokenName(id, entry, subject string) string {
	return "exchange/" + id + "/" + entry + "/" + statestore.Subject(subject)
}

// storedToken is a Token as the store keeps it (sealed).
type storedToken struct {
	Value   string    `json:"value"`
	Expires time.Time `json:"expires"`
	Renew   time.Time `json:"renew"`
}

// New returns a Broker with no servers; Configure gives it the config's.
func New(opts Options) *Broker {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Store == nil || !opts.Store.CanSeal() {
		opts.Store = statestore.New(statestore.NewMemory(opts.Now), nil, statestore.Options{Now: opts.Now})
	}
	life, stop := context.WithCancel(context.Background())
	return &Broker{opts: opts, life: life, stop: stop, servers: map[string]*server{}, held: map[string]map[string]time.Time{}, owns: map[string]Token{}}
}

// Close stops the deletes Forget started and waits for them: what they
// had not deleted expires. Idempotent.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.stop()
	b.forgets.Wait()
}

// Configure takes the servers of a config (at start and at each reload):
// a server whose credentials changed or went away loses the tokens got
// for it.
func (b *Broker) Configure(specs []config.Spec) {
	b.mu.Lock()
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
		s := &server{spec: spec, entry: entryOf(spec)}
		if spec.Credentials.Mode == config.CredentialsExchange {
			s.ex = NewExchanger(id, spec.Credentials, b.opts.Client, b.opts.Now)
		}
		next[id] = s
	}
	var gone []string
	for id, old := range b.servers {
		if next[id] != old {
			delete(b.owns, id)
		}
		if n := next[id]; n == nil || n.entry != old.entry {
			for subject, byServer := range b.held {
				if _, ok := byServer[id]; ok {
					gone = append(gone, tokenName(id, old.entry, subject))
					delete(byServer, id)
				}
			}
		}
	}
	b.servers = next
	b.mu.Unlock()
	b.deleteAll(context.Background(), gone)
}

// deleteAll deletes the tokens named (not under b.mu: a store over the
// network may be slow), giving up after a few seconds or when ctx ends;
// what it cannot delete expires.
func (b *Broker) deleteAll(ctx context.Context, names []string) {
	if len(names) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, n := range names {
		if err := b.opts.Store.Delete(ctx, n); err != nil {
			b.opts.Logger.Debug("deleting exchanged tokens failed; they expire", "error", err)
			return
		}
	}
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
		b.dropRefused(ctx, subject, s, id, refused)
	}
	if tok, ok := b.cached(ctx, subject, s, id); ok {
		return "Bearer " + tok.Value, nil
	}
	v, err, _ := b.flights.Do(subject+"\x00"+id, func() (any, error) {
		if tok, ok := b.cached(ctx, subject, s, id); ok {
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
		b.store(ctx, subject, s, id, tok)
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

// Forget drops the tokens this process stored for subject (its instances
// closed). Those other replicas stored, which they may be using, are left
// to expire. The deletes run in the background, on the Broker's life:
// Forget is called on the pool's close path, and a store over the
// network may be slow.
func (b *Broker) Forget(subject string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var names []string
	for id := range b.held[subject] {
		if s := b.servers[id]; s != nil && s.ex != nil {
			names = append(names, tokenName(id, s.entry, subject))
		}
	}
	delete(b.held, subject)
	if len(names) == 0 || b.closed {
		return
	}
	b.forgets.Go(func() { b.deleteAll(b.life, names) })
}

// Holding reports how many subjects this process stored tokens for that
// have not expired: for tests and status, never which.
func (b *Broker) Holding() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.opts.Now()
	n := 0
	for _, byServer := range b.held {
		for _, until := range byServer {
			if now.Before(until) {
				n++
				break
			}
		}
	}
	return n
}

// dropRefused forgets subject's token for id when it is the value the
// server refused, so that the next request exchanges again.
func (b *Broker) dropRefused(ctx context.Context, subject string, s *server, id, refused string) {
	if tok, ok := b.cached(ctx, subject, s, id); ok && "Bearer "+tok.Value == refused {
		if err := b.opts.Store.Delete(ctx, tokenName(id, s.entry, subject)); err != nil {
			b.opts.Logger.Debug("deleting a refused token failed", "server", id, "subject", subject, "error", err)
		}
		b.mu.Lock()
		delete(b.held[subject], id)
		if len(b.held[subject]) == 0 {
			delete(b.held, subject)
		}
		b.mu.Unlock()
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

// cached is subject's token for id from the store when it is still to be
// used. A store that is down (or fails now) is a miss: the token is
// exchanged afresh rather than the call failing.
func (b *Broker) cached(ctx context.Context, subject string, s *server, id string) (Token, bool) {
	if !b.opts.Store.Status().Up {
		return Token{}, false
	}
	raw, err := b.opts.Store.Get(ctx, tokenName(id, s.entry, subject), true)
	if err != nil {
		if !errors.Is(err, statestore.ErrNotFound) {
			b.opts.Logger.Debug("reading an exchanged token failed; exchanging afresh", "server", id, "subject", subject, "error", err)
		}
		return Token{}, false
	}
	var st storedToken
	if err := json.Unmarshal(raw, &st); err != nil {
		return Token{}, false
	}
	tok := Token{Value: st.Value, Expires: st.Expires, renew: st.Renew}
	return tok, tok.usable(b.opts.Now())
}

// store keeps tok as subject's token for id until it expires; a store
// that fails only costs the next call an exchange.
func (b *Broker) store(ctx context.Context, subject string, s *server, id string, tok Token) {
	raw, _ := json.Marshal(storedToken{Value: tok.Value, Expires: tok.Expires, Renew: tok.renew})
	until := tok.Expires
	if until.IsZero() || until.Before(tok.renew) {
		until = tok.renew
	}
	if !b.opts.Store.Status().Up {
		return
	}
	if err := b.opts.Store.Put(ctx, tokenName(id, s.entry, subject), raw, statestore.Put{Expires: until, Seal: true}); err != nil {
		b.opts.Logger.Debug("keeping an exchanged token failed; the next call exchanges again", "server", id, "subject", subject, "error", err)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held[subject] == nil {
		b.held[subject] = map[string]time.Time{}
	}
	b.held[subject][id] = until
	if b.stores++; b.stores >= len(b.held)/2 {
		b.stores = 0
		pruneHeld(b.held, b.opts.Now())
	}
}

// pruneHeld drops from held the entries past their end, and the subjects
// left with none, so that it grows with the callers holding tokens rather
// than with every caller seen. Run once per len(held)/2 stores (held
// grows by one subject a store at most), it costs each store O(1).
func pruneHeld(held map[string]map[string]time.Time, now time.Time) {
	for subject, byServer := range held {
		for id, until := range byServer {
			if !now.Before(until) {
				delete(byServer, id)
			}
		}
		if len(byServer) == 0 {
			delete(held, subject)
		}
	}
}
