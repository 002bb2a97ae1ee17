package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/httpx"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
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
// SSE specification says. An event whose data is over limit bytes (<= 0:
// no limit) ends the stream with an *eventTooLargeError, without the event
// ever being held whole: the stream cannot be trusted to find the next
// event, and the exchange ends (a request's with an error, the GET stream
// to be opened again).
func readSSE(r io.Reader, limit int, fn func(sseEvent) bool) error {
	lr := jsonrpc.NewLineReader(r)
	lineLimit := 0
	if limit > 0 {
		lineLimit = limit + len("data: \r\n") // the field's name and the line's end
	}
	var (
		ev      sseEvent
		data    []byte
		hasData bool
	)
	for {
		line, over, err := lr.Next(lineLimit)
		if over > 0 {
			return &eventTooLargeError{size: over, limit: limit}
		}
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
			if limit > 0 && len(data)+len(value) > limit {
				return &eventTooLargeError{size: int64(len(data) + len(value)), limit: limit}
			}
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
// A JSON body or an event over limit bytes (<= 0: no limit) is an
// *eventTooLargeError, read no further than the limit.
func readReply(resp *http.Response, limit int, cur *sseCursor, fn func(msg []byte) bool) error {
	switch httpx.MediaType(resp) {
	case "text/event-stream":
		return readSSE(resp.Body, limit, func(ev sseEvent) bool {
			if cur != nil {
				cur.note(ev)
			}
			if ev.name != "message" || len(bytes.TrimSpace(ev.data)) == 0 {
				return true
			}
			return fn(ev.data)
		})
	case "application/json":
		body, err := readBounded(resp.Body, limit)
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

// replyEndWait bounds how long endReply waits for a reply stream to end
// after its answer. A variable so tests can shorten it.
var replyEndWait = 5 * time.Millisecond

// endReply closes the body of a reply whose answer was read, after reading
// what is left of it (the end of the event stream, which a server sends
// right after the answer): a body closed before its end closes its
// connection too, and the next request pays for a new one (a dial, and the
// server's accept). A server that keeps the stream open past replyEndWait,
// or sends more than a little after the answer, has it closed: what it
// sends after the answer was never read.
func endReply(body io.ReadCloser) {
	t := time.AfterFunc(replyEndWait, func() { _ = body.Close() })
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 4<<10))
	t.Stop()
	_ = body.Close()
	if replyEnded != nil {
		replyEnded()
	}
}

// replyEnded, when set (by tests, before they start a transport), is
// called each time endReply is done with a reply.
var replyEnded func()

// eventTooLargeError is a message from the server over the trunk's read
// limit (trunk.maxMessageBytes).
type eventTooLargeError struct {
	size  int64 // bytes read of it, at least limit+1
	limit int
}

func (e *eventTooLargeError) Error() string {
	return fmt.Sprintf("the server sent a message of %d bytes or more, over the %d bytes the trunk reads (trunk.maxMessageBytes)", e.size, e.limit)
}

// readBounded reads r whole, failing once it is over limit bytes (<= 0: no
// limit) without reading further.
func readBounded(r io.Reader, limit int) ([]byte, error) {
	if limit <= 0 {
		return io.ReadAll(r)
	}
	body, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err == nil && len(body) > limit {
		return nil, &eventTooLargeError{size: int64(len(body)), limit: limit}
	}
	return body, err
}
