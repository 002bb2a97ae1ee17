package proxy

import (
	"encoding/json"
	"fmt"

	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/proxy/results"
	"github.com/mcptrunk/mcptrunk/proxy/trunktools"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Tool results over their budget (maxResultBytes, proxy/results): the
// host gets the beginning and a link, and the whole is kept for the
// caller that made the call, read back with resources/read of
// mcptrunk://trunk/results/<id>.

// keptResults are the wholes the trunk keeps, by owner.
type keptResults = results.Store[keptOwner]

func newKeptResults() *keptResults { return results.NewStore[keptOwner](nil) }

// keptOwner is whom a kept whole is for: a session, or for a stateless
// request, whose session ends with its answer, what its task ids are
// bound to (the caller's subject; nothing for an anonymous one) and its
// profile.
type keptOwner struct {
	session          *Session
	binding, profile string
}

// keptOwnerOf is the owner of what a request of session s keeps; false
// for a request that no host made (the CLI's one-shot commands), which
// nobody could read back.
func keptOwnerOf(s *Session) (keptOwner, bool) {
	switch {
	case s == nil:
		return keptOwner{}, false
	case !s.perRequest:
		return keptOwner{session: s}, true
	}
	return keptOwner{binding: taskBinding(s), profile: s.profile}, true
}

// fitResult is the result res of c's tool raw as it reaches the host
// under its budget (maxResultBytes, 0 for none): unchanged within it, and for
// a code-mode run's call; past it cut, the whole kept for the caller of
// rq (results.Over.Cut), whom cat, its view, tells how to read it.
func (t *Trunk) fitResult(rq request, cat *catalog.Catalog, c *upstream.Client, raw string, res json.RawMessage) json.RawMessage {
	spec := c.Spec()
	spec.Overrides = rq.overrides(c.Name(), spec.Overrides) // a profile's maxResultBytes
	budget := spec.ResultBytes(raw)
	if budget == 0 || rq.inRun {
		return res
	}
	over := results.Measure(res, budget)
	if over == nil {
		return res
	}
	owner, ok := keptOwnerOf(rq.session)
	if !ok {
		return res
	}
	link := results.Link{For: t.kept.TTL(), ReadTool: trunktools.ReadToolName(cat)}
	for _, it := range c.Catalog().Tools {
		if it.Key == raw {
			link.OutputSchema = rawjson.HasField(it.Raw, "outputSchema")
		}
	}
	if id, ok := t.kept.Keep(owner, over.Whole()); ok {
		link.URI = naming.ResourceURI(naming.TrunkServer, results.Path+id)
	} else {
		link.NotKept = fmt.Sprintf("it is larger than the %d bytes the trunk keeps for one caller", t.kept.MaxOwnerBytes())
	}
	return over.Cut(link)
}

// readKept answers resources/read of a kept whole's link (raw, the part
// after mcptrunk://trunk/), whole or one page. A link that is not the
// caller's gets the answer one that was never given gets.
func (t *Trunk) readKept(rq request, uri, id string, page int, perr error) (json.RawMessage, error) {
	owner, ok := keptOwnerOf(rq.session)
	var w results.Whole
	if ok {
		w, ok = t.kept.Get(owner, id)
	}
	if !ok {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "unknown resource %q: no result is kept under it for you (a cut result is kept for the session that called the tool, for %s)", uri, results.Minutes(t.kept.TTL()))
	}
	if perr != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "resource %q: %v", uri, perr)
	}
	return results.Read(uri, w, page)
}

// KeptResultsBound is the most memory the tool results cut to their
// budget may keep, for the process's memory limit: results.DefaultMaxBytes
// when a server in the config has a budget (maxResultBytes, its own or a
// tool's, a profile's included), else 0.
func (t *Trunk) KeptResultsBound() int64 {
	cfg := t.state.Load().cfg
	for _, byServer := range cfg.Trunk.ProfileOverrides {
		for _, o := range byServer {
			for _, to := range o.Tools {
				if to.MaxResultBytes > 0 {
					return results.DefaultMaxBytes
				}
			}
		}
	}
	for _, s := range cfg.Servers {
		if s.MaxResultBytes > 0 {
			return results.DefaultMaxBytes
		}
		for _, o := range s.Overrides.Tools {
			if o.MaxResultBytes > 0 {
				return results.DefaultMaxBytes
			}
		}
	}
	return 0
}
