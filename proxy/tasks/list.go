package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/mcptrunk/mcptrunk/internal/rawjson"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Caller sends one request to a server: upstream.Caller's Call, or
// upstream.Client's for a request of the trunk's own.
type Caller interface {
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// maxPages bounds the pages of one server's tasks/list.
const maxPages = 100

// list reads a server's tasks/list to the end (at most maxPages pages) and
// returns its tasks as the server wrote them; on an error, those read so far.
func list(ctx context.Context, c Caller) ([]json.RawMessage, error) {
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
// fails is left out and logged. A 2026-07-28 server has no tasks/list: its
// tasks the host created through this trunk (created(server), the server's
// ids) are each read with tasks/get and listed as 2025-11-25 Tasks, those
// the server no longer knows left out.
func ListAll(ctx context.Context, clients []*upstream.Client, issue func(server string) func(string) string, mine func(server, id string) bool, created func(server string) []string, logger *slog.Logger) (json.RawMessage, error) {
	all := []json.RawMessage{}
	for _, c := range clients {
		state, _ := c.State()
		if state == upstream.StateReady && crosses(c.Init().RawCapabilities, false) {
			all = append(all, created2026(ctx, c, created(c.Name()), issue(c.Name()), logger)...)
		}
		if state != upstream.StateReady || !offers(c.Init().RawCapabilities, "list") {
			continue
		}
		listed, err := list(ctx, c)
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

// created2026 is the 2025-11-25 Tasks of a 2026-07-28 server's tasks ids,
// each read with tasks/get.
func created2026(ctx context.Context, c Caller, ids []string, issue func(string) string, logger *slog.Logger) []json.RawMessage {
	var out []json.RawMessage
	for _, id := range ids {
		byID, _ := json.Marshal(map[string]string{"taskId": id})
		task, err := c.Call(ctx, "tasks/get", byID)
		if err != nil {
			logger.Debug("a task the host created is no longer known to its server", "task", id, "error", err)
			continue
		}
		out = append(out, task2025(task, issue))
	}
	return out
}
