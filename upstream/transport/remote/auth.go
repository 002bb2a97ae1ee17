package remote

import (
	"errors"
	"net/http"

	"github.com/mcptrunk/mcptrunk/internal/httpx"
	"github.com/mcptrunk/mcptrunk/upstream/oauth"
)

// doAuthorized is do for a connection that uses OAuth: the token goes on
// the request, and a 401 is answered by refreshing the token and sending
// the request once more. When authorisation is needed the connection ends
// with the AuthRequiredError.
func (p *httpPeer) doAuthorized(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			var err error
			if r, err = cloneRequest(req); err != nil {
				return nil, err
			}
		}
		sent, err := p.auth.Apply(r)
		if err != nil {
			return nil, p.authError(err)
		}
		resp, err := p.send(r)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			return resp, err
		}
		retry, aerr := p.auth.Rejected(r.Context(), sent, resp.Header.Values("WWW-Authenticate"), attempt > 0)
		if !retry && aerr == nil {
			return resp, nil // not OAuth's 401: the caller reports it
		}
		httpx.DrainClose(resp)
		if aerr != nil {
			return nil, p.authError(aerr)
		}
	}
}

// authError ends the connection when err says authorisation is needed:
// nothing more can be done on it.
func (p *httpPeer) authError(err error) error {
	var need *oauth.AuthRequiredError
	if errors.As(err, &need) {
		p.fail(err)
	}
	return err
}

// cloneRequest copies req with a fresh body, to send it again.
func cloneRequest(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return nil, errors.New("the request cannot be sent again")
		}
		body, err := req.GetBody()
		if err != nil {
			return nil, errors.New("building the request failed")
		}
		r.Body = body
	}
	return r, nil
}
