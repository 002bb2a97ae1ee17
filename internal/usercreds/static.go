package usercreds

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// secretsOf is subject's secrets for a server in static mode: from the
// config's users, or from the file, read now (so that an edit takes
// effect at the next instance a subject starts, without a reload).
func secretsOf(spec config.Spec, subject string) (config.UserSecrets, error) {
	c := spec.Credentials
	users := c.Users
	if c.File != "" {
		raw, err := os.ReadFile(c.File)
		if err != nil {
			return config.UserSecrets{}, fmt.Errorf("server %q: reading its credentials file: %v", spec.Name, err)
		}
		if err := json.Unmarshal(raw, &users); err != nil {
			// Not the decoder's message: it may quote the file's text.
			return config.UserSecrets{}, fmt.Errorf("server %q: its credentials file %s is not a JSON object of subject -> {\"env\": {...}, \"headers\": {...}}", spec.Name, c.File)
		}
	}
	u, ok := users[subject]
	if !ok {
		return config.UserSecrets{}, fmt.Errorf("server %q has no credentials for %q: ask whoever runs the trunk to add them", spec.Name, subject)
	}
	return u, nil
}

// withSecrets is spec as subject's instance runs it: the subject's env
// (stdio) or headers (remote) added to the entry's own, overriding them.
func withSecrets(spec config.Spec, u config.UserSecrets) config.Spec {
	if spec.Type == config.TransportStdio {
		spec.Env = merged(spec.Env, u.Env)
	} else {
		spec.Headers = merged(spec.Headers, u.Headers)
	}
	return spec
}

func merged(base, over map[string]string) map[string]string {
	if len(over) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}
