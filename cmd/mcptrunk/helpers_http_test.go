package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// httpReply is what a raw POST to the HTTP downstream got back.
type httpReply struct {
	status   int
	header   http.Header
	messages []string // the JSON body, or each server-sent event's data
}

// postMCP POSTs one JSON-RPC message as a raw client does, taking JSON
// or an event stream, and reads the whole answer.
func postMCP(ctx context.Context, url, body string, headers map[string]string) (httpReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return httpReply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v // the client sends req.Host, not a Host header
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return httpReply{}, err
	}
	defer resp.Body.Close()
	r := httpReply{status: resp.StatusCode, header: resp.Header}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if len(strings.TrimSpace(string(b))) > 0 {
			r.messages = []string{strings.TrimSpace(string(b))}
		}
		return r, err
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			r.messages = append(r.messages, data)
		}
	}
	return r, sc.Err()
}

// postSSE is postMCP for a request that must succeed with 200.
func postSSE(ctx context.Context, url, body string, headers map[string]string) ([]string, error) {
	r, err := postMCP(ctx, url, body, headers)
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %q", r.status, r.messages)
	}
	return r.messages, nil
}
