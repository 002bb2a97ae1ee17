package accesstoken

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"

	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// RefetchEvery bounds how often an unknown key id may make the key set be
// fetched again.
const RefetchEvery = time.Minute

// fetchTimeout bounds one fetch of the issuer's metadata and keys: the
// fetch belongs to no one request (callers share it), so it has a
// deadline of its own.
const fetchTimeout = 10 * time.Second

// keySet holds the issuer's signing keys, fetched lazily and refreshed when
// a token names a key it does not hold. A fetch runs outside the lock and
// once for all the tokens waiting on it, so a slow or unreachable issuer
// delays only the tokens signed by a key not held yet, never those whose
// key is.
type keySet struct {
	issuer  string
	client  *http.Client
	now     func() time.Time
	fetches singleflight.Group

	mu      sync.Mutex
	jwksURI string
	keys    jose.JSONWebKeySet
	tried   time.Time // the last attempt, successful or not
}

// key returns the key named kid, fetching the set when it is not known
// yet and the last attempt is old enough.
func (s *keySet) key(ctx context.Context, kid string) (*jose.JSONWebKey, error) {
	s.mu.Lock()
	k := s.find(kid)
	due := s.tried.IsZero() || s.now().Sub(s.tried) >= RefetchEvery
	s.mu.Unlock()
	if k != nil {
		return k, nil
	}
	if !due {
		return nil, fmt.Errorf("no key %q in the issuer's key set", logkey.Clip(kid))
	}
	select {
	case r := <-s.fetches.DoChan("keys", func() (any, error) { return nil, s.refresh() }):
		if r.Err != nil {
			return nil, r.Err
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.find(kid); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("no key %q in the issuer's key set", logkey.Clip(kid))
}

// find is the signing key named kid; s.mu is held.
func (s *keySet) find(kid string) *jose.JSONWebKey {
	for i := range s.keys.Keys {
		k := &s.keys.Keys[i]
		if k.KeyID == kid && (k.Use == "" || k.Use == "sig") {
			return k
		}
	}
	return nil
}

// refresh fetches the key set (the metadata first, once), holding s.mu
// only to read and store. The attempt counts as made when it ends: a
// token checked while it is under way joins it rather than finding the
// fetch done and its key missing.
func (s *keySet) refresh() error {
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	defer func() {
		s.mu.Lock()
		s.tried = s.now()
		s.mu.Unlock()
	}()
	s.mu.Lock()
	uri := s.jwksURI
	s.mu.Unlock()
	if uri == "" {
		var err error
		if uri, err = s.discover(ctx); err != nil {
			return err
		}
	}
	var set jose.JSONWebKeySet
	if err := s.getJSON(ctx, uri, &set); err != nil {
		return fmt.Errorf("the issuer's key set: %w", err)
	}
	s.mu.Lock()
	s.jwksURI, s.keys = uri, set
	s.mu.Unlock()
	return nil
}

// discover reads the issuer's metadata for its key set's URL.
func (s *keySet) discover(ctx context.Context) (string, error) {
	md, err := Discover(ctx, s.client, s.issuer)
	if err != nil {
		return "", err
	}
	if md.JWKSURI == "" {
		return "", fmt.Errorf("the issuer's metadata has no jwks_uri")
	}
	return md.JWKSURI, nil
}

func (s *keySet) getJSON(ctx context.Context, url string, v any) error {
	return getJSON(ctx, s.client, url, v)
}

func getJSON(ctx context.Context, client *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}
