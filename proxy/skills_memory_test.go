package proxy

// The skills extension through the trunk with in-memory servers: declared
// to the host, every server's skills in one list with their URIs
// namespaced, each file read back through the trunk matching the digest
// and size its entry gives.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// skillServer serves one skill of the files given (path -> contents).
func skillServer(skill string, files map[string]string, directoryRead bool) *memserver.Server {
	entry := func() string {
		var res []string
		for path, body := range files {
			sum := sha256.Sum256([]byte(body))
			res = append(res, `{"uri":"skill://`+skill+`/`+path+`","digest":"sha256:`+hex.EncodeToString(sum[:])+`","size":`+strconv.Itoa(len(body))+`}`)
		}
		return `{"uri":"skill://` + skill + `/SKILL.md","frontmatter":{"name":"` + skill + `","description":"d"},"resources":[` + strings.Join(res, ",") + `]}`
	}
	return &memserver.Server{
		Capabilities: json.RawMessage(`{"resources":{},"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":` + strconv.FormatBool(directoryRead) + `}}}`),
		Handle: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			uri, _ := rawjson.StringField(params, "uri")
			switch method {
			case "skills/list":
				return json.RawMessage(`{"skills":[` + entry() + `],"ttlMs":30000,"cacheScope":"public"}`), nil
			case "skills/get":
				if uri != "skill://"+skill+"/SKILL.md" {
					return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "no skill %s", uri)
				}
				return json.RawMessage(`{"skill":` + entry() + `,"ttlMs":30000,"cacheScope":"public"}`), nil
			case "resources/read":
				body, ok := files[strings.TrimPrefix(uri, "skill://"+skill+"/")]
				if !ok {
					return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "no resource %s", uri)
				}
				text, _ := json.Marshal(body)
				return json.RawMessage(`{"contents":[{"uri":"` + uri + `","mimeType":"text/markdown","text":` + string(text) + `}]}`), nil
			case "resources/directory/read":
				return json.RawMessage(`{"resources":[{"uri":"skill://` + skill + `/scripts/","name":"scripts","mimeType":"inode/directory"}],"ttlMs":0,"cacheScope":"public"}`), nil
			}
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		},
	}
}

func TestSkillsInMemory(t *testing.T) {
	set := memserver.Set{
		"docs":  skillServer("pdf", map[string]string{"SKILL.md": "---\nname: pdf\ndescription: d\n---\nFill forms. \u00e9\n", "scripts/fill.py": "print('x')\n"}, true),
		"notes": skillServer("journal", map[string]string{"SKILL.md": "---\nname: journal\ndescription: d\n---\n"}, false),
	}
	_, h := memTrunk(t, set, nil, nil, nil)
	// A 2025-era host is told the extensions at initialize alone, which
	// waits for the servers to settle so that it can be.
	res, errObj := h.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"memhost","version":"1"}}`)
	if !strings.Contains(string(res), `"io.modelcontextprotocol/skills":{"directoryRead":true}`) {
		t.Errorf("the trunk does not declare the skills extension with directoryRead at initialize: %s %s", res, errObj)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	res, errObj = h.call("skills/list", `{}`)
	var list struct {
		Skills []struct {
			URI       string
			Resources []struct {
				URI    string
				Digest string
				Size   int
			}
		}
	}
	if err := json.Unmarshal(res, &list); err != nil || len(list.Skills) != 2 {
		t.Fatalf("skills/list: %s %s", res, errObj)
	}
	if list.Skills[0].URI != "skill://docs/pdf/SKILL.md" || list.Skills[1].URI != "skill://notes/journal/SKILL.md" {
		t.Errorf("skills' URIs %q, %q: want them namespaced inside skill://", list.Skills[0].URI, list.Skills[1].URI)
	}
	files := 0
	for _, s := range list.Skills {
		for _, f := range s.Resources {
			read, errObj := h.call("resources/read", `{"uri":"`+f.URI+`"}`)
			var got struct{ Contents []struct{ URI, Text string } }
			if err := json.Unmarshal(read, &got); err != nil || len(got.Contents) != 1 {
				t.Fatalf("reading %s through the trunk: %s %s", f.URI, read, errObj)
			}
			sum := sha256.Sum256([]byte(got.Contents[0].Text))
			if d := "sha256:" + hex.EncodeToString(sum[:]); d != f.Digest || len(got.Contents[0].Text) != f.Size || got.Contents[0].URI != f.URI {
				t.Errorf("%s read through the trunk: digest %s size %d uri %s; the list says %s, %d", f.URI, d, len(got.Contents[0].Text), got.Contents[0].URI, f.Digest, f.Size)
			}
			files++
		}
	}
	if files != 3 {
		t.Errorf("%d files verified, want 3", files)
	}

	res, errObj = h.call("skills/get", `{"uri":"skill://docs/pdf/SKILL.md"}`)
	if !strings.Contains(string(res), `"uri":"skill://docs/pdf/scripts/fill.py"`) {
		t.Errorf("skills/get through the trunk: %s %s", res, errObj)
	}
	res, errObj = h.call("resources/directory/read", `{"uri":"skill://docs/pdf/"}`)
	if !strings.Contains(string(res), `"uri":"skill://docs/pdf/scripts/"`) {
		t.Errorf("resources/directory/read through the trunk: %s %s", res, errObj)
	}
	if _, errObj := h.call("skills/get", `{"uri":"skill://nosuch/x/SKILL.md"}`); !strings.Contains(string(errObj), "nosuch") {
		t.Errorf("skills/get of an unknown server: %s", errObj)
	}
}
