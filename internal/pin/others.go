package pin

import "strings"

// OtherNames lists, for each server, the names of every other server's
// tools that its descriptions should not mention (the shadowing finding):
// the names the host sees, exported(server, key), and, where those differ
// from the server's own names, the own names distinctive enough not to be
// ordinary words; never a name the server itself uses. tools is each
// server's own tool names.
func OtherNames(tools map[string][]string, exported func(server, key string) string) map[string][]string {
	names := map[string][]string{}
	own := map[string]map[string]bool{}
	for server, keys := range tools {
		own[server] = map[string]bool{}
		for _, key := range keys {
			own[server][key] = true
			name := exported(server, key)
			names[server] = append(names[server], name)
			if name != key && len(key) >= 6 && strings.ContainsAny(key, "_-") {
				names[server] = append(names[server], key)
			}
		}
	}
	out := map[string][]string{}
	for server := range tools {
		for other, list := range names {
			if other == server {
				continue
			}
			for _, n := range list {
				if !own[server][n] {
					out[server] = append(out[server], n)
				}
			}
		}
	}
	return out
}
