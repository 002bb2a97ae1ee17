package hostcfg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// EditConfig replaces mcptrunk's config at cfgPath, whose bytes were old
// (nil: there is none yet), with out, as every writer of it does: a backup
// of the old file first (<config>.bak-<time>), the new one written
// atomically, then read back and validated as mcptrunk will read it; when
// that fails the old file is put back and the error says why. A config
// that then holds a literal secret (LiteralSecrets) is made readable by
// the user alone, and w is told which entries hold one and how to move it
// into the environment.
func EditConfig(w io.Writer, cfgPath string, old, out []byte) error {
	backup := ""
	if old != nil {
		backup = fmt.Sprintf("%s.bak-%s", cfgPath, time.Now().Format("20060102-150405.000"))
		if err := WriteNew(backup, old); err != nil {
			return fmt.Errorf("backing up mcptrunk's config: %w", err)
		}
	}
	// A new config may hold the hosts' tokens: readable by the user only.
	if err := WriteAtomic(cfgPath, out, 0o600); err != nil {
		return err
	}
	written, err := os.ReadFile(cfgPath)
	if err == nil {
		err = ValidateConfig(written, os.LookupEnv)
	}
	if err != nil {
		if old == nil {
			os.Remove(cfgPath)
		} else if rerr := WriteAtomic(cfgPath, old, 0o600); rerr != nil {
			return fmt.Errorf("the new config does not validate (%v), and putting the old one back failed: %w; it is in %s", err, rerr, backup)
		}
		return fmt.Errorf("the new config does not validate, so %s was left as it was:\n%w", cfgPath, err)
	}
	if backup != "" {
		fmt.Fprintf(w, "Backed up %s to %s.\n", cfgPath, backup)
	}
	return protectSecrets(w, cfgPath, old, written)
}

// protectSecrets makes the config at path, whose bytes are data (old
// before the edit), readable by the user alone when it holds a literal
// secret, and says which entries hold one and how to move each into the
// environment: all of them when the mode changed, else those the edit
// brought.
func protectSecrets(w io.Writer, path string, old, data []byte) error {
	secrets := LiteralSecrets(data)
	if len(secrets) == 0 {
		return nil
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if mode := st.Mode().Perm(); mode&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return fmt.Errorf("%s holds secrets and is readable by others (%#o); making it readable by you only failed: %w", path, mode, err)
		}
		fmt.Fprintf(w, "%s holds secrets, so it is now readable by you only (it was %#o, now 0600).\n", path, mode)
	} else {
		had := LiteralSecrets(old)
		secrets = slices.DeleteFunc(secrets, func(s string) bool { return slices.Contains(had, s) })
		if len(secrets) == 0 {
			return nil
		}
	}
	fmt.Fprintf(w, "These values are written in the config itself:\n")
	for _, s := range secrets {
		fmt.Fprintf(w, "  %s\n", s)
	}
	fmt.Fprintf(w, "To keep them out of it, set each in the environment mcptrunk starts in (or the env of the host's\n"+
		"entry that runs mcptrunk) and write a reference in its place: \"NAME\": \"${NAME}\".\n")
	return nil
}

// secretName matches the names of env variables and headers whose values
// are credentials: GITHUB_TOKEN, OPENAI_API_KEY, Authorization, X-Api-Key.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(token|secret|passw(or)?d|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth|cookie|session|(^|[_-])pat($|[_-])|(^|[_-])key$)`)
})

// LiteralSecrets lists, as "server: env NAME" or "server: header NAME",
// the values of mcptrunk's config (its bytes) that are credentials written
// in the file rather than ${VAR} references: an env variable or header
// named like a credential whose value has no ${...} in it, and an OAuth
// clientSecret. Sorted; none for a config that does not parse.
func LiteralSecrets(cfg []byte) []string {
	servers, err := ConfigServers(cfg)
	if err != nil {
		return nil
	}
	var out []string
	for name, raw := range servers {
		var e struct {
			Env     map[string]string `json:"env"`
			Headers map[string]string `json:"headers"`
			OAuth   struct {
				ClientSecret string `json:"clientSecret"`
			} `json:"oauth"`
		}
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		literal := func(v string) bool { return v != "" && !strings.Contains(v, "${") }
		for k, v := range e.Env {
			if secretName().MatchString(k) && literal(v) {
				out = append(out, fmt.Sprintf("%s: env %s", name, k))
			}
		}
		for k, v := range e.Headers {
			if secretName().MatchString(k) && literal(v) {
				out = append(out, fmt.Sprintf("%s: header %s", name, k))
			}
		}
		if literal(e.OAuth.ClientSecret) {
			out = append(out, fmt.Sprintf("%s: oauth.clientSecret", name))
		}
	}
	slices.Sort(out)
	return out
}

// RemoveServer returns mcptrunk's config (its bytes) without the server
// name in its mcpServers; every other byte of the file stays. A name the
// config does not have is an error naming the servers it has.
func RemoveServer(cfg []byte, name string) ([]byte, error) {
	p := cfg
	if bytes.HasPrefix(p, []byte{0xEF, 0xBB, 0xBF}) {
		p = append([]byte("   "), p[3:]...) // same offsets, plain JSON
	}
	s, ok, err := objectMember(p, "mcpServers")
	if err != nil {
		return nil, err
	}
	var spans []span
	if ok {
		if spans, err = memberSpans(p, s.valueStart, s.valueEnd); err != nil {
			return nil, fmt.Errorf("mcpServers: %w", err)
		}
	}
	var names []string
	for i, m := range spans {
		if m.key != name {
			names = append(names, m.key)
			continue
		}
		switch {
		case i > 0: // from the end of the member before
			return splice(cfg, spans[i-1].valueEnd, m.valueEnd, nil), nil
		case len(spans) > 1: // up to the next member
			return splice(cfg, m.keyStart, spans[1].keyStart, nil), nil
		default: // the only member: an empty object
			return splice(cfg, s.valueStart, s.valueEnd, []byte("{}")), nil
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("there is no server named %q: the config has none", name)
	}
	return nil, fmt.Errorf("there is no server named %q; the config has %s", name, strings.Join(names, ", "))
}
