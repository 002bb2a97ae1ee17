// Package skills carries the skills extension (io.modelcontextprotocol/skills,
// SEP-2640) across the trunk: every server's skills in one skills/list,
// skills/get and resources/directory/read routed to the server a URI
// names, and every URI in their results namespaced as resource URIs are
// (skill:// keeps its scheme: naming.ResourceURI), so that a host reads a
// skill's files back through the trunk. Digests and sizes pass byte for
// byte: a file read through the trunk is the server's, so its digest still
// matches. Nothing here knows the trunk; proxy/skills.go wires it.
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
	"github.com/mcptrunk/mcptrunk/proxy/extensions"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// The extension's methods (its identifier: extensions.SkillsExtension).
const (
	ListMethod    = "skills/list"
	GetMethod     = "skills/get"
	DirReadMethod = "resources/directory/read"
)

// ListOf is List over the ready clients that declare the extension, each
// skill kept when keep("skill", server, its URI, its exported URI) says so
// (catalog.Catalog.Admits: the caller's view).
func ListOf(ctx context.Context, clients []*upstream.Client, keep func(kind, server, raw, exported string) bool, logger *slog.Logger) (json.RawMessage, error) {
	var servers []Server
	for _, c := range clients {
		if state, _ := c.State(); state == upstream.StateReady && extensions.OfRaw(c.Init().RawCapabilities)[extensions.SkillsExtension] != nil {
			servers = append(servers, Server{Name: c.Name(), Call: c.Call})
		}
	}
	return List(ctx, servers, func(server, raw, exported string) bool { return keep("skill", server, raw, exported) }, logger)
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

// List is skills/list for the host: every server's skills, each server's
// pages followed to the end, in the servers' order, each skill's URIs
// namespaced, those keep refuses left out. A server that fails is left out
// and logged; the others answer. The trunk's list is one page, private to
// the caller (what it holds depends on the trunk's config and policy), and
// fresh as long as the freshest of the servers' says.
func List(ctx context.Context, servers []Server, keep func(server, uri, exported string) bool, logger *slog.Logger) (json.RawMessage, error) {
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
			if !keep(s.Name, raw, naming.ResourceURI(s.Name, raw)) {
				continue
			}
			ns, err := namespaceSkill(s.Name, skill)
			if err != nil {
				logger.Warn("a skill that is not an object with a uri is left out", "server", s.Name, "error", err)
				continue
			}
			all = append(all, ns)
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

// Namespace rewrites the result of skills/get or resources/directory/read
// from server: the URIs of its skill, or of the directory's entries. The
// server's own _meta keys describe its hop, not the trunk's, and go.
func Namespace(method, server string, res json.RawMessage) (json.RawMessage, error) {
	var err error
	switch method {
	case GetMethod:
		res, err = mapField(res, "skill", func(skill json.RawMessage) (json.RawMessage, error) { return namespaceSkill(server, skill) })
	case DirReadMethod:
		res, err = mapArray(res, "resources", func(r json.RawMessage) (json.RawMessage, error) { return namespaceURI(server, r) })
	}
	if err != nil {
		return nil, fmt.Errorf("%s from server %q: %v", method, server, err)
	}
	return res, nil
}

// namespaceSkill rewrites a skill's uri and its files' (resources is an
// array of files, or "dynamic", which stays).
func namespaceSkill(server string, skill json.RawMessage) (json.RawMessage, error) {
	skill, err := namespaceURI(server, skill)
	if err != nil {
		return nil, err
	}
	if start, end, found, _ := rawjson.FieldSpan(skill, "resources"); !found || skill[start] != '[' || end <= start {
		return skill, nil
	}
	return mapArray(skill, "resources", func(f json.RawMessage) (json.RawMessage, error) { return namespaceURI(server, f) })
}

// namespaceURI rewrites the uri member of an object.
func namespaceURI(server string, obj json.RawMessage) (json.RawMessage, error) {
	uri, err := rawjson.StringField(obj, "uri")
	if err != nil || uri == "" {
		return nil, fmt.Errorf("an entry has no uri")
	}
	return rawjson.ReplaceString(obj, "uri", naming.ResourceURI(server, uri))
}

// mapField replaces the member key of obj by fn of it.
func mapField(obj json.RawMessage, key string, fn func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	start, end, found, err := rawjson.FieldSpan(obj, key)
	if err != nil || !found {
		return nil, fmt.Errorf("no %s in the result", key)
	}
	v, err := fn(obj[start:end])
	if err != nil {
		return nil, err
	}
	return rawjson.ReplaceField(obj, key, v)
}

// mapArray replaces each element of the array member key of obj by fn of
// it, keeping the bytes of everything else.
func mapArray(obj json.RawMessage, key string, fn func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	return mapField(obj, key, func(arr json.RawMessage) (json.RawMessage, error) {
		var items []json.RawMessage
		if err := json.Unmarshal(arr, &items); err != nil {
			return nil, fmt.Errorf("%s is not an array", key)
		}
		out := make([][]byte, len(items))
		for i, it := range items {
			v, err := fn(it)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return append(append([]byte{'['}, bytes.Join(out, []byte(","))...), ']'), nil
	})
}
