package catalog

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/pin"
)

// A skill's files are read with resources/read, by the URIs its entry
// lists with their digests. Holding the entry to the lockfile is not
// enough: a host that learnt a file's URI before (or guesses it) would
// read what the server serves now. So under trunk.pin a read of a
// skill:// URI is held to the pinned skill that lists it: the content's
// digest must be the one pinned.

// checkSkillFile says why the host must not get res, server's answer to a
// resources/read of its skill file uri: under enforce, a file that no
// pinned skill of the server lists, or whose content's digest is not the
// pinned one. Under warn such a file is logged once and served.
func (p *Pinner) checkSkillFile(server, uri string, res json.RawMessage) (withheld string) {
	if p.Off() {
		return ""
	}
	enforce := p.mode == config.PinEnforce
	p.mu.Lock() // current, and once's record, are under it
	defer p.mu.Unlock()
	lock, err := p.current()
	var why string
	switch {
	case err != nil && enforce:
		return unusableLock(err, server)
	case err != nil:
		return ""
	}
	pinned, listed := pinnedFileDigest(lock.Servers[server][pin.Skills], uri)
	switch {
	case !listed:
		why = fmt.Sprintf("skill file %s of server %q is in no skill pinned in %s: run \"mcptrunk pin %s\" to review and accept its skill", uri, server, p.path, server)
	case pinned == "":
		return "" // pinned without a digest: the entry is all there is to hold
	default:
		got, ok := contentDigest(res, uri)
		if ok && strings.EqualFold(got, pinned) {
			return ""
		}
		why = fmt.Sprintf("skill file %s of server %q is not the one pinned in %s (its digest changed): run \"mcptrunk pin %s\" to review and accept it", uri, server, p.path, server)
	}
	if enforce {
		return why
	}
	p.once("skillfile:"+server+uri+why, func() { p.logger.Warn("pinning: " + why) })
	return ""
}

// pinnedFileDigest finds uri among the files (resources) of the pinned
// skills: its digest ("sha256:<hex>", "" when it has none), and whether
// any pinned skill lists it.
func pinnedFileDigest(skills map[string]pin.Entry, uri string) (digest string, listed bool) {
	for _, e := range skills {
		var def struct {
			Resources []struct {
				URI    string `json:"uri"`
				Digest string `json:"digest"`
			} `json:"resources"`
		}
		if json.Unmarshal(e.Definition, &def) != nil {
			continue
		}
		for _, f := range def.Resources {
			if f.URI == uri {
				return f.Digest, true
			}
		}
	}
	return "", false
}

// contentDigest is "sha256:<hex>" of the bytes a resources/read result
// holds for uri (its text, or its blob decoded); false when it holds none.
func contentDigest(res json.RawMessage, uri string) (string, bool) {
	var r struct {
		Contents []struct {
			URI  string  `json:"uri"`
			Text *string `json:"text"`
			Blob *string `json:"blob"`
		} `json:"contents"`
	}
	if json.Unmarshal(res, &r) != nil {
		return "", false
	}
	for _, c := range r.Contents {
		if c.URI != uri && len(r.Contents) > 1 {
			continue
		}
		var data []byte
		switch {
		case c.Text != nil:
			data = []byte(*c.Text)
		case c.Blob != nil:
			b, err := base64.StdEncoding.DecodeString(*c.Blob)
			if err != nil {
				return "", false
			}
			data = b
		default:
			return "", false
		}
		sum := sha256.Sum256(data)
		return "sha256:" + hex.EncodeToString(sum[:]), true
	}
	return "", false
}
