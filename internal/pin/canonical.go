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
