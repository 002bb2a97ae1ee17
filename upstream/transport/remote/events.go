package remote

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/httpx"
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	name     string
	data     []byte
	id       string
	hasID    bool // the event (or one before it since the last dispatch) set the id
	retry    time.Duration
	hasRetry bool
}

// readSSE reads server-sent events from r and calls fn for each, until fn
// returns false, the stream ends (nil) or reading fails. An event whose
// data is empty is still reported, for its id (a server primes a client for
// resumption that way). An unfinished event at the end is discarded, as the
// SSE specification says.
func readSSE(r io.Reader, fn func(sseEvent) bool) error {
	br := bufio.NewReaderSize(r, 32<<10)
	var (
		ev      sseEvent
		data    []byte
		hasData bool
	)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if hasData || ev.hasID {
				if hasData {
					ev.data = bytes.TrimSuffix(data, []byte("\n"))
				}
				if ev.name == "" {
					ev.name = "message"
				}
				if !fn(ev) {
					return nil
				}
			}
			ev, data, hasData = sseEvent{}, nil, false
			continue
		}
		if line[0] == ':' {
			continue // comment (keep-alive)
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.name = string(value)
		case "data":
			data = append(data, value...)
			data = append(data, '\n')
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id, ev.hasID = string(value), true
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				ev.retry, ev.hasRetry = time.Duration(ms)*time.Millisecond, true
			}
		}
	}
}

// sseCursor is what a reader of a stream remembers to resume it.
type sseCursor struct {
	lastID string
	retry  time.Duration
}

func (c *sseCursor) note(ev sseEvent) {
	if ev.hasID {
		c.lastID = ev.id
	}
	if ev.hasRetry {
		c.retry = ev.retry
	}
}

// readReply reads the messages in a reply body, JSON or an event stream,
// and calls fn for each until fn returns false. cur, when not nil, tracks
// the stream's event ids.
func readReply(resp *http.Response, cur *sseCursor, fn func(msg []byte) bool) error {
	switch httpx.MediaType(resp) {
	case "text/event-stream":
		return readSSE(resp.Body, func(ev sseEvent) bool {
			if cur != nil {
				cur.note(ev)
			}
			if ev.name != "message" || len(bytes.TrimSpace(ev.data)) == 0 {
				return true
			}
			return fn(ev.data)
		})
	case "application/json":
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		body = bytes.TrimSpace(body)
		if len(body) == 0 {
			return nil
		}
		if body[0] == '[' {
			var batch []json.RawMessage
			if err := json.Unmarshal(body, &batch); err != nil {
				return &replyFormatError{fmt.Sprintf("the reply is not valid JSON: %v", err)}
			}
			for _, m := range batch {
				if !fn(m) {
					return nil
				}
			}
			return nil
		}
		fn(body)
		return nil
	case "":
		// No body to speak of (a 202 without Content-Type).
		return nil
	default:
		return &replyFormatError{fmt.Sprintf("unexpected content type %q in the reply", resp.Header.Get("Content-Type"))}
	}
}
