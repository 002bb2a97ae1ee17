package redisconn

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Script is a Lua script run by its SHA1 (EVALSHA), sent whole (EVAL)
// only when the server does not have it yet: after a restart or SCRIPT
// FLUSH, EVAL loads it again for the calls after.
type Script struct {
	src, sha string
}

// NewScript returns the Script of src.
func NewScript(src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{src: src, sha: hex.EncodeToString(sum[:])}
}

// Run runs the script on c with keys (KEYS) and args (ARGV), and returns
// its reply as Do does.
func (s *Script) Run(ctx context.Context, c *Client, keys []string, args ...any) (any, error) {
	cmd := make([]any, 0, 3+len(keys)+len(args))
	cmd = append(cmd, "EVALSHA", s.sha, len(keys))
	for _, k := range keys {
		cmd = append(cmd, k)
	}
	cmd = append(cmd, args...)
	v, err := c.Do(ctx, cmd...)
	var e Error
	if errors.As(err, &e) && strings.HasPrefix(string(e), "NOSCRIPT") {
		cmd[0], cmd[1] = "EVAL", s.src
		v, err = c.Do(ctx, cmd...)
	}
	return v, err
}

// Bytes is the reply of Do or Run as bytes: a bulk or simple string.
func Bytes(v any, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case []byte:
		return v, nil
	case string:
		return []byte(v), nil
	}
	return nil, fmt.Errorf("redis: the reply is a %s, not a string", kind(v))
}

// Int64 is the reply of Do or Run as an integer.
func Int64(v any, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	if n, ok := v.(int64); ok {
		return n, nil
	}
	return 0, fmt.Errorf("redis: the reply is a %s, not an integer", kind(v))
}

// Int64s is the reply of Do or Run as an array of integers.
func Int64s(v any, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("redis: the reply is a %s, not an array", kind(v))
	}
	ns := make([]int64, len(a))
	for i, e := range a {
		n, ok := e.(int64)
		if !ok {
			return nil, fmt.Errorf("redis: element %d of the reply is a %s, not an integer", i+1, kind(e))
		}
		ns[i] = n
	}
	return ns, nil
}

// Strings is the reply of Do or Run as an array of strings.
func Strings(v any, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("redis: the reply is a %s, not an array", kind(v))
	}
	ss := make([]string, len(a))
	for i, e := range a {
		switch e := e.(type) {
		case []byte:
			ss[i] = string(e)
		case string:
			ss[i] = e
		default:
			return nil, fmt.Errorf("redis: element %d of the reply is a %s, not a string", i+1, kind(e))
		}
	}
	return ss, nil
}

func kind(v any) string {
	switch v := v.(type) {
	case nil:
		return "nil"
	case string:
		return "simple string"
	case []byte:
		return "bulk string"
	case int64:
		return "integer"
	case []any:
		return "array"
	case Error:
		return "error " + string(v)
	}
	return fmt.Sprintf("%T", v)
}
