package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
)

// Redacted replaces the value of a key that looks secret.
const Redacted = "[redacted]"

// secretWords are the words of a key that make it look secret. A key is
// split into words at every character that is not a letter or digit and
// at camelCase boundaries, and compared word by word, case-insensitively:
// api_key, apiKey, X-API-Key, accessToken, client_secret, Authorization
// and db.password are secret; keyword, monkey, tokenizer and passage are
// not. Compounds that are written as one word are listed whole (apikey,
// passwd). Plurals are not words here: max_tokens is a count, not a
// credential. A key that merely contains a secret word inside a longer
// word is kept: keyword and monkey are common argument names, and
// redacting them would make the log useless for what it is for.
var secretWords = map[string]bool{
	"token": true, "password": true, "passwords": true, "secret": true, "secrets": true,
	"key": true, "authorization": true,
	"apikey": true, "passwd": true, "passphrase": true, "accesstoken": true,
	"refreshtoken": true, "authtoken": true, "privatekey": true, "secretkey": true,
}

// SecretKey reports whether an argument's key looks secret (see
// secretWords).
func SecretKey(key string) bool {
	for _, w := range words(key) {
		if secretWords[w] {
			return true
		}
	}
	return false
}

// words splits a key into lower-case words: at non-alphanumerics, between
// letters and digits (key2, oauth2token), before an upper-case letter that
// follows a lower-case one, and before the last upper-case letter of a run
// followed by a lower-case one (APIKey is API, Key).
func words(key string) []string {
	var out []string
	rs := []rune(key)
	begin := -1
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if begin >= 0 {
				out = append(out, strings.ToLower(string(rs[begin:i])))
				begin = -1
			}
			continue
		}
		if begin >= 0 && boundary(rs, i) {
			out = append(out, strings.ToLower(string(rs[begin:i])))
			begin = i
		}
		if begin < 0 {
			begin = i
		}
	}
	if begin >= 0 {
		out = append(out, strings.ToLower(string(rs[begin:])))
	}
	return out
}

// arguments returns a request's arguments for its line, redacted: nil when
// it has none, a string saying so when they are not JSON.
func arguments(params json.RawMessage) json.RawMessage {
	start, end, found, err := rawjson.FieldSpan(params, "arguments")
	if err != nil || !found {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(params[start:end]))
	dec.UseNumber() // numbers kept as sent
	var v any
	if dec.Decode(&v) != nil {
		return json.RawMessage(`"[not JSON]"`)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(redact(v)) != nil {
		return json.RawMessage(`"[not JSON]"`)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// redact replaces, at any depth, the value of every key that looks secret,
// whatever that value is (a string, or an object of credentials).
func redact(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if SecretKey(k) {
				v[k] = Redacted
			} else {
				v[k] = redact(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = redact(x)
		}
	}
	return v
}

// boundary reports whether a word starts at rs[i], a letter or digit that
// follows another.
func boundary(rs []rune, i int) bool {
	prev, r := rs[i-1], rs[i]
	switch {
	case unicode.IsDigit(prev) != unicode.IsDigit(r):
		return true
	case unicode.IsUpper(r) && unicode.IsLower(prev):
		return true
	case unicode.IsUpper(r) && unicode.IsUpper(prev):
		return i+1 < len(rs) && unicode.IsLower(rs[i+1])
	}
	return false
}
