package testkit

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Registry is a stand-in for an MCP server registry: the read API of
// /v0.1 over the server.json documents in internal/registry/testdata
// (each a listing entry: {"server": ..., "_meta": ...}), a page of at
// most pageSize servers at a time, the cursor being the name to start
// from. A search matches names and descriptions, ignoring case.
type Registry struct {
	*httptest.Server
}

// StartRegistry starts the stand-in; it is closed when the test ends.
func StartRegistry(t testing.TB, pageSize int) *Registry {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "internal", "registry", "testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no registry documents: %v", err)
	}
	type doc struct {
		name, description, version string
		raw                        json.RawMessage
	}
	var docs []doc
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Server struct{ Name, Description, Version string } `json:"server"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		docs = append(docs, doc{d.Server.Name, d.Server.Description, d.Server.Version, data})
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].name < docs[j].name })
	r := &Registry{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v0.1/servers", func(w http.ResponseWriter, req *http.Request) {
		q := strings.ToLower(req.URL.Query().Get("search"))
		cursor := req.URL.Query().Get("cursor")
		limit, _ := strconv.Atoi(req.URL.Query().Get("limit"))
		if limit <= 0 || limit > pageSize {
			limit = pageSize
		}
		var page []json.RawMessage
		next := ""
		for _, d := range docs {
			if d.name < cursor || q != "" && !strings.Contains(strings.ToLower(d.name+" "+d.description), q) {
				continue
			}
			if len(page) == limit {
				next = d.name
				break
			}
			page = append(page, d.raw)
		}
		writeJSON(w, map[string]any{"servers": page, "metadata": map[string]any{"nextCursor": next, "count": len(page)}})
	})
	mux.HandleFunc("GET /v0.1/servers/{name}/versions/{version}", func(w http.ResponseWriter, req *http.Request) {
		name, version := req.PathValue("name"), req.PathValue("version")
		for _, d := range docs {
			if d.name == name && (version == "latest" || version == d.version) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(d.raw)
				return
			}
		}
		http.Error(w, `{"title":"Not Found","status":404,"detail":"Server not found"}`, http.StatusNotFound)
	})
	r.Server = httptest.NewServer(mux)
	t.Cleanup(r.Close)
	return r
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
