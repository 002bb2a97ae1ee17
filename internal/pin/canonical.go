package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Kind is one of the four lists a server exports, named as in the lockfile.
type Kind string

const (
	Tools     Kind = "tools"
	Prompts   Kind = "prompts"
	Resources Kind = "resources"
	Templates Kind = "templates"
)

// Kinds lists every kind, in the lockfile's order.
var Kinds = []Kind{Tools, Prompts, Resources, Templates}

// Singular names one item of the kind, for messages.
func (k Kind) Singular() string {
	switch k {
	case Tools:
		return "tool"
	case Prompts:
		return "prompt"
	case Resources:
		return "resource"
	case Apps:
		return "app"
	case Skills:
		return "skill"
	}
	return "template"
}

// pinnedFields are the members of a definition that are pinned: what the
// model reads or acts on. Everything else (icons, _meta, size hints) may
// change without counting as drift.
var pinnedFields = map[Kind][]string{
	Tools:     {"name", "title", "description", "inputSchema", "outputSchema", "annotations"},
	Prompts:   {"name", "title", "description", "arguments"},
	Resources: {"uri", "name", "title", "description", "mimeType", "annotations"},
	Templates: {"uriTemplate", "name", "title", "description", "mimeType", "annotations"},
	// A skill (skills.go): its URI, its frontmatter (name, description),
	// and its files (each one's URI, digest and size), or "dynamic" when
	// the server lists them only when asked.
	Skills: {"uri", "frontmatter", "resources"},
}

// Canonical returns the canonical form of a definition (its pinned members,
// keys sorted at every depth, no insignificant space, numbers as written)
// and the hex SHA-256 of that form.
func Canonical(kind Kind, raw json.RawMessage) (json.RawMessage, string, error) {
	fields, ok := pinnedFields[kind]
	if !ok {
		return nil, "", fmt.Errorf("unknown kind %q", kind)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var all map[string]any
	if err := dec.Decode(&all); err != nil {
		return nil, "", fmt.Errorf("%s definition: %w", kind.Singular(), err)
	}
	kept := make(map[string]any, len(fields))
	for _, f := range fields {
		if v, ok := all[f]; ok {
			kept[f] = v
		}
	}
	// encoding/json sorts map keys at every depth and keeps json.Number as
	// written; SetEscapeHTML(false) keeps text as the server wrote it.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(kept); err != nil {
		return nil, "", err
	}
	canon := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	sum := sha256.Sum256(canon)
	return canon, hex.EncodeToString(sum[:]), nil
}

// Apps are the MCP Apps of a server (its ui:// resources), pinned by the
// HTML they read as: the lockfile key is the server's own URI. Not one of
// Kinds: apps are no list of the catalog, they are checked when read.
const Apps Kind = "apps"

// AppEntry is the lockfile entry of an app whose resources/read result is
// result (as the server sent it): the hash of its contents (each one's
// mimeType, text and blob, in order), and a definition that says what was
// hashed without holding the HTML.
func AppEntry(uri string, result json.RawMessage) (Entry, error) {
	var read struct {
		Contents []struct {
			MimeType string `json:"mimeType,omitempty"`
			Text     string `json:"text,omitempty"`
			Blob     string `json:"blob,omitempty"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(result, &read); err != nil {
		return Entry{}, fmt.Errorf("app %s: %w", uri, err)
	}
	contents, _ := json.Marshal(read.Contents)
	sum := sha256.Sum256(contents)
	size := 0
	mime := ""
	for _, c := range read.Contents {
		size += len(c.Text) + len(c.Blob)
		if mime == "" {
			mime = c.MimeType
		}
	}
	def, _ := json.Marshal(map[string]any{"uri": uri, "mimeType": mime, "bytes": size})
	return Entry{SHA256: hex.EncodeToString(sum[:]), Definition: def}, nil
}
