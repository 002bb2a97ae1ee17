package accesstoken

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// WellKnown is the path prefix of protected resource metadata (RFC 9728).
const WellKnown = "/.well-known/oauth-protected-resource"

// MetadataURL is where the metadata of the trunk's resource is served:
// the well-known prefix followed by the resource URL's path (RFC 9728
// section 3.1), so that /mcp's document is at WellKnown+"/mcp".
func (v *Verifier) MetadataURL() string {
	u, err := url.Parse(v.cfg.Resource)
	if err != nil {
		return WellKnown
	}
	p := strings.TrimSuffix(u.Path, "/")
	return u.Scheme + "://" + u.Host + WellKnown + p
}

// ServeMetadata answers the protected resource metadata document.
func (v *Verifier) ServeMetadata(w http.ResponseWriter, _ *http.Request) {
	doc := map[string]any{
		"resource":                 v.cfg.Resource,
		"authorization_servers":    []string{v.cfg.Issuer},
		"bearer_methods_supported": []string{"header"},
	}
	if len(v.cfg.Scopes) > 0 {
		doc["scopes_supported"] = v.cfg.Scopes
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=3600")
	_ = json.NewEncoder(w).Encode(doc)
}

// Challenge is the WWW-Authenticate value for a refused request: it points
// at the metadata and, for a token that was sent, says what was wrong with
// it (RFC 6750 section 3), never the token itself.
func (v *Verifier) Challenge(err error) string {
	c := fmt.Sprintf("Bearer resource_metadata=%q", v.MetadataURL())
	switch {
	case errors.Is(err, ErrScope):
		c += fmt.Sprintf(`, error="insufficient_scope", scope=%q`, strings.Join(v.cfg.Scopes, " "))
	case errors.Is(err, ErrInvalid):
		c += `, error="invalid_token"`
	}
	return c
}
