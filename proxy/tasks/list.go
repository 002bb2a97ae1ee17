package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/upstream"
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

// ListAll answers tasks/list with the tasks of every ready server among
// clients that lists its tasks, read to the end (a host's own tasks are
// few, so the host gets one page), each under the id issue(server) makes of
// the server's, keeping those mine says the host may see; a server that
// fails is left out and logged.
func ListAll(ctx context.Context, clients []*upstream.Client, issue func(server string) func(string) string, mine func(server, id string) bool, logger *slog.Logger) (json.RawMessage, error) {
	all := []json.RawMessage{}
	for _, c := range clients {
		if state, _ := c.State(); state != upstream.StateReady || !Offers(c.Init().RawCapabilities, "list") {
			continue
		}
		listed, err := List(ctx, c)
		if err != nil {
			logger.Warn("listing a server's tasks failed", "server", c.Name(), "error", err)
			continue
		}
		rewrite := issue(c.Name())
		for _, task := range listed {
			if id, _ := rawjson.StringField(task, "taskId"); mine(c.Name(), id) {
				all = append(all, RewriteID(task, rewrite))
			}
		}
	}
	return json.Marshal(map[string]any{"tasks": all})
}
