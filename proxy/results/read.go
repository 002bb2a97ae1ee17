package results

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// Path is what a kept whole's URI holds after the trunk's own prefix
// (mcptrunk://trunk/): Path and the whole's id, and ?page=N for a page.
const Path = "results/"

// Parse splits raw, a trunk URI's part after mcptrunk://trunk/, into a
// kept whole's id and the page asked for (0: the whole); ok is false for
// a URI that names no kept whole, err set for a page that is not a
// number from 1.
func Parse(raw string) (id string, page int, ok bool, err error) {
	rest, ok := strings.CutPrefix(raw, Path)
	if !ok {
		return "", 0, false, nil
	}
	id, query, paged := strings.Cut(rest, "?")
	if !paged {
		return id, 0, true, nil
	}
	n, found := strings.CutPrefix(query, "page=")
	page, perr := strconv.Atoi(n)
	if !found || perr != nil || page < 1 {
		return id, 0, true, fmt.Errorf("?%s: want ?page=N, N a page number from 1", query)
	}
	return id, page, true, nil
}

// Read is the resources/read result of the whole at uri (its link, with
// ?page=N when page > 0): page 0 gives the text, then the
// structuredContent (application/json) and each other content item (an
// image's or audio's data as a blob, an embedded resource as itself,
// anything else as its JSON); a page gives that page of the text and the
// structuredContent, at most the budget's bytes.
func Read(uri string, w Whole, page int) (json.RawMessage, error) {
	type content struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
	}
	var contents []any
	if page > 0 {
		n := 0
		for p := range pages(w.document(), w.Budget) {
			if n++; n == page {
				contents = append(contents, content{URI: uri, MimeType: "text/plain", Text: p})
				break
			}
		}
		if contents == nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "resource %q: the result has %d pages of at most %d bytes; ask for ?page=1 to ?page=%d", uri, w.pages(), w.Budget, w.pages())
		}
	} else {
		contents = append(contents, content{URI: uri, MimeType: "text/plain", Text: w.Text})
		if w.Structured != nil {
			contents = append(contents, content{URI: uri, MimeType: "application/json", Text: string(w.Structured)})
		}
		for _, it := range w.Others {
			contents = append(contents, other(uri, it))
		}
	}
	return json.Marshal(map[string]any{"contents": contents})
}

// other is a content item that is not text as one of a read's contents.
func other(uri string, item json.RawMessage) any {
	typ, _ := rawjson.StringField(item, "type")
	switch typ {
	case "image", "audio":
		data, _ := rawjson.StringField(item, "data")
		mime, _ := rawjson.StringField(item, "mimeType")
		if _, err := base64.StdEncoding.DecodeString(data); err == nil {
			return map[string]string{"uri": uri, "mimeType": mime, "blob": data}
		}
	case "resource":
		if start, end, found, err := rawjson.FieldSpan(item, "resource"); err == nil && found {
			return item[start:end]
		}
	}
	return map[string]string{"uri": uri, "mimeType": "application/json", "text": string(item)}
}
