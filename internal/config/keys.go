package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/suggest"
)

// The keys the config knows are the json tags of the raw structs Parse
// decodes into: one list, which the schema test holds docs/config.schema.json
// to, both ways. A key outside it is a warning naming the file, the server
// and the key it probably meant, not an error: the file is a superset of
// Claude Desktop's, and hosts keep keys of their own in it.

// keySet is one object of the config: its known keys and the objects
// nested in it.
type keySet struct {
	raw    reflect.Type
	nested map[string]*keySet
	// values, when set, makes the object a map: its keys are names (a
	// tool's, an argument's), each value an object of this set.
	values *keySet
	// extra are keys that mean nothing to mcptrunk and are no mistake.
	extra []string
	// loose: an unknown key is someone else's unless it is close to a
	// known one (the top level, where the hosts keep their settings).
	loose bool
}

var filterKeys = &keySet{raw: reflect.TypeFor[rawFilter]()}

// configKeys is the whole file's tree of known keys.
var configKeys = &keySet{
	raw:   reflect.TypeFor[rawConfig](),
	extra: []string{"$schema"},
	loose: true,
	nested: map[string]*keySet{
		"trunk": {
			raw: reflect.TypeFor[rawTrunk](),
			nested: map[string]*keySet{
				"audit":    {raw: reflect.TypeFor[rawAudit]()},
				"codeMode": {raw: reflect.TypeFor[rawCodeMode]()},
				"http":     {raw: reflect.TypeFor[rawHTTP](), nested: map[string]*keySet{"auth": {raw: reflect.TypeFor[rawHTTPAuth]()}}},
				"metrics":  {raw: reflect.TypeFor[rawMetrics]()},
				"policy":   {raw: reflect.TypeFor[rawPolicy]()},
				"state":    {raw: reflect.TypeFor[rawState]()},
			},
		},
	},
}

// serverKeys are the keys of one mcpServers entry.
var serverKeys = &keySet{
	raw:   reflect.TypeFor[rawServer](),
	extra: HostEntryKeys,
	nested: map[string]*keySet{
		"timeouts":    {raw: reflect.TypeFor[rawTimeouts]()},
		"oauth":       {raw: reflect.TypeFor[rawOAuth]()},
		"credentials": {raw: reflect.TypeFor[rawCredentials]()},
		"breaker":     {raw: reflect.TypeFor[rawBreaker]()},
		"tools":       filterKeys,
		"prompts":     filterKeys,
		"resources":   filterKeys,
		"overrides": {raw: reflect.TypeFor[rawOverrides](), nested: map[string]*keySet{
			"tools": {values: &keySet{raw: reflect.TypeFor[rawToolOverride](), nested: map[string]*keySet{
				"arguments": {values: &keySet{raw: reflect.TypeFor[rawArgumentOverride]()}},
			}}},
			"prompts": {values: &keySet{raw: reflect.TypeFor[rawPromptOverride](), nested: map[string]*keySet{
				"arguments": {values: &keySet{raw: reflect.TypeFor[rawPromptArgumentOverride]()}},
			}}},
		}},
	},
}

// HostEntryKeys are keys the hosts that keep an "mcpServers" object put in
// a server's entry and mcptrunk does not read: they are no mistake, and
// pointing --config at a host's own file must not warn about them.
var HostEntryKeys = []string{
	"alwaysAllow", "autoApprove", "timeout", "transportType", // Cline, Roo Code
	"auth", "envFile", // Cursor
	"disabledTools", "serverUrl", // Windsurf
	"description", "gallery", "version", // registry data
	"icon", // Claude Desktop
}

// keyAliases are words people write for a key that edit distance would not
// find.
var keyAliases = map[string]string{
	"environment": "env", "environ": "env", "arguments": "args", "argv": "args", "cmd": "command",
	"dir": "cwd", "workingDirectory": "cwd", "enabled": "disabled", "header": "headers",
}

// known returns the set's own keys.
func (k *keySet) known() []string {
	var out []string
	for f := range k.raw.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// check appends a warning for each unknown key of the object raw (at
// path, such as `server "gh": ` or "trunk."), and checks the nested
// objects. What is not an object is Parse's to report.
func (k *keySet) check(raw json.RawMessage, where, path string, warn *[]string) {
	if rawKind(raw) != "object" {
		return
	}
	keys, vals, err := decodeRawObject(raw)
	if err != nil {
		return
	}
	if k.values != nil {
		for i, key := range keys {
			k.values.check(vals[i], where, path+key+".", warn)
		}
		return
	}
	known := k.known()
	for i, key := range keys {
		if sub, ok := k.nested[key]; ok {
			sub.check(vals[i], where, path+key+".", warn)
			continue
		}
		if slices.Contains(known, key) || slices.Contains(k.extra, key) {
			continue
		}
		meant := meantKey(key, known)
		if meant == "" && k.loose {
			continue
		}
		msg := fmt.Sprintf("%sunknown key %q, ignored", where, path+key)
		if meant != "" {
			msg = fmt.Sprintf("%sunknown key %q (did you mean %q?), ignored", where, path+key, path+meant)
		}
		*warn = append(*warn, msg)
	}
}

// meantKey is the known key an unknown one probably stands for, or "".
func meantKey(key string, known []string) string {
	aliases := sortedMapKeys(keyAliases)
	for _, alias := range aliases {
		if to := keyAliases[alias]; strings.EqualFold(key, alias) && slices.Contains(known, to) {
			return to
		}
	}
	if m := suggest.Closest(key, known); m != "" {
		return m
	}
	for _, alias := range aliases {
		if to := keyAliases[alias]; slices.Contains(known, to) && suggest.Closest(key, []string{alias}) != "" {
			return to
		}
	}
	return ""
}

// unknownKeys returns a warning for every key of the config that mcptrunk
// does not know and no host is known to use, each naming the server and
// the key it probably meant. The order is the file's.
func unknownKeys(rc rawConfig, data []byte) []string {
	var warn []string
	configKeys.check(data, "", "", &warn)
	if rawKind(rc.MCPServers) != "object" {
		return warn
	}
	names, vals, err := decodeRawObject(rc.MCPServers)
	if err != nil {
		return warn
	}
	for i, name := range names {
		serverKeys.check(vals[i], fmt.Sprintf("server %q: ", name), "", &warn)
	}
	return warn
}
