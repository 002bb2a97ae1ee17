package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Token storage. Each server URL has a file of its own, named by a hash of
// the URL, in the token directory:
//
//	$MCPTRUNK_TOKEN_DIR                     when set (tests, unusual setups)
//	$XDG_STATE_HOME/mcptrunk/oauth          when XDG_STATE_HOME is an absolute path
//	%AppData%\mcptrunk\oauth                on Windows (os.UserConfigDir)
//	$HOME/.local/state/mcptrunk/oauth       otherwise
//
// On Windows the tokens are kept apart from the cache, which is in
// %LocalAppData%\mcptrunk (os.UserCacheDir) and may be cleared without
// losing an authorisation. Tokens stored by earlier versions in
// %LocalAppData%\mcptrunk\oauth stay in use there until %AppData% has a
// token directory of its own.
//
// The directory is made 0700 and every file 0600 (written to a temporary
// file and renamed, so a reader never sees half a file). A file holds the
// client registration (client id, and secret when the authorization server
// issued one), the endpoints needed to refresh, and the tokens.

// TokenDirEnv overrides where tokens are stored.
const TokenDirEnv = "MCPTRUNK_TOKEN_DIR"

// TokenDir returns the directory OAuth tokens are stored in.
func TokenDir() (string, error) {
	if d := os.Getenv(TokenDirEnv); d != "" {
		return d, nil
	}
	if d := platformTokenDir(runtime.GOOS, os.Getenv, isDir); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the token directory: %w (set %s)", err, TokenDirEnv)
	}
	return filepath.Join(home, ".local", "state", "mcptrunk", "oauth"), nil
}

// StateDir returns the directory mcptrunk keeps its state in: the token
// directory's parent ($XDG_STATE_HOME/mcptrunk, %AppData%\mcptrunk,
// $HOME/.local/state/mcptrunk), which $MCPTRUNK_TOKEN_DIR does not move.
// The state store's file (trunk.state) is there by default.
func StateDir() (string, error) {
	if d := platformTokenDir(runtime.GOOS, os.Getenv, func(string) bool { return false }); d != "" {
		return filepath.Dir(d), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "mcptrunk"), nil
}

// platformTokenDir is the token directory the environment names, or ""
// when the home directory decides: XDG_STATE_HOME when absolute, else on
// Windows %AppData% (what os.UserConfigDir returns there), unless only the
// %LocalAppData% directory of earlier versions holds tokens.
func platformTokenDir(goos string, getenv func(string) string, isDir func(string) bool) string {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcptrunk", "oauth")
	}
	if goos != "windows" {
		return ""
	}
	var dir, local string
	if d := getenv("AppData"); d != "" {
		dir = filepath.Join(d, "mcptrunk", "oauth")
	}
	if d := getenv("LocalAppData"); d != "" {
		local = filepath.Join(d, "mcptrunk", "oauth")
	}
	if local != "" && (dir == "" || !isDir(dir) && isDir(local)) {
		return local
	}
	return dir
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// tokenRecord is what is stored for one server URL. It is never logged.
type tokenRecord struct {
	Server string `json:"server"` // the store key: the server's canonical URL

	// The authorization server and the client registered with it.
	Issuer          string `json:"issuer,omitempty"`
	TokenEndpoint   string `json:"tokenEndpoint,omitempty"`
	Resource        string `json:"resource,omitempty"` // the RFC 8707 resource the tokens are for
	ClientID        string `json:"clientId,omitempty"`
	ClientSecret    string `json:"clientSecret,omitempty"`
	TokenAuthMethod string `json:"tokenEndpointAuthMethod,omitempty"`
	RedirectURI     string `json:"redirectUri,omitempty"` // the one the client was registered with
	Registered      bool   `json:"registered,omitempty"`  // the client was registered dynamically (not from the config)

	// The tokens.
	AccessToken  string    `json:"accessToken,omitempty"`
	TokenType    string    `json:"tokenType,omitempty"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Obtained     time.Time `json:"obtained,omitzero"`
}

// usable reports whether rec holds an access token.
func (r *tokenRecord) usable() bool { return r != nil && r.AccessToken != "" }

// needsRefresh reports whether the access token expires soon: within a
// fifth of its lifetime, and at most refreshSkew.
func (r *tokenRecord) needsRefresh(now time.Time) bool {
	if r == nil || r.Expiry.IsZero() {
		return false
	}
	skew := refreshSkew
	if life := r.Expiry.Sub(r.Obtained); !r.Obtained.IsZero() && life > 0 && life/5 < skew {
		skew = life / 5
	}
	return !now.Before(r.Expiry.Add(-skew))
}

// withoutTokens returns a copy of r with the tokens removed.
func (r *tokenRecord) withoutTokens() *tokenRecord {
	c := *r
	c.AccessToken, c.TokenType, c.RefreshToken, c.Scope = "", "", "", ""
	c.Expiry, c.Obtained = time.Time{}, time.Time{}
	return &c
}

// tokenStore reads and writes token files in dir (TokenDir when empty).
type tokenStore struct {
	dir string
}

// storeMu makes writes to token files one at a time within the process.
var storeMu sync.Mutex

// defaultTokenStore is the store in TokenDir, as it is now (tests change
// the environment).
func defaultTokenStore() *tokenStore { return &tokenStore{} }

func (s *tokenStore) directory() (string, error) {
	if s.dir != "" {
		return s.dir, nil
	}
	return TokenDir()
}

func (s *tokenStore) path(key string) (string, error) {
	dir, err := s.directory()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".json"), nil
}

// load returns the record for key; nil (and no error) when there is none,
// or when there is no token directory (nothing can have been stored).
func (s *tokenStore) load(key string) (*tokenRecord, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, nil
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the token file: %w", err)
	}
	var rec tokenRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.Server != key {
		// Never quote the content: it holds tokens.
		return nil, fmt.Errorf("the token file %s is damaged; remove it and authorise again", p)
	}
	return &rec, nil
}

// save writes rec under rec.Server, readable by the user only.
func (s *tokenStore) save(rec *tokenRecord) error {
	storeMu.Lock()
	defer storeMu.Unlock()
	p, err := s.path(rec.Server)
	if err != nil {
		return err
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the token directory: %w", err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("securing the token directory: %w", err)
		}
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tokens-*.tmp") // 0600
	if err != nil {
		return fmt.Errorf("writing the token file: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(append(data, '\n'))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil && runtime.GOOS != "windows" {
		werr = os.Chmod(tmp, 0o600)
	}
	if werr == nil {
		werr = os.Rename(tmp, p)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing the token file: %w", werr)
	}
	return nil
}

// remove deletes the record for key; false when there was none.
func (s *tokenStore) remove(key string) (bool, error) {
	storeMu.Lock()
	defer storeMu.Unlock()
	p, err := s.path(key)
	if err != nil {
		return false, err
	}
	err = os.Remove(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("removing the token file: %w", err)
	}
	return true, nil
}

// canonicalResource is the canonical URI of an MCP server (RFC 8707, as the
// MCP specification uses it): scheme and host in lower case, no default
// port, no query, no fragment, no trailing slash on an empty path. It keys
// the token store and is the default "resource" parameter. The query is
// dropped so that an API key in it never reaches the authorization server.
func canonicalResource(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	c := url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: u.Path, RawPath: u.RawPath}
	if port := c.Port(); (c.Scheme == "https" && port == "443") || (c.Scheme == "http" && port == "80") {
		c.Host = strings.TrimSuffix(c.Host, ":"+port)
	}
	if c.Path == "/" {
		c.Path, c.RawPath = "", ""
	}
	return c.String()
}

// ForgetAuthorization removes what is stored for spec's server (tokens and
// client registration). It reports whether anything was stored.
func ForgetAuthorization(spec Server) (bool, error) {
	return defaultTokenStore().remove(canonicalResource(spec.URL))
}

// HasToken reports whether an access token is stored for spec's server: a
// trunk waiting for authorisation watches for one stored by "mcptrunk auth".
func HasToken(spec Server) bool {
	rec, _ := defaultTokenStore().load(canonicalResource(spec.URL))
	return rec.usable()
}

// TokenFile is the file that holds what is stored for spec's server (it
// need not exist).
func TokenFile(spec Server) (string, error) {
	return defaultTokenStore().path(canonicalResource(spec.URL))
}
