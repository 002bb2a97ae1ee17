package tasks

import (
	"context"
	"encoding/json"
	"errors"
)

// Caller sends one request to a server: upstream.Client's Call.
type Caller interface {
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// maxPages bounds the pages of one server's tasks/list.
const maxPages = 100

// List reads a server's tasks/list to the end (at most maxPages pages) and
// returns its tasks as the server wrote them; on an error, those read so far.
func List(ctx context.Context, c Caller) ([]json.RawMessage, error) {
	var (
		out    []json.RawMessage
		cursor string
	)
	for range maxPages {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		res, err := c.Call(ctx, "tasks/list", params)
		if err != nil {
			return out, err
		}
		var page struct {
			Tasks      []json.RawMessage `json:"tasks"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return out, errors.New("tasks/list: the result is not a list of tasks")
		}
		out = append(out, page.Tasks...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	return out, nil
}
