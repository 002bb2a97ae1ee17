package accesstoken

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// IssuerMetadata is what the trunk reads of an authorization server's
// metadata: where its keys are (to check tokens) and its token endpoint
// (to exchange them, internal/usercreds).
type IssuerMetadata struct {
	Issuer        string `json:"issuer"`
	JWKSURI       string `json:"jwks_uri"`
	TokenEndpoint string `json:"token_endpoint"`
}

// Discover reads the issuer's metadata: OpenID Connect discovery first,
// then RFC 8414's well-known path (inserted before the issuer's path). The
// metadata must name the same issuer (RFC 8414 section 3.3), else a
// document served elsewhere could redirect the trunk to other keys or
// another token endpoint.
func Discover(ctx context.Context, client *http.Client, issuer string) (*IssuerMetadata, error) {
	if client == nil {
		client = http.DefaultClient
	}
	var errs []error
	for _, u := range metadataURLs(issuer) {
		var md IssuerMetadata
		if err := getJSON(ctx, client, u, &md); err != nil {
			errs = append(errs, err)
			continue
		}
		if md.Issuer != issuer {
			return nil, fmt.Errorf("%s names issuer %q, not %q", u, md.Issuer, issuer)
		}
		return &md, nil
	}
	return nil, fmt.Errorf("the issuer's metadata: %w", errors.Join(errs...))
}

func metadataURLs(issuer string) []string {
	trimmed := strings.TrimSuffix(issuer, "/")
	oidc := trimmed + "/.well-known/openid-configuration"
	scheme, rest, _ := strings.Cut(trimmed, "://")
	host, path, _ := strings.Cut(rest, "/")
	if path != "" {
		path = "/" + path
	}
	return []string{oidc, scheme + "://" + host + "/.well-known/oauth-authorization-server" + path}
}
