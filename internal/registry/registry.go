// Package registry reads an MCP server registry (the official one at
// registry.modelcontextprotocol.io, or any other speaking its /v0.1 read
// API) and turns a server's server.json into an entry of mcptrunk's
// config (entry.go). It knows nothing of the config file.
package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/httpx"
	"github.com/mcptrunk/mcptrunk/internal/logkey"
)

// Official is the official MCP registry.
const Official = "https://registry.modelcontextprotocol.io"

// maxBody bounds what is read of one answer: a page of servers is tens of
// KiB.
const maxBody = 8 << 20

// Client reads one registry.
type Client struct {
	Base string       // the registry's URL, without /v0.1
	HTTP *http.Client // nil: a client with a 30 s timeout
}

// Entry is one server of a listing: its server.json and the registry's
// own facts about it.
type Entry struct {
	Server Server `json:"server"`
	Meta   struct {
		Official struct {
			Status   string `json:"status"` // active, deprecated, deleted
			IsLatest bool   `json:"isLatest"`
		} `json:"io.modelcontextprotocol.registry/official"`
	} `json:"_meta"`
}

// Status is the registry's status of the server ("active" when unsaid).
func (e Entry) Status() string {
	if s := e.Meta.Official.Status; s != "" {
		return s
	}
	return "active"
}

// Page is one page of a search.
type Page struct {
	Servers []Entry `json:"servers"`
	Meta    struct {
		NextCursor string `json:"nextCursor"`
	} `json:"metadata"`
}

// NotFoundError is a server, or a version of it, the registry does not
// have.
type NotFoundError struct{ Name, Version string }

func (e *NotFoundError) Error() string {
	if e.Version == "" || e.Version == "latest" {
		return fmt.Sprintf("the registry has no server named %q", e.Name)
	}
	return fmt.Sprintf("the registry has no version %s of %q", e.Version, e.Name)
}

// Search lists the servers whose name matches query, limit at most per
// page, from cursor ("" for the first page).
func (c *Client) Search(ctx context.Context, query string, limit int, cursor string) (*Page, error) {
	q := url.Values{}
	if query != "" {
		q.Set("search", query)
	}
	if limit > 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var p Page
	if err := c.get(ctx, "/v0.1/servers?"+q.Encode(), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// SearchUpTo lists at most limit servers whose name matches query,
// reading page after page by cursor (a registry caps what one page holds);
// more says the registry has others beyond them.
func (c *Client) SearchUpTo(ctx context.Context, query string, limit int) (found []Entry, more bool, err error) {
	cursor := ""
	for len(found) < limit {
		page, err := c.Search(ctx, query, min(limit-len(found), 100), cursor)
		if err != nil {
			return nil, false, err
		}
		found = append(found, page.Servers...)
		if cursor = page.Meta.NextCursor; cursor == "" || len(page.Servers) == 0 {
			break
		}
	}
	return found, cursor != "", nil
}

// Get is one version of a server ("" or "latest": the latest).
func (c *Client) Get(ctx context.Context, name, version string) (*Entry, error) {
	if version == "" {
		version = "latest"
	}
	var e Entry
	err := c.get(ctx, "/v0.1/servers/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), &e)
	if err == errNotFound {
		return nil, &NotFoundError{Name: name, Version: version}
	}
	if err != nil {
		return nil, err
	}
	return &e, nil
}

var errNotFound = fmt.Errorf("not found")

func (c *Client) get(ctx context.Context, path string, into any) error {
	base := strings.TrimSuffix(c.Base, "/")
	if base == "" {
		base = Official
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("registry %s: %w", base, err)
	}
	defer httpx.DrainClose(resp)
	body := httpx.ReadLimited(resp.Body, maxBody)
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return errNotFound
	case !httpx.Is2xx(resp.StatusCode):
		return fmt.Errorf("registry %s: HTTP %d: %s", base, resp.StatusCode, logkey.Clip(string(body)))
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("registry %s: the answer is not what the registry API returns: %v", base, err)
	}
	return nil
}
