// Package skills carries the skills extension (io.modelcontextprotocol/skills,
// SEP-2640) across the trunk.
//
// Every server's skills are listed in one skills/list, skills/get and
// resources/directory/read go to the server a URI names, and every URI in
// their results is namespaced as resource URIs are (skill:// keeps its
// scheme: naming.ResourceURI), so that a host reads a skill's files back
// through the trunk. Digests and sizes pass byte for
// byte: a file read through the trunk is the server's, so its digest still
// matches. The rewriting is the catalog's (catalog.NamespaceSkill); the
// trunk routes skills/get and resources/directory/read (proxy/route.go).
package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/extensions"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// The extension's methods (its identifier: extensions.SkillsExtension).
const (
	ListMethod    = "skills/list"
	GetMethod     = "skills/get"
	DirReadMethod = "resources/directory/read"
)

// ListOf is List over the ready clients that declare the extension, called
// for the host request opts describes (upstream.CallOptions), each
// skill kept when keep("skill", server, its URI, its exported URI) says so
// (catalog.Catalog.Admits: the caller's view) and pins does not withhold
// it (catalog.Pinner.CheckSkill: trunk.pin).
func ListOf(ctx context.Context, clients []*upstream.Client, opts upstream.CallOptions, keep func(kind, server, raw, exported string) bool, pins *catalog.Pinner, logger *slog.Logger) (json.RawMessage, error) {
	var servers []Server
	for _, c := range clients {
		if state, _ := c.State(); state == upstream.StateReady && Declares(c) {
			servers = append(servers, Server{Name: c.Name(), Call: c.For(opts).Call})
		}
	}
	admit := func(server, raw, exported string, skill json.RawMessage) bool {
		return keep("skill", server, raw, exported) && pins.CheckSkill(server, skill) == ""
	}
	return list(ctx, servers, admit, logger)
}

// Declares reports whether server c declared the extension.
func Declares(c *upstream.Client) bool {
	return extensions.OfRaw(c.Init().RawCapabilities)[extensions.SkillsExtension] != nil
}

// Entries is every skill s lists (its pages followed), each entry as the
// server wrote it: what mcptrunk pin records.
func Entries(ctx context.Context, s Server) ([]json.RawMessage, error) {
	skills, _, err := listAll(ctx, s)
	return skills, err
}

// KindOf is the kind of item a request by URI concerns, as the policy
// names it: a skill for skills/get, else a resource.
func KindOf(method string) string {
	if method == GetMethod {
		return "skill"
	}
	return "resource"
}

// Server is one server that declares the extension, as List asks it.
type Server struct {
	Name string
	Call func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// maxPages bounds the pages List follows on one server: a server whose
// cursors never end must not hold the host's request forever.
const maxPages = 100

// list is skills/list for the host: every server's skills, each server's
// pages followed to the end, in the servers' order, each skill's URIs
// namespaced, those keep refuses left out. A server that fails is left out
// and logged; the others answer. The trunk's list is one page, private to
// the caller (what it holds depends on the trunk's config and policy), and
// fresh as long as the freshest of the servers' says.
func list(ctx context.Context, servers []Server, keep func(server, uri, exported string, skill json.RawMessage) bool, logger *slog.Logger) (json.RawMessage, error) {
	var all [][]byte
	ttl := int64(-1)
	for _, s := range servers {
		skills, serverTTL, err := listAll(ctx, s)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			logger.Warn("skills/list failed: the server's skills are left out", "server", s.Name, "error", err)
			continue
		}
		if serverTTL >= 0 && (ttl < 0 || serverTTL < ttl) {
			ttl = serverTTL
		}
		for _, skill := range skills {
			raw, _ := rawjson.StringField(skill, "uri")
			if !keep(s.Name, raw, naming.ResourceURI(s.Name, raw), skill) {
				continue
			}
			all = append(all, catalog.NamespaceSkill(s.Name, skill))
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"skills":[`)
	b.Write(bytes.Join(all, []byte(",")))
	b.WriteString(`],"ttlMs":`)
	b.WriteString(strconv.FormatInt(max(ttl, 0), 10))
	b.WriteString(`,"cacheScope":"private"}`)
	return b.Bytes(), nil
}

// listAll follows one server's pages.
func listAll(ctx context.Context, s Server) (skills []json.RawMessage, ttl int64, err error) {
	ttl = -1
	params := json.RawMessage(`{}`)
	for range maxPages {
		res, err := s.Call(ctx, ListMethod, params)
		if err != nil {
			return nil, 0, err
		}
		var page struct {
			Skills     []json.RawMessage `json:"skills"`
			TTL        *int64            `json:"ttlMs"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, 0, fmt.Errorf("skills/list answered %v", err)
		}
		skills = append(skills, page.Skills...)
		if page.TTL != nil && (ttl < 0 || *page.TTL < ttl) {
			ttl = *page.TTL
		}
		if page.NextCursor == "" {
			return skills, ttl, nil
		}
		params, _ = json.Marshal(map[string]string{"cursor": page.NextCursor})
	}
	return nil, 0, fmt.Errorf("skills/list: more than %d pages", maxPages)
}
